package treasury

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/payments/money"
	"svc/payments/rates"
)

// MakerAccount is the market maker's engine account (its own: the treasury's hedges trade
// against it, and self-trade prevention would cancel them if they shared one).
var MakerAccount = engine.AccountID(uuid.NewSHA1(uuid.NameSpaceOID, []byte("svc/market-maker")))

// MakerExchange is what the market maker uses of the engine; *engine.Engine is one.
type MakerExchange interface {
	Exchange
	OpenOrders(acct engine.AccountID, symbol string, dst []engine.OrderView) []engine.OrderView
}

var _ MakerExchange = (*engine.Engine)(nil)

// MakerConfig configures the market maker of one environment.
type MakerConfig struct {
	Env      string
	Exchange MakerExchange
	Prices   Prices
	// Assets whose NGN book is quoted (default Assets).
	Assets []money.Asset
	// Levels per side (default 5); Size each level's quantity in whole units (default 500);
	// Spread the distance of the best level from the reference and Step the distance
	// between levels, as fractions of the reference (defaults 0.001 and 0.002: the ladder
	// spans +-0.9 %, inside the quoting band).
	Levels int
	Size   int64
	Spread *big.Rat
	Step   *big.Rat
	// Requote is how far the reference may move before the ladder is replaced (default
	// 0.001); a fill (any level short of Size, or missing) replaces it at once.
	Requote *big.Rat
	// Every is how often the ladder is checked (default 1 s).
	Every time.Duration
	// Inventory is credited to the maker's account at start when Fund is set (the
	// sandbox, whose engine money is not real): engine units per asset. In live the maker
	// is off unless the operator configures it, and funds its account with real money.
	Inventory map[engine.Asset]int64
	Fund      bool
	// Funding, when set, is the operator's funding of the maker's account (live: `svc
	// treasury fund --account market-maker`), credited at each check.
	Funding *Funding
	// Limits, when set, bounds the maker per asset (minor units of the asset): the ladder
	// rests at most that much on each side (fewer levels), and a side stops quoting once
	// the maker's position (its holding of the asset minus what it was funded with) has
	// moved that far its way. An asset without a limit is not quoted. Nil: no bound (the
	// sandbox, sandbox money).
	Limits map[money.Asset]int64
	Logger *slog.Logger
	Now    func() time.Time
}

// Maker keeps a two-sided ladder on every NGN book around the reference.
type Maker struct {
	cfg     MakerConfig
	centres map[money.Asset]int64 // the reference each ladder was placed around
}

