package treasury

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/persistence/postgres"
)

// Funded accounts: the treasury_funding rows' account column.
const (
	FundTreasury = "treasury"
	FundMaker    = "market-maker"
)

// accountOf is the engine account of a funded account's name.
func accountOf(name string) (engine.AccountID, bool) {
	switch name {
	case FundTreasury:
		return Account, true
	case FundMaker:
		return MakerAccount, true
	}
	return engine.AccountID{}, false
}

// Book is the merchant id of the treasury's own books in the ledger: the operator's
// fundings of the treasury and the market maker are posted there, never in a merchant's.
var Book = uuid.UUID(Account)

// FundRequest is one operator funding (`svc treasury fund`).
type FundRequest struct {
	Env     string // "sandbox" or "live"
	Account string // FundTreasury or FundMaker
	Amount  money.Amount
	// Reference names the funding (the operator's transfer or ticket id): the same
	// reference funds once, however often the command is run.
	Reference string
	Note      string
}

// ErrFundingConflict: the reference was used for another funding.
var ErrFundingConflict = errors.New("treasury: the reference was used for another funding")

// Fund records an operator funding in one transaction: the ledger moves the amount from
// system:external (the operator's own money entering the books) to system:trading (money
// on the exchange) in the treasury's books (Book), and a treasury_funding row tells the
// process that runs env's engine to credit the account's engine balance by that amount
// (the row's id is the engine transfer id: a credit repeated after a restart is applied
// once). Nothing is credited here: a funding is applied by the engine's process within a
// window (Funding.Credit), so the command needs only the database, never the engine.
// replayed is true when the reference was already recorded with the same funding.
func Fund(ctx context.Context, pool *pgxpool.Pool, r FundRequest) (id uuid.UUID, replayed bool, err error) {
	if _, ok := accountOf(r.Account); !ok {
		return uuid.Nil, false, fmt.Errorf("treasury: account %q: want %s or %s", r.Account, FundTreasury, FundMaker)
	}
	if r.Env != "sandbox" && r.Env != "live" {
		return uuid.Nil, false, fmt.Errorf("treasury: environment %q: want sandbox or live", r.Env)
	}
	ea, units, err := engineUnits(r.Amount)
	if err != nil {
		return uuid.Nil, false, err
	}
	if r.Reference == "" || len(r.Reference) > 120 {
		return uuid.Nil, false, errors.New("treasury: the funding needs a reference of 1 to 120 bytes")
	}
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		var prev struct {
			id      uuid.UUID
			account string
			asset   string
			amount  int64
		}
		err := tx.QueryRow(ctx, `select id, account, asset, amount from treasury_funding where environment = $1 and reference = $2`,
			r.Env, r.Reference).Scan(&prev.id, &prev.account, &prev.asset, &prev.amount)
		switch {
		case err == nil:
			if prev.account != r.Account || prev.asset != ea.String() || prev.amount != units {
				return ErrFundingConflict
			}
			id, replayed = prev.id, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		id = uuid.Must(uuid.NewV7())
		desc := fmt.Sprintf("Operator funding of the %s's engine account", r.Account)
		if r.Note != "" {
			desc += ": " + r.Note
		}
		if _, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: Book, Environment: r.Env,
			Reference: "treasury-funding:" + r.Reference, Kind: "treasury.fund", Description: desc,
			Postings: ledger.Move(ledger.System(ledger.External), ledger.System(ledger.Trading), r.Amount),
			Metadata: map[string]string{"account": r.Account, "funding_id": id.String()}}); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `insert into treasury_funding (id, environment, asset, amount, account, reference) values ($1, $2, $3, $4, $5, $6)`,
			id, r.Env, ea.String(), units, r.Account, r.Reference)
		return err
	})
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("treasury fund: %w", err)
	}
	return id, replayed, nil
}

// engineUnits converts a ledger amount (minor units) to the engine's units of its asset.
func engineUnits(a money.Amount) (engine.Asset, int64, error) {
	ea, ok := engine.ParseAsset(string(a.Asset))
	if !ok {
		return 0, 0, fmt.Errorf("treasury: the engine has no asset %s", a.Asset)
	}
	if a.Minor <= 0 {
		return 0, 0, errors.New("treasury: a funding must be positive")
	}
	shift := ea.Decimals() - a.Asset.Places()
	if shift < 0 {
		return 0, 0, fmt.Errorf("treasury: %s has more places in the ledger than in the engine", a.Asset)
	}
	m := pow10(shift)
	if a.Minor > (1<<62)/m {
		return 0, 0, errors.New("treasury: the funding is too large")
	}
	return ea, a.Minor * m, nil
}

