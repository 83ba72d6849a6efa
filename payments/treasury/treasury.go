// Package treasury owns each environment's conversion desk (issue 27, DESIGN.md section
// 10): the ledger's system:fx accounts promise conversions to merchants at quoted or locked
// rates, and the treasury executes them on the environment's own book from an engine
// account of its own, so the desk's currency risk does not grow unhedged.
//
//   - The ledger writes a hedge intent (table treasury_intents) in the same transaction as
//     every posting that moves system:fx (ledger.Post): what the treasury must buy or sell
//     on the book. Deposits, offramps and their reversals need no call of their own, and no
//     conversion can reach the ledger without its hedge.
//   - Desk.Hedge, every Window, nets each asset's open position (the intents minus what
//     was filled) into one IOC limit order inside the quoting band, from the treasury's
//     engine account. The order's row (status placing, its engine order id and the
//     account's balances before it) is committed before the order is submitted, so a
//     restart settles that row by its id and never places a second order for it: exactly
//     one hedge per position, never none (the intent is durable), never two. What the book
//     cannot fill stays open and is retried next round; nothing the merchant was promised
//     changes (the merchant's rate is the ledger's; the difference is the treasury's result).
//   - Limits: an open (unhedged) position per asset; Covers tells the quotes whether the
//     treasury can take one more conversion when the book's band is too thin, and an
//     exhausted treasury makes a quote 503 (as does a book that cannot be read). Status
//     and the collector expose the positions, results and alerts (open position past
//     AlertAt of its limit, inventory short of the next hedge).
//   - Verify proves that the ledger's system:fx equals the treasury's engine position
//     (what its hedges filled, as projected from the journal) plus what is in flight.
//
// The engine is used through its public API only: credits (the inventory, by transfer id),
// IOC limit orders with an order id and a client order id, Order and Balances.
package treasury

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/persistence/postgres"
)

// Account is the treasury's engine account (in each environment's engine).
var Account = engine.AccountID(uuid.NewSHA1(uuid.NameSpaceOID, []byte("svc/treasury")))

// Assets are the assets the treasury hedges against NGN.
var Assets = []money.Asset{money.USDT, money.USDC, money.USD}

// Exchange is what the treasury uses of one environment's engine; *engine.Engine is one.
type Exchange interface {
	Submit(cmd *engine.Command) (engine.Result, error)
	Order(acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool)
	Balances(acct engine.AccountID) engine.Balances
	Pair(symbol string) (engine.PairConfig, bool)
}

var _ Exchange = (*engine.Engine)(nil)

// contextReader is an Exchange whose reads ask over the network (a remote engine's client,
// cluster/enginerpc.Client) and can fail: its plain Order and Balances read a silent
// engine as "not held" and zeros, which settlePlacing would take for an order filled and
// forgotten. The local engine reads memory and is not one.
type contextReader interface {
	OrderContext(ctx context.Context, acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool, error)
	BalancesContext(ctx context.Context, acct engine.AccountID) (engine.Balances, error)
}

// orderOf is the treasury account's order id as x holds it, within ctx; err: x did not
// answer.
func orderOf(ctx context.Context, x Exchange, id engine.OrderID) (engine.OrderView, bool, error) {
	if r, ok := x.(contextReader); ok {
		return r.OrderContext(ctx, Account, id)
	}
	v, ok := x.Order(Account, id)
	if err := failStopped(x); err != nil { // checked after the read: it may have fail-stopped before it
		return engine.OrderView{}, false, err
	}
	return v, ok, nil
}

// balancesOf is the treasury account's balances in x, within ctx; err: x did not answer.
func balancesOf(ctx context.Context, x Exchange) (engine.Balances, error) {
	if r, ok := x.(contextReader); ok {
		return r.BalancesContext(ctx, Account)
	}
	bal := x.Balances(Account)
	if err := failStopped(x); err != nil { // checked after the read: it may have fail-stopped before it
		return engine.Balances{}, err
	}
	return bal, nil
}