// NewMaker returns a market maker.
func NewMaker(cfg MakerConfig) (*Maker, error) {
	if cfg.Exchange == nil || cfg.Prices == nil {
		return nil, errors.New("market maker: no exchange or prices")
	}
	if len(cfg.Assets) == 0 {
		cfg.Assets = Assets
	}
	if cfg.Levels <= 0 {
		cfg.Levels = 5
	}
	if cfg.Size <= 0 {
		cfg.Size = 500
	}
	if cfg.Spread == nil {
		cfg.Spread = big.NewRat(1, 1000)
	}
	if cfg.Step == nil {
		cfg.Step = big.NewRat(2, 1000)
	}
	if cfg.Requote == nil {
		cfg.Requote = big.NewRat(1, 1000)
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Spread.Sign() <= 0 || cfg.Step.Sign() < 0 {
		return nil, fmt.Errorf("market maker: spread must be positive and step not negative")
	}
	return &Maker{cfg: cfg, centres: map[money.Asset]int64{}}, nil
}

// Run funds the account (when Fund) and keeps the ladders until ctx ends.
func (m *Maker) Run(ctx context.Context) {
	if m.cfg.Fund {
		if err := m.Fund(); err != nil {
			m.cfg.Logger.Warn("market maker: funding failed; not quoting", "env", m.cfg.Env, "error", err)
			return
		}
	}
	t := time.NewTicker(m.cfg.Every)
	defer t.Stop()
	for {
		if m.cfg.Funding != nil {
			if err := m.cfg.Funding.Credit(ctx); err != nil && ctx.Err() == nil {
				m.cfg.Logger.Warn("market maker: crediting the operator's funding failed; retried", "env", m.cfg.Env, "error", err)
			}
		}
		if err := m.Refresh(); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("market maker: refresh failed", "env", m.cfg.Env, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Fund credits the maker's inventory (Run does it first when Config.Fund is set). Sandbox
// money: a fresh transfer id tops the account up to Inventory at each start.
func (m *Maker) Fund() error {
	bal := m.cfg.Exchange.Balances(MakerAccount)
	for a, target := range m.cfg.Inventory {
		have := bal[a].Available + bal[a].Locked
		if have >= target {
			continue
		}
		res, err := m.cfg.Exchange.Submit(&engine.Command{Kind: engine.CmdCredit, Time: m.cfg.Now().UnixNano(), Account: MakerAccount,
			Asset: a, Amount: target - have, TransferID: engine.TransferID(uuid.Must(uuid.NewV7()))})
		if err != nil {
			return err
		}
		if res.Code != engine.OK {
			return fmt.Errorf("credit %s: %s", a, res.Code)
		}
	}
	return nil
}

// Refresh keeps each ladder: levels a fill took are placed again (the others stay), and a
// ladder whose reference moved past Requote is replaced whole.
func (m *Maker) Refresh() error {
	if err := failStopped(m.cfg.Exchange); err != nil {
		return err // its open orders and balances are memory a restart may undo (failStopped)
	}
	var errs []error
	for _, a := range m.cfg.Assets {
		if err := m.refresh(a); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a, err))
		}
	}
	return errors.Join(errs...)
}

// Ladder returns the prices (price units of the pair) of the ladder around ref: bids
// best first, then asks best first. Every bid is below every ask.
func (m *Maker) Ladder(pc engine.PairConfig, ref int64) (bids, asks []engine.Price) {
	scale := pow10(2 - pc.PriceDecimals)
	tick := int64(pc.TickSize)
	for i := 0; i < m.cfg.Levels; i++ {
		off := new(big.Rat).Add(m.cfg.Spread, new(big.Rat).Mul(m.cfg.Step, big.NewRat(int64(i), 1)))
		lo := new(big.Rat).Mul(big.NewRat(ref, 1), new(big.Rat).Sub(big.NewRat(1, 1), off))
		hi := new(big.Rat).Mul(big.NewRat(ref, 1), new(big.Rat).Add(big.NewRat(1, 1), off))
		b, err1 := money.Ratio(lo.Num(), new(big.Int).Mul(lo.Denom(), big.NewInt(scale)), money.Down)
		s, err2 := money.Ratio(hi.Num(), new(big.Int).Mul(hi.Denom(), big.NewInt(scale)), money.Up)
		if err1 != nil || err2 != nil {
			continue
		}
		b -= b % tick
		if r := s % tick; r != 0 {
			s += tick - r
		}
		if b <= 0 || s <= b {
			continue
		}
		bids, asks = append(bids, engine.Price(b)), append(asks, engine.Price(s))
	}
	return bids, asks
}

func (m *Maker) refresh(asset money.Asset) error {
	x := m.cfg.Exchange
	pc, ok := x.Pair(rates.Symbol(asset))
	if !ok || pc.Quote != engine.NGN || pc.PriceDecimals > 2 {
		return nil
	}
	ref, ok := m.cfg.Prices.Reference(m.cfg.Env, asset)
	if !ok {
		return nil
	}
	lots := engine.Qty(m.cfg.Size * pow10(pc.QtyDecimals))
	levels, bid, ask := m.bounds(asset, pc)
	if levels == 0 {
		return nil
	}
	open := x.OpenOrders(MakerAccount, pc.Symbol, nil)
	centre := m.centres[asset]
	requote := centre <= 0 || new(big.Rat).SetFrac64(abs(ref.Price-centre), centre).Cmp(m.cfg.Requote) > 0
	if requote {
		centre = ref.Price
	}
	// The ladder wanted around the centre; a level resting whole at its price is kept, and
	// only what a fill took (or a requote moved) is replaced: a fill costs the engine a
	// cancel and a place per level it touched, not the whole ladder again.
	type level struct {
		side  engine.Side
		price engine.Price
	}
	want := map[level]bool{}
	bids, asks := m.Ladder(pc, centre)
	for i := range bids[:min(levels, len(bids))] {
		if bid {
			want[level{engine.Buy, bids[i]}] = true
		}
		if ask {
			want[level{engine.Sell, asks[i]}] = true
		}
	}
	var errs []error
	kept := map[level]bool{}
	var stale []engine.OrderID
	for _, o := range open {
		l := level{o.Side, o.Price}
		if want[l] && !kept[l] && o.Filled == 0 && o.Qty == lots {
			kept[l] = true
			continue
		}
		stale = append(stale, o.ID)
	}
	if len(stale) > 0 && len(stale) == len(open) && len(open) > 1 {
		res, err := x.Submit(&engine.Command{Kind: engine.CmdCancelAll, Time: m.cfg.Now().UnixNano(), Account: MakerAccount, Symbol: pc.Symbol})
		if err != nil {
			return err
		}
		if res.Code != engine.OK {
			return fmt.Errorf("cancel all: %s", res.Code)
		}
	} else {
		for _, id := range stale {
			res, err := x.Submit(&engine.Command{Kind: engine.CmdCancel, Time: m.cfg.Now().UnixNano(), Account: MakerAccount,
				Symbol: pc.Symbol, OrderID: id})
			if err != nil {
				return err
			}
			if res.Code != engine.OK && res.Code != engine.RejectUnknownOrder {
				errs = append(errs, fmt.Errorf("cancel: %s", res.Code))
			}
		}
	}
	place := func(side engine.Side, p engine.Price) {
		res, err := x.Submit(&engine.Command{Kind: engine.CmdPlace, Time: m.cfg.Now().UnixNano(), Account: MakerAccount,
			Symbol: pc.Symbol, OrderID: engine.OrderID(uuid.Must(uuid.NewV7())), Side: side, Type: engine.Limit,
			TIF: engine.GTC, PostOnly: true, Price: p, Qty: lots})
		switch {
		case err != nil:
			errs = append(errs, err)
		case res.Code == engine.RejectPostOnlyWouldTake || res.Code == engine.RejectInsufficientFunds:
			// another account's order sits across this level, or the inventory ran out: the
			// level waits for the next refresh
		case res.Code != engine.OK:
			errs = append(errs, fmt.Errorf("place %s %d: %s", side, p, res.Code))
		}
	}
	for i := range bids[:min(levels, len(bids))] { // best levels first, bid and ask in turn
		for _, l := range []level{{engine.Buy, bids[i]}, {engine.Sell, asks[i]}} {
			if want[l] && !kept[l] {
				place(l.side, l.price)
			}
		}
	}
	m.centres[asset] = centre
	return errors.Join(errs...)
}

// bounds applies Limits to asset's ladder: how many levels a side, and whether each side
// quotes (a position at its limit stops the side that would grow it).
func (m *Maker) bounds(asset money.Asset, pc engine.PairConfig) (levels int, bid, ask bool) {
	if m.cfg.Limits == nil {
		return m.cfg.Levels, true, true
	}
	limit, ok := m.cfg.Limits[asset]
	if !ok || limit <= 0 || asset.Places() != pc.Base.Decimals() {
		return 0, false, false
	}
	levels = m.cfg.Levels
	if n := limit / (m.cfg.Size * pow10(asset.Places())); n < int64(levels) {
		levels = int(n)
	}
	funded := m.cfg.Inventory[pc.Base]
	if m.cfg.Funding != nil {
		funded = m.cfg.Funding.Total(pc.Base)
	}
	bal := m.cfg.Exchange.Balances(MakerAccount)[pc.Base]
	pos := bal.Available + bal.Locked - funded
	return levels, pos < limit, -pos < limit
}