// Funding credits one environment's funding rows of one account to its engine, each row
// once per process (the engine applies a transfer id once, so a row credited again after a
// restart changes nothing). Safe for concurrent use: the mutex guards only the maps, never
// a call to the engine, so a slow engine holds up only the caller crediting a row, not
// Total nor another caller's Credit (which leaves a row in flight to its caller).
type Funding struct {
	pool    *pgxpool.Pool
	x       Exchange
	env     string
	account string
	id      engine.AccountID
	now     func() time.Time

	mu        sync.Mutex
	credited  map[uuid.UUID]bool
	crediting map[uuid.UUID]bool     // rows a Credit is submitting now (claimed under mu)
	total     map[engine.Asset]int64 // what the credited rows added, per asset
}

// NewFunding returns the funding of account (FundTreasury or FundMaker) in env on x.
func NewFunding(pool *pgxpool.Pool, x Exchange, env, account string) (*Funding, error) {
	id, ok := accountOf(account)
	if !ok {
		return nil, fmt.Errorf("treasury: account %q: want %s or %s", account, FundTreasury, FundMaker)
	}
	return &Funding{pool: pool, x: x, env: env, account: account, id: id, now: time.Now,
		credited: map[uuid.UUID]bool{}, crediting: map[uuid.UUID]bool{}, total: map[engine.Asset]int64{}}, nil
}

// Credit credits the rows not yet credited by this process. The table holds a row per
// funding (a handful), so reading it each window costs one small query. A row another
// Credit is submitting is left to it: this call may return before that row is credited
// (Total then counts it a little later: it never counts more than was credited), rather
// than wait behind a slow engine.
func (f *Funding) Credit(ctx context.Context) error {
	rows, err := f.pool.Query(ctx, `select id, asset, amount from treasury_funding where environment = $1 and account = $2 order by id`,
		f.env, f.account)
	if err != nil {
		return fmt.Errorf("treasury funding: %w", err)
	}
	type credit struct {
		id     uuid.UUID
		asset  string
		amount int64
		a      engine.Asset // asset parsed, once claimed
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (credit, error) {
		var c credit
		return c, r.Scan(&c.id, &c.asset, &c.amount)
	})
	if err != nil {
		return fmt.Errorf("treasury funding: %w", err)
	}
	// Claim the rows to credit under mu, submit them without it, record each under it: a
	// row is submitted by one caller at a time and added to total once.
	var mine []credit
	f.mu.Lock()
	for _, c := range cs {
		if f.credited[c.id] || f.crediting[c.id] {
			continue
		}
		a, ok := engine.ParseAsset(c.asset)
		if !ok {
			continue
		}
		c.a = a
		f.crediting[c.id] = true
		mine = append(mine, c)
	}
	f.mu.Unlock()
	for i, c := range mine {
		res, err := submitOn(ctx, f.x, &engine.Command{Kind: engine.CmdCredit, Time: f.now().UnixNano(), Account: f.id,
			Asset: c.a, Amount: c.amount, TransferID: engine.TransferID(c.id)})
		switch {
		case err != nil:
			err = fmt.Errorf("treasury credit %s: %w", c.id, err)
		case res.Code != engine.OK && res.Code != engine.AlreadyApplied:
			err = fmt.Errorf("treasury credit %s: %s", c.id, res.Code)
		}
		f.mu.Lock()
		delete(f.crediting, c.id)
		if err != nil { // this row and the rest are left for the next Credit
			for _, rest := range mine[i+1:] {
				delete(f.crediting, rest.id)
			}
			f.mu.Unlock()
			return err
		}
		f.credited[c.id] = true
		f.total[c.a] += c.amount
		f.mu.Unlock()
	}
	return nil
}

// Total is what the rows credited so far add up to in asset (engine units).
func (f *Funding) Total(a engine.Asset) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total[a]
}