// failStopped is the local engine's Err: once it has fail-stopped after a journal error,
// its memory may hold effects the journal never got (a hedge's fill that a restart from
// snapshot + journal removes), so nothing read from it may decide money. A row settled
// from such a fill would say hedged what the durable books never traded, and the open
// position would be short by the whole hedge after the restart. The remote engine's client
// is a contextReader and asked with ErrContext instead (its Err waits without a deadline).
func failStopped(x Exchange) error {
	if _, ok := x.(contextReader); ok {
		return nil
	}
	if f, ok := x.(interface{ Err() error }); ok {
		return f.Err()
	}
	return nil
}

// submitOn runs cmd (a hedge order, a credit) on x, bounded by ctx where x takes one (a
// remote engine's client: a timeout leaves the outcome unknown, which an order's row
// settles next round by its id and a credit's retry applies once by its transfer id); the
// local engine answers once its journal has the command.
func submitOn(ctx context.Context, x Exchange, cmd *engine.Command) (engine.Result, error) {
	if cx, ok := x.(interface {
		SubmitContext(context.Context, *engine.Command) (engine.Result, error)
	}); ok {
		return cx.SubmitContext(ctx, cmd)
	}
	return x.Submit(cmd)
}

// reachable asks a remote engine, within ctx, whether it can be served from (connected,
// not fail-stopped, its pairs known: Pair then reads memory instead of asking with the
// client's own ReadTimeout); the local engine, whether it has fail-stopped (failStopped:
// its memory is then no ground to settle or place from, and the round ends with
// engine.ErrUnavailable, its rows left placing until a restart recovers the durable state).
func reachable(ctx context.Context, x Exchange) error {
	if r, ok := x.(interface{ ErrContext(context.Context) error }); ok {
		return r.ErrContext(ctx)
	}
	return failStopped(x)
}

// minRound is the shortest deadline of a round (Desk.round): a window as short as svcd
// allows (100 ms) would otherwise fail rounds on a loaded database that answers in 200 ms.
const minRound = time.Second

// round is how long one round (Hedge, or Watch's refresh) may take, engine and database
// included: one Window (at least minRound). A silent remote engine so costs one bounded
// wait per round instead of the client's ReadTimeout for every read in it, one after
// another, and the round ends about when the next is due, which retries.
func (d *Desk) round() time.Duration { return max(d.cfg.Window, minRound) }

// ErrLeftPlacing: a round found hedge orders whose outcome it could not settle (the engine
// still runs one, or its book is gone), so it placed and credited nothing; the next round
// looks again. A new order or credit before they settle would move the balances their
// fills are measured by.
var ErrLeftPlacing = errors.New("treasury: hedge orders are left placing; nothing is placed until they settle")

// Prices is where the hedges' limits come from; *rates.Service is one.
type Prices interface {
	Reference(env string, asset money.Asset) (rates.Reference, bool)
	Band() *big.Rat
}

var _ Prices = (*rates.Service)(nil)

// Env is one environment's treasury.
type Env struct {
	Exchange Exchange
	// Limits is the largest open (unhedged) position per asset, in minor units of the
	// asset, either way; an asset without one cannot be quoted by the treasury.
	Limits map[money.Asset]int64
	// Inventory is what the treasury's engine account is credited with (engine units per
	// asset, NGN in 1e-4): at start, what is missing up to these totals is credited once.
	// Only for an environment whose engine money is not real (the sandbox). Empty: the
	// account is operator-funded (live: `svc treasury fund`, see Fund), and the treasury
	// quotes only what that inventory can hedge (Covers).
	Inventory map[engine.Asset]int64
}

// Config is what the desk is built with.
type Config struct {
	Envs   map[string]Env
	Prices Prices
	// Window is how often open positions are netted and hedged (default 2 s). It is also
	// each round's deadline (at least a second): a round that cannot finish by then, its
	// engine silent or its database slow, fails and the next one retries.
	Window time.Duration
	// AlertAt is the share of a limit at which the desk warns (default 0.8).
	AlertAt *big.Rat
	Logger  *slog.Logger
	Now     func() time.Time
}

// DefaultWindow is Config.Window when unset.
const DefaultWindow = 2 * time.Second

// Desk runs the treasuries. Safe for concurrent use.
type Desk struct {
	pool *pgxpool.Pool
	cfg  Config

	mu     sync.Mutex
	open   map[string]map[money.Asset]int64 // env -> asset -> open position, refreshed by Hedge
	funded map[string]bool                  // env -> sandbox top-ups written since start
	funds  map[string]*Funding              // env -> the treasury account's funding rows
	// settled is, per env, whether no row is left placing (checked at the first round and
	// after a failed one).
	settled map[string]bool
	rounds  map[string]int // env -> rounds since start (the sandbox's funding check)
	// capacity is, per operator-funded env and asset, how much the inventory can hedge
	// (minor units): [0] to buy (NGN at the band's edge), [1] to sell; refreshed each window.
	capacity map[string]map[money.Asset][2]int64
	stats    map[string]map[money.Asset]*counters

	// crash, in tests, stops a round at a stage as a kill would (or freezes the network to
	// a remote engine there and returns nil).
	crash func(stage string) error
}

type counters struct {
	orders, rejected uint64
	lastOutcome      string
}

// New returns the desk.
func New(pool *pgxpool.Pool, cfg Config) (*Desk, error) {
	if cfg.Prices == nil {
		return nil, errors.New("treasury: no prices")
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.AlertAt == nil {
		cfg.AlertAt = big.NewRat(8, 10)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	funds := map[string]*Funding{}
	for env, e := range cfg.Envs {
		if e.Exchange == nil {
			return nil, fmt.Errorf("treasury: %s has no exchange", env)
		}
		f, err := NewFunding(pool, e.Exchange, env, FundTreasury)
		if err != nil {
			return nil, err
		}
		f.now = cfg.Now
		funds[env] = f
		for a, l := range e.Limits {
			if l < 0 {
				return nil, fmt.Errorf("treasury: %s limit of %s is negative", env, a)
			}
		}
	}
	return &Desk{pool: pool, cfg: cfg, open: map[string]map[money.Asset]int64{}, funded: map[string]bool{}, funds: funds, settled: map[string]bool{}, rounds: map[string]int{},
		capacity: map[string]map[money.Asset][2]int64{}, stats: map[string]map[money.Asset]*counters{}}, nil
}

// Covers implements rates.Treasury: whether env's treasury can take a conversion of units
// of asset on side (rates.Buy: the customer buys the asset, the treasury must buy it on
// the book) without its open position passing the asset's limit.
func (d *Desk) Covers(env string, asset money.Asset, side string, units int64) (covered, configured bool) {
	e, ok := d.cfg.Envs[env]
	if !ok {
		return false, false
	}
	limit, ok := e.Limits[asset]
	if !ok {
		return false, true
	}
	d.mu.Lock()
	open := d.open[env][asset]
	capacity, capped := d.capacity[env][asset]
	d.mu.Unlock()
	if side == rates.Buy {
		open += units
	} else {
		open -= units
	}
	if abs(open) > limit {
		return false, true
	}
	if len(e.Inventory) > 0 { // sandbox money: the limit is the bound
		return true, true
	}
	// Operator-funded: the inventory must pay for the hedge too (none seen yet: nothing).
	switch {
	case !capped:
		return false, true
	case open > 0:
		return open <= capacity[0], true
	default:
		return -open <= capacity[1], true
	}
}

// measure refreshes what env's inventory can hedge (operator-funded envs only): to buy,
// the NGN available at the band's edge above the reference; to sell, the asset available.
// An engine that does not answer within ctx leaves no measure, so the treasury quotes
// nothing until one succeeds (Covers), rather than reading the silence as zeros or keeping
// an inventory it cannot see.
func (d *Desk) measure(ctx context.Context, env string, e Env) {
	if len(e.Inventory) > 0 {
		return
	}
	bal, err := balancesOf(ctx, e.Exchange)
	if err != nil {
		d.mu.Lock()
		delete(d.capacity, env)
		d.mu.Unlock()
		return
	}
	out := map[money.Asset][2]int64{}
	for a := range e.Limits {
		pc, _, ok := pairOf(e.Exchange, a)
		ref, ok2 := d.cfg.Prices.Reference(env, a)
		if !ok || !ok2 || ref.Price <= 0 || a.Places() != pc.Base.Decimals() {
			continue
		}
		// NGN engine units (1e-4) per minor unit of a at the edge: ref kobo * 100 * (1+band) / 10^places.
		per := new(big.Rat).Mul(big.NewRat(ref.Price*100, pow10(a.Places())), new(big.Rat).Add(big.NewRat(1, 1), d.cfg.Prices.Band()))
		buy := new(big.Rat).Quo(big.NewRat(bal[engine.NGN].Available, 1), per)
		q := new(big.Int).Quo(buy.Num(), buy.Denom())
		b := int64(0)
		if q.IsInt64() {
			b = q.Int64()
		}
		out[a] = [2]int64{b, bal[pc.Base].Available}
	}
	d.mu.Lock()
	d.capacity[env] = out
	d.mu.Unlock()
}

var _ rates.Treasury = (*Desk)(nil)

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Run hedges every environment every Window until ctx ends.
func (d *Desk) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.Window)
	defer t.Stop()
	for {
		for env := range d.cfg.Envs {
			if err := d.Hedge(ctx, env); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("treasury: hedge round failed; retried next window", "env", env, "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Watch refreshes the open positions Covers answers from every Window until ctx ends,
// without hedging: for a process whose engine runs elsewhere (the desk of the engine's
// process hedges).
func (d *Desk) Watch(ctx context.Context) {
	t := time.NewTicker(d.cfg.Window)
	defer t.Stop()
	for {
		for env := range d.cfg.Envs {
			rctx, cancel := context.WithTimeout(ctx, d.round())
			d.refreshOpen(rctx, env)
			d.measure(rctx, env, d.cfg.Envs[env])
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refreshOpen reads env's open positions for Covers; a read that fails keeps the last ones
// (the next round or Watch's tick reads again).
func (d *Desk) refreshOpen(ctx context.Context, env string) {
	if open, err := OpenPositions(ctx, d.pool, env); err == nil {
		d.mu.Lock()
		d.open[env] = open
		d.mu.Unlock()
	}
}

// Hedge runs one round for env: it settles any order a previous process left placing,
// credits missing inventory, then places one IOC order per asset for its open position.
// The round ends by its deadline (one Window, at least a second): an engine or database
// that does not answer by then fails the round, leaving any order it placed to be settled
// by its row next round, and the first engine read that fails ends it.
func (d *Desk) Hedge(ctx context.Context, env string) error {
	e, ok := d.cfg.Envs[env]
	if !ok {
		return fmt.Errorf("treasury: no treasury in %s", env)
	}
	ctx, cancel := context.WithTimeout(ctx, d.round())
	defer cancel()
	if err := reachable(ctx, e.Exchange); err != nil {
		return fmt.Errorf("treasury: the engine of %s: %w", env, err)
	}
	// Rows left placing exist only after a restart or a failed submit: the query runs then,
	// not every window (issue 27 item 6: the loop's own cost).
	d.mu.Lock()
	settled := d.settled[env]
	d.mu.Unlock()
	if !settled {
		left, err := d.settlePlacing(ctx, env, e.Exchange)
		if err != nil {
			return err
		}
		if left > 0 {
			d.refreshOpen(ctx, env) // the quotes still see the positions (Covers)
			return fmt.Errorf("%w (%s: %d)", ErrLeftPlacing, env, left)
		}
		d.mu.Lock()
		d.settled[env] = true
		d.mu.Unlock()
	}
	if err := d.fund(ctx, env, e); err != nil {
		return err
	}
	if err := d.writeLimits(ctx, env, e); err != nil {
		return err
	}
	open, err := OpenPositions(ctx, d.pool, env)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.open[env] = open
	d.mu.Unlock()
	placed := false
	for _, a := range Assets {
		if open[a] == 0 {
			continue
		}
		ok, err := d.hedge(ctx, env, e, a, open[a])
		if err != nil {
			d.mu.Lock()
			d.settled[env] = false // its row may be left placing
			d.mu.Unlock()
			return err
		}
		placed = placed || ok
	}
	if placed { // else nothing the positions depend on changed since they were read
		if open, err = OpenPositions(ctx, d.pool, env); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.open[env] = open
	d.mu.Unlock()
	d.measure(ctx, env, e)
	d.alert(env, e, open)
	return nil
}

// OpenPositions is each asset's open position in env: intents minus fills of settled
// orders (minor units of the asset, + to buy).
func OpenPositions(ctx context.Context, q postgres.Querier, env string) (map[money.Asset]int64, error) {
	rows, err := q.Query(ctx, `select asset, sum(qty)::bigint from (
			select asset, qty from treasury_intents where environment = $1 and asset <> 'NGN'
			union all select asset, -filled from treasury_orders where environment = $1 and status = 'done') x
		group by asset`, env)
	if err != nil {
		return nil, fmt.Errorf("treasury positions: %w", err)
	}
	defer rows.Close()
	out := map[money.Asset]int64{}
	for rows.Next() {
		var a string
		var v int64
		if err := rows.Scan(&a, &v); err != nil {
			return nil, err
		}
		out[money.Asset(a)] = v
	}
	return out, rows.Err()
}

// symbol is the book of asset; the pair's base multiplier converts lots to engine units.
func pairOf(x Exchange, asset money.Asset) (engine.PairConfig, int64, bool) {
	pc, ok := x.Pair(rates.Symbol(asset))
	if !ok || pc.Quote != engine.NGN || pc.PriceDecimals > 2 {
		return engine.PairConfig{}, 0, false
	}
	return pc, pow10(pc.Base.Decimals() - pc.QtyDecimals), true
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// hedge places one IOC order for asset's open position in env; placed says whether it did.
func (d *Desk) hedge(ctx context.Context, env string, e Env, asset money.Asset, open int64) (placed bool, err error) {
	pc, baseMult, ok := pairOf(e.Exchange, asset)
	if !ok {
		return false, nil
	}
	ref, ok := d.cfg.Prices.Reference(env, asset)
	if !ok {
		return false, nil
	}
	// The ledger's minor units of asset are the engine's (USDT, USDC 6; USD 2).
	if asset.Places() != pc.Base.Decimals() {
		return false, nil
	}
	side := engine.Buy
	if open < 0 {
		side = engine.Sell
	}
	// The limit is the edge of the band: the order takes any depth inside it, never beyond.
	band := d.cfg.Prices.Band()
	f := new(big.Rat).Add(big.NewRat(1, 1), band)
	mode := money.Down
	if side == engine.Sell {
		f, mode = new(big.Rat).Sub(big.NewRat(1, 1), band), money.Up
	}
	lim := new(big.Rat).Mul(big.NewRat(ref.Price, 1), f)
	kobo, err := money.Ratio(lim.Num(), lim.Denom(), mode)
	if err != nil || kobo <= 0 {
		return false, nil
	}
	price := kobo / pow10(2-pc.PriceDecimals)
	if r := price % int64(pc.TickSize); r != 0 {
		price -= r
		if side == engine.Sell {
			price += int64(pc.TickSize)
		}
	}
	lots := abs(open) / baseMult
	lots -= lots % int64(pc.StepSize)
	bal, err := balancesOf(ctx, e.Exchange)
	if err != nil { // zeros would size no order and hide the engine's silence: the round ends
		return false, fmt.Errorf("treasury balances: %w", err)
	}
	quoteMult := pow10(engine.NGN.Decimals() - pc.PriceDecimals - pc.QtyDecimals)
	if side == engine.Buy { // the inventory caps the order: NGN to pay at the limit
		if afford := bal[engine.NGN].Available / (price * quoteMult); afford < lots {
			lots = afford - afford%int64(pc.StepSize)
		}
	} else if have := bal[pc.Base].Available / baseMult; have < lots {
		lots = have - have%int64(pc.StepSize)
	}
	if lots < int64(pc.MinQty) || lots*price*quoteMult < pc.MinNotional {
		return false, nil // too small to trade (or no inventory): it waits, netted with what comes
	}
	id := uuid.Must(uuid.NewV7())
	signed := lots * baseMult
	if side == engine.Sell {
		signed = -signed
	}
	if _, err := d.pool.Exec(ctx, `insert into treasury_orders (id, environment, asset, qty, limit_price, status, base_before, ngn_before)
		values ($1, $2, $3, $4, $5, 'placing', $6, $7)`, id, env, string(asset), signed, price, bal[pc.Base].Available, bal[engine.NGN].Available); err != nil {
		return false, fmt.Errorf("treasury order: %w", err)
	}
	if err := d.stop("row"); err != nil {
		return true, err
	}
	return true, d.submit(ctx, env, e.Exchange, placing{id: id, asset: asset, qty: signed, price: price,
		baseBefore: bal[pc.Base].Available, ngnBefore: bal[engine.NGN].Available})
}

func (d *Desk) stop(stage string) error {
	if d.crash == nil {
		return nil
	}
	return d.crash(stage)
}

// placing is a treasury_orders row not yet settled.
type placing struct {
	id                    uuid.UUID
	asset                 money.Asset
	qty, price            int64
	baseBefore, ngnBefore int64
}

// ClientOrderID is the client order id of the hedge order with engine order id id.
func ClientOrderID(id uuid.UUID) string { return "treasury-" + id.String() }

// submit places p's order (again, after a restart: the engine answers a duplicate with the
// first one's state) and settles its row from the account's balance changes.
func (d *Desk) submit(ctx context.Context, env string, x Exchange, p placing) error {
	pc, baseMult, ok := pairOf(x, p.asset)
	if !ok {
		return fmt.Errorf("treasury: no %s book", p.asset)
	}
	side, lots := engine.Buy, p.qty/baseMult
	if p.qty < 0 {
		side, lots = engine.Sell, -lots
	}
	res, err := submitOn(ctx, x, &engine.Command{Kind: engine.CmdPlace, Time: d.cfg.Now().UnixNano(), Account: Account,
		Symbol: pc.Symbol, OrderID: engine.OrderID(p.id), ClientOrderID: ClientOrderID(p.id), Side: side,
		Type: engine.Limit, TIF: engine.IOC, Price: engine.Price(p.price), Qty: engine.Qty(lots)})
	if err != nil {
		return fmt.Errorf("treasury order %s: %w", p.id, err) // unknown outcome: settled next round by its id
	}
	if err := d.stop("submitted"); err != nil {
		return err
	}
	outcome := res.Code.String()
	if res.Code == engine.OK || res.Code == engine.RejectDuplicateOrderID || res.Code == engine.RejectDuplicateClientOrderID {
		outcome = fmt.Sprintf("%s %s", res.State, res.Reason)
	}
	bal, err := balancesOf(ctx, x)
	if err != nil { // zeros from a silent engine would be a wrong fill: the row stays placing
		return fmt.Errorf("treasury settle %s: %w", p.id, err)
	}
	return d.settle(ctx, env, x, p, bal, outcome)
}

// settle writes p's fill: the change from p's row to bal, the account's balances read
// after p's order closed (the treasury's account moves only by its own orders, one at a
// time, and credits made before its orders).
func (d *Desk) settle(ctx context.Context, env string, x Exchange, p placing, bal engine.Balances, outcome string) error {
	pc, _, _ := pairOf(x, p.asset)
	filled, ngn := bal[pc.Base].Available-p.baseBefore, bal[engine.NGN].Available-p.ngnBefore
	if _, err := d.pool.Exec(ctx, `update treasury_orders set status = 'done', filled = $2, ngn = $3, outcome = $4, done_at = now()
		where id = $1 and status = 'placing'`, p.id, filled, ngn, outcome); err != nil {
		return fmt.Errorf("treasury settle %s: %w", p.id, err)
	}
	d.mu.Lock()
	c := d.counter(env, p.asset)
	c.orders++
	c.lastOutcome = outcome
	if filled == 0 {
		c.rejected++
	}
	d.mu.Unlock()
	if filled == 0 {
		d.cfg.Logger.Info("treasury: hedge not filled; the position waits for the next window", "env", env, "asset", p.asset,
			"qty", p.qty, "limit", p.price, "outcome", outcome)
	}
	return nil
}

func (d *Desk) counter(env string, a money.Asset) *counters {
	m := d.stats[env]
	if m == nil {
		m = map[money.Asset]*counters{}
		d.stats[env] = m
	}
	c := m[a]
	if c == nil {
		c = &counters{}
		m[a] = c
	}
	return c
}

// settlePlacing settles the rows a previous process (or a failed submit) left placing: an
// order the engine still knows is settled from the balances; one it does not know was
// either never placed (balances unchanged: it is placed now, with the same ids) or
// executed and forgotten (balances changed: settled from them). left counts the rows it
// had to leave (an order still open, a book gone); an engine that does not answer ends it
// with the error, its row left placing: silence says nothing of the order, and zeros read
// from it would be a fill.
//
// A row's balances are read once, after its order is seen closed (or not held), and both
// decide and measure its fill: settle reading them again would see the same balances,
// since only this desk's own orders and credits move the account and a round places or
// credits nothing before every row is settled (ErrLeftPlacing), and one more read was one
// more wait on a remote engine and one more way for the row to be left.
func (d *Desk) settlePlacing(ctx context.Context, env string, x Exchange) (left int, err error) {
	rows, err := d.pool.Query(ctx, `select id, asset, qty, limit_price, base_before, ngn_before from treasury_orders
		where environment = $1 and status = 'placing' order by id`, env)
	if err != nil {
		return 0, fmt.Errorf("treasury placing: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (placing, error) {
		var p placing
		var a string
		err := r.Scan(&p.id, &a, &p.qty, &p.price, &p.baseBefore, &p.ngnBefore)
		p.asset = money.Asset(a)
		return p, err
	})
	if err != nil {
		return 0, fmt.Errorf("treasury placing: %w", err)
	}
	for _, p := range ps {
		pc, _, ok := pairOf(x, p.asset)
		if !ok {
			left++
			continue
		}
		v, known, err := orderOf(ctx, x, engine.OrderID(p.id))
		if err != nil {
			return left, fmt.Errorf("treasury placing %s: the engine did not say: %w", p.id, err)
		}
		if known && !v.State.Closed() {
			left++
			continue // an IOC order closes in its own batch; look again next round
		}
		if err := d.stop("order read"); err != nil {
			return left, err
		}
		bal, err := balancesOf(ctx, x)
		if err != nil {
			return left, fmt.Errorf("treasury placing %s: no balances from the engine: %w", p.id, err)
		}
		switch {
		case known:
			err = d.settle(ctx, env, x, p, bal, fmt.Sprintf("%s %s (after a restart)", v.State, v.Reason))
		case bal[pc.Base].Available != p.baseBefore || bal[engine.NGN].Available != p.ngnBefore:
			err = d.settle(ctx, env, x, p, bal, "filled, then forgotten by the engine (after a restart)")
		default:
			err = d.submit(ctx, env, x, p)
		}
		if err != nil {
			return left, err
		}
	}
	return left, nil
}

// fund credits env's treasury account with its funding rows: in the sandbox, first (once
// per process) a row for what is missing up to Env.Inventory; in live, the operator's rows
// (Fund). A row's id is its engine transfer id, so the engine applies each once.
func (d *Desk) fund(ctx context.Context, env string, e Env) error {
	if len(e.Inventory) > 0 {
		// The sandbox funds itself at the first round; a funding by the command is picked
		// up within 15 windows instead of costing a query every window.
		d.mu.Lock()
		done := d.funded[env]
		if done {
			d.rounds[env]++
		}
		skip := done && d.rounds[env]%15 != 0
		d.mu.Unlock()
		if skip {
			return nil
		}
		if !done {
			if err := d.topUp(ctx, env, e.Inventory); err != nil {
				return err
			}
			d.mu.Lock()
			d.funded[env] = true
			d.mu.Unlock()
		}
	}
	return d.funds[env].Credit(ctx)
}

// topUp writes a sandbox funding row for what env's treasury rows are missing up to
// inventory, per asset (one query for what they hold).
func (d *Desk) topUp(ctx context.Context, env string, inventory map[engine.Asset]int64) error {
	rows, err := d.pool.Query(ctx, `select asset, coalesce(sum(amount), 0)::bigint from treasury_funding
		where environment = $1 and account = 'treasury' group by asset`, env)
	if err != nil {
		return fmt.Errorf("treasury funding: %w", err)
	}
	have := map[string]int64{}
	for rows.Next() {
		var a string
		var v int64
		if err := rows.Scan(&a, &v); err != nil {
			rows.Close()
			return fmt.Errorf("treasury funding: %w", err)
		}
		have[a] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("treasury funding: %w", err)
	}
	for asset, target := range inventory {
		if h := have[asset.String()]; h < target {
			if _, err := d.pool.Exec(ctx, `insert into treasury_funding (id, environment, asset, amount) values ($1, $2, $3, $4)`,
				uuid.Must(uuid.NewV7()), env, asset.String(), target-h); err != nil {
				return fmt.Errorf("treasury funding: %w", err)
			}
		}
	}
	return nil
}

// writeLimits records env's limits for `svc treasury`, once per process.
func (d *Desk) writeLimits(ctx context.Context, env string, e Env) error {
	d.mu.Lock()
	_, done := d.open[env]
	d.mu.Unlock()
	if done {
		return nil
	}
	for a, l := range e.Limits {
		if _, err := d.pool.Exec(ctx, `insert into treasury_limits (environment, asset, open_limit) values ($1, $2, $3)
			on conflict (environment, asset) do update set open_limit = excluded.open_limit, updated_at = now()`, env, string(a), l); err != nil {
			return fmt.Errorf("treasury limits: %w", err)
		}
	}
	return nil
}

// alert warns when an open position passes AlertAt of its limit, or the inventory cannot
// pay for the hedge it needs.
func (d *Desk) alert(env string, e Env, open map[money.Asset]int64) {
	for _, a := range Assets {
		o, l := abs(open[a]), e.Limits[a]
		if l > 0 && big.NewRat(o, l).Cmp(d.cfg.AlertAt) >= 0 {
			d.cfg.Logger.Warn("treasury: open position near its limit; quotes the book cannot price will be refused at the limit",
				"env", env, "asset", a, "open", money.Format(a, open[a]), "limit", money.Format(a, l))
		}
	}
}

// Alerts lists env's limit alerts now (for metrics and `svc treasury`).
func (d *Desk) Alerts(env string) []string {
	e := d.cfg.Envs[env]
	d.mu.Lock()
	open := d.open[env]
	d.mu.Unlock()
	var out []string
	for _, a := range Assets {
		o, l := abs(open[a]), e.Limits[a]
		if l > 0 && big.NewRat(o, l).Cmp(d.cfg.AlertAt) >= 0 {
			out = append(out, fmt.Sprintf("%s open %s of limit %s", a, money.Format(a, open[a]), money.Format(a, l)))
		}
	}
	return out
}
