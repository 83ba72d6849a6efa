// Package rates quotes NGN prices of USDT, USDC (and USD) from the exchange's own order
// books (DESIGN.md section 4) in a way one order cannot move:
//
//   - a quote is priced from the book's depth for the quoted size: the volume-weighted
//     average price (VWAP) of the levels needed to fill it (asks to buy the asset, bids to
//     sell it), so a far-off order of the minimum size changes the price of a realistic size
//     by at most its own weight;
//   - only levels priced inside a band around the asset's reference price count
//     (Config.Band, +-2% by default): a level outside it is ignored as if absent, so an
//     order far off the market can neither move the quote nor block it. Nothing is ever
//     quoted beyond the band (plus the spread), whatever sits in the book;
//   - the reference follows the market (reference.go): the book's depth-weighted mid (or an
//     external Feed), smoothed, a jump accepted only once it persists, the operator's value
//     (Config.References) when no sample is recent;
//   - when the band holds too little depth for the size, the environment's treasury
//     (Config.Treasury) quotes from its inventory at the reference (SourceTreasury) while
//     its limits allow, and only an exhausted treasury answers ErrRateUnavailable (503
//     RATE_UNAVAILABLE, retry later); without a treasury an empty band prices at the
//     reference and a thin one is refused;
//   - a book that cannot be read (a remote engine silent past Config.DepthTimeout, a stopped
//     engine) is not an empty book: the quote is refused (ErrRateUnavailable) rather than
//     priced from the treasury or the reference in its place, and for a second after such a
//     failure the environment's quotes are refused without asking again;
//   - the spread is then added (buy, rounded up) or taken off (sell, rounded down);
//   - an asset without an operator reference cannot be checked and is not priced
//     (ErrNoPrice).
//
// A quote served by GET /payments/rates is stored with an id and expires_at (60 s by
// default). An onramp (or offramp) locks a quote once, inside its own transaction (Lock):
// after expires_at it is ErrRateExpired (422 RATE_EXPIRED), a second lock ErrRateAlreadyUsed
// (422 RATE_ALREADY_USED).
//
// Prices are int64 kobo per one unit of the asset (NGN with 2 places, the books' tick), so a
// conversion is one exact integer division rounded half-even (Buy, Sell).
package rates

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/payments"
	"svc/payments/money"
)

// Sides of a quote, from the point of view of the crypto asset.
const (
	Buy  = "buy"  // NGN -> asset (onramps): the asks' VWAP for the size + spread
	Sell = "sell" // asset -> NGN (offramps): the bids' VWAP for the size - spread
)

// Sources of a price.
const (
	SourceBook      = "orderbook"
	SourceReference = "reference"
	// SourceTreasury: the band held too little depth for the size; the treasury quotes
	// from its inventory at the reference plus the spread (Config.Treasury).
	SourceTreasury = "treasury"
)

// Treasury is the environment's conversion desk as the quotes see it
// (payments/treasury.Desk is one).
type Treasury interface {
	// Covers reports whether the treasury of env can take a conversion of units (minor
	// units of asset) on side (Buy: it sells the asset to the customer) within its limits;
	// configured is false when env has no treasury.
	Covers(env string, asset money.Asset, side string, units int64) (covered, configured bool)
}

// Exchange is what the service reads from one environment's engine (its public read API);
// *engine.Engine is one.
type Exchange interface {
	// Depth returns up to n levels per side, best first.
	Depth(symbol string, n int) (engine.Depth, error)
	// Pair returns the symbol's configuration (price and quantity decimals).
	Pair(symbol string) (engine.PairConfig, bool)
}

var _ Exchange = (*engine.Engine)(nil)

// depthReader is an Exchange whose reads go over the network and take a deadline (a remote
// engine's client, cluster/enginerpc.Client); its plain Depth waits the client's own
// ReadTimeout (2 s), and its Pair asks with that timeout until the pairs are known.
type depthReader interface {
	DepthContext(ctx context.Context, symbol string, n int) (engine.Depth, error)
	// ErrContext is nil when the engine can be served from; it loads the pairs within ctx.
	ErrContext(ctx context.Context) error
}

// Config is what the service is built with.
type Config struct {
	// Exchanges maps an environment (sandbox, live) to its engine; an environment without
	// one prices from References only.
	Exchanges map[string]Exchange
	// Spread is the relative margin added to the ask (buy) and taken off the bid (sell), as
	// a fraction: 0.005 is 0.5 %. Default 0.005.
	Spread *big.Rat
	// References are the prices used when a book side is empty, kobo per unit, keyed by
	// asset (USDT, USDC, USD). An asset with neither a book nor a reference cannot be priced
	// (ErrNoPrice).
	References map[money.Asset]int64
	// TTL is how long a quote can be locked (default 60 s).
	TTL time.Duration
	// Band is the relative distance from the reference price that a book price (the VWAP
	// for the quoted size, before the spread) may lie at, as a fraction: 0.02 is +-2 %.
	// Outside it the quote is refused (ErrRateUnavailable). Default 0.02; at most 0.5.
	Band *big.Rat
	// QuoteSize is the size, in whole units of the asset, a price is computed for when the
	// caller names none (GET /payments/rates without amount, Market). Default 100.
	QuoteSize int64
	// DepthLevels is how many levels of a side are read to fill a size (default 200): a
	// size the best DepthLevels levels cannot fill is refused as too thin.
	DepthLevels int
	// Reference says how the band's centre follows the market (the book's mid, or Feed),
	// References being the operator's fallback.
	Reference ReferenceConfig
	// Treasury, when set, quotes what the band cannot price (SourceTreasury).
	Treasury Treasury
	// DepthTimeout bounds each read of a remote engine's book (default 250 ms): a quote
	// (or a conversion priced through MarketFor) that cannot read the book by then is
	// refused with ErrRateUnavailable, and so is every quote of that environment for
	// BookRetry after it, without asking. The local engine answers from memory (a read it
	// refuses, stopped or busy, refuses that quote only).
	DepthTimeout time.Duration
	Now          func() time.Time
}

// Defaults of Config.
const (
	DefaultQuoteSize    = 100
	DefaultDepthLevels  = 200
	DefaultDepthTimeout = 250 * time.Millisecond
)

// BookRetry is how long an environment's quotes are refused without reading its book after
// a read failed: a silent engine costs one DepthTimeout per BookRetry, not one per quote and
// side (a GET /payments/rates reads the book up to a dozen times).
const BookRetry = time.Second

// errBookUnread: the book could not be read (the engine did not answer, or is stopped);
// MarketFor answers it ErrRateUnavailable, never as an empty book.
var errBookUnread = errors.New("rates: the order book could not be read")

// DefaultTTL is the validity of a quote.
const DefaultTTL = 60 * time.Second

// Quote is one stored price.
type Quote struct {
	ID        uuid.UUID
	Tenant    payments.Tenant
	Asset     money.Asset // USDT, USDC or USD
	Side      string
	Price     int64 // kobo per unit of Asset
	Source    string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Price is a market price, not stored.
type Price struct {
	Asset  money.Asset
	Side   string
	Price  int64 // kobo per unit
	Source string
	At     time.Time
}

// Errors.
var (
	// ErrRateExpired: the quote's expires_at has passed (422 RATE_EXPIRED).
	ErrRateExpired error = &payments.Error{Code: "RATE_EXPIRED", Message: "the rate has expired; fetch a new one immediately before use"}
	// ErrRateAlreadyUsed: the quote was already locked (422 RATE_ALREADY_USED).
	ErrRateAlreadyUsed error = &payments.Error{Code: "RATE_ALREADY_USED", Message: "the rate was already used; fetch a new one"}
	// ErrNoPrice: no reference price is configured for the asset, so neither the book (which
	// cannot be checked against a band) nor a reference prices it (503 PROVIDER_UNAVAILABLE).
	ErrNoPrice error = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "no price is available for this asset right now"}
	// ErrRateUnavailable: the book cannot fill the quoted size, or the price it gives for it
	// lies outside the band around the reference (503 RATE_UNAVAILABLE; retry later).
	ErrRateUnavailable error = &payments.Error{Code: "RATE_UNAVAILABLE", Message: "the order book cannot price this size within the allowed band right now; retry shortly"}
	// ErrUnknownRate: no such quote for this merchant and environment (400 on rate_id).
	ErrUnknownRate = &payments.FieldError{Field: "rate_id", Message: "is not a rate id returned by GET /payments/rates for this account"}
)

// RetryAfter is the Retry-After (seconds) of a refused quote: books refill quickly.
const RetryAfter = 5

// Service quotes and locks rates. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
	up   *big.Rat // 1 + spread
	down *big.Rat // 1 - spread
	lo   *big.Rat // 1 - band
	hi   *big.Rat // 1 + band
	refs *references
	// unread is, per environment with an exchange, until when (ns since born, on the
	// monotonic clock, so a step of the wall clock neither lengthens nor ends the hold) its
	// book is not asked after a failed read (BookRetry).
	unread map[string]*atomic.Int64
	born   time.Time
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) (*Service, error) {
	if cfg.Spread == nil {
		cfg.Spread = big.NewRat(5, 1000)
	}
	if cfg.Spread.Sign() < 0 || cfg.Spread.Cmp(big.NewRat(1, 2)) >= 0 {
		return nil, fmt.Errorf("rates: spread %s must be in [0, 0.5)", cfg.Spread.FloatString(4))
	}
	for a, p := range cfg.References {
		if p <= 0 {
			return nil, fmt.Errorf("rates: reference price of %s must be positive", a)
		}
	}
	if cfg.Band == nil {
		cfg.Band = big.NewRat(2, 100)
	}
	if cfg.Band.Sign() <= 0 || cfg.Band.Cmp(big.NewRat(1, 2)) > 0 {
		return nil, fmt.Errorf("rates: band %s must be in (0, 0.5]", cfg.Band.FloatString(4))
	}
	if cfg.QuoteSize == 0 {
		cfg.QuoteSize = DefaultQuoteSize
	}
	if cfg.QuoteSize < 0 || cfg.QuoteSize > 1e9 {
		return nil, fmt.Errorf("rates: quote size %d must be in [1, 1e9] units", cfg.QuoteSize)
	}
	if cfg.DepthLevels <= 0 {
		cfg.DepthLevels = DefaultDepthLevels
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.DepthTimeout <= 0 {
		cfg.DepthTimeout = DefaultDepthTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	unread := map[string]*atomic.Int64{}
	for env := range cfg.Exchanges {
		unread[env] = new(atomic.Int64)
	}
	one := big.NewRat(1, 1)
	return &Service{pool: pool, cfg: cfg,
		up:     new(big.Rat).Add(one, cfg.Spread),
		down:   new(big.Rat).Sub(one, cfg.Spread),
		lo:     new(big.Rat).Sub(one, cfg.Band),
		hi:     new(big.Rat).Add(one, cfg.Band),
		refs:   newReferences(cfg.Reference, cfg.References, cfg.Band),
		unread: unread, born: time.Now()}, nil
}

// Band is the relative band around the reference that prices may lie in.
func (s *Service) Band() *big.Rat { return new(big.Rat).Set(s.cfg.Band) }

// Spread is the relative margin of a quote.
func (s *Service) Spread() *big.Rat { return new(big.Rat).Set(s.cfg.Spread) }

// TTL is the validity of a quote.
func (s *Service) TTL() time.Duration { return s.cfg.TTL }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.cfg.Now() }

// Assets that have an NGN book.
var Assets = []money.Asset{money.USDT, money.USDC, money.USD}

// Symbol is the book of asset against NGN.
func Symbol(asset money.Asset) string { return string(asset) + "-NGN" }

// Market returns the current price of asset on side in env for the default quote size
// (Config.QuoteSize units), without storing it.
//
// Errors: ErrNoPrice, ErrRateUnavailable.
func (s *Service) Market(env string, asset money.Asset, side string) (Price, error) {
	return s.MarketFor(env, asset, side, money.Amount{})
}

// MarketFor returns the current price of asset on side in env for a conversion of size: an
// amount of asset (units to buy or sell) or of NGN (the NGN to spend or receive); the zero
// Amount means Config.QuoteSize units of asset. It is not stored.
//
// Errors: ErrNoPrice (no reference for asset), ErrRateUnavailable (the book cannot fill
// size, or its VWAP for size lies outside the band), a *payments.FieldError for a size of another
// asset or not positive.
func (s *Service) MarketFor(env string, asset money.Asset, side string, size money.Amount) (Price, error) {
	now := s.cfg.Now().UTC()
	ref, ok := s.cfg.References[asset]
	if !ok {
		return Price{}, ErrNoPrice
	}
	if size.Asset == "" {
		size = money.New(asset, s.cfg.QuoteSize*pow10(asset.Places()))
	}
	if (size.Asset != asset && size.Asset != money.NGN) || !size.IsPositive() {
		return Price{}, &payments.FieldError{Field: "amount", Message: "must be a positive amount of " + string(asset) + " or NGN"}
	}
	x := s.cfg.Exchanges[env]
	r, _ := s.refs.get(env, asset, now, func() (int64, string, bool) { return s.sample(env, x, asset) })
	ref = r.Price
	var thin error
	if x != nil {
		vwap, found, err := s.depthPrice(env, x, asset, side, size, ref)
		if err == errBookUnread {
			// Not an empty book: pricing it as one (the treasury's or the reference's price)
			// could quote what the book would not; the caller retries (Retry-After).
			return Price{}, ErrRateUnavailable
		}
		if err != nil && err != ErrRateUnavailable {
			return Price{}, err
		}
		if found {
			return Price{asset, side, s.applySpread(vwap, side), SourceBook, now}, nil
		}
		thin = err
	}
	// The band cannot price the size: the treasury quotes from its inventory at the
	// reference, within its limits; without a treasury, an empty band is the reference and
	// a thin one is refused.
	if t := s.cfg.Treasury; t != nil {
		units := size.Minor
		if size.Asset == money.NGN {
			u, err := Convert(size, asset, ref)
			if err != nil {
				return Price{}, ErrRateUnavailable
			}
			units = u.Minor
		}
		if covered, configured := t.Covers(env, asset, side, units); configured {
			if !covered {
				return Price{}, ErrRateUnavailable
			}
			return Price{asset, side, s.applySpread(big.NewRat(ref, 1), side), SourceTreasury, now}, nil
		}
	}
	if thin != nil {
		return Price{}, thin
	}
	return Price{asset, side, s.applySpread(big.NewRat(ref, 1), side), SourceReference, now}, nil
}

// Reference returns the reference price of asset in env now (the band's centre), and ok
// false when the asset has no operator value.
func (s *Service) Reference(env string, asset money.Asset) (Reference, bool) {
	x := s.cfg.Exchanges[env]
	return s.refs.get(env, asset, s.cfg.Now().UTC(), func() (int64, string, bool) { return s.sample(env, x, asset) })
}

// sample is the market's price of asset in env: the feed's when it is fresh, else the
// book's depth-weighted mid, the average of the VWAPs of QuoteSize units on each side over
// every level. A side that cannot fill QuoteSize (one order of a unit far off, an empty
// side) gives no sample, so a small order cannot move the reference.
func (s *Service) sample(env string, x Exchange, asset money.Asset) (int64, string, bool) {
	if f := s.cfg.Reference.Feed; f != nil {
		if p, at, ok := f.Price(env, asset); ok && p > 0 && s.cfg.Now().Sub(at) <= s.refs.cfg.MaxAge {
			return p, RefFeed, true
		}
	}
	if x == nil {
		return 0, "", false
	}
	size := money.New(asset, s.cfg.QuoteSize*pow10(asset.Places()))
	var mid big.Rat
	for _, side := range []string{Buy, Sell} {
		v, found, err := s.depthPriceWithin(env, x, asset, side, size, nil)
		if err != nil || !found {
			return 0, "", false
		}
		mid.Add(&mid, v)
	}
	mid.Mul(&mid, big.NewRat(1, 2))
	p, err := money.Ratio(mid.Num(), mid.Denom(), money.HalfEven)
	if err != nil || p <= 0 {
		return 0, "", false
	}
	return p, RefBook, true
}

// depthPrice is the VWAP (kobo per unit) of the levels of the side of asset's book that a
// conversion of size takes: asks to buy, bids to sell. found is false when that side is
// empty (the treasury or the reference prices then); errBookUnread when the engine could
// not be read. Only levels priced inside [ref x (1-band), ref x (1+band)] are used;
// ErrRateUnavailable when they cannot fill size.
func (s *Service) depthPrice(env string, x Exchange, asset money.Asset, side string, size money.Amount, ref int64) (vwap *big.Rat, found bool, err error) {
	r := big.NewRat(ref, 1)
	return s.depthPriceWithin(env, x, asset, side, size, &[2]*big.Rat{new(big.Rat).Mul(r, s.lo), new(big.Rat).Mul(r, s.hi)})
}

// depth reads up to DepthLevels levels of sym's book in env, within DepthTimeout for a
// remote engine, and the pair (known once the engine answered); errBookUnread when it
// could not, or when a remote read failed less than BookRetry ago (the local engine
// answers or refuses at once, so a failure of it holds nothing).
func (s *Service) depth(env string, x Exchange, sym string) (engine.Depth, engine.PairConfig, bool, error) {
	gate := s.unread[env]
	if gate != nil && int64(time.Since(s.born)) < gate.Load() {
		return engine.Depth{}, engine.PairConfig{}, false, errBookUnread
	}
	fail := func() (engine.Depth, engine.PairConfig, bool, error) {
		if gate != nil {
			gate.Store(int64(time.Since(s.born) + BookRetry))
		}
		return engine.Depth{}, engine.PairConfig{}, false, errBookUnread
	}
	r, remote := x.(depthReader)
	if !remote {
		pc, ok := x.Pair(sym)
		if !ok {
			return engine.Depth{}, pc, false, nil
		}
		d, err := x.Depth(sym, s.cfg.DepthLevels)
		if err != nil { // stopped, or its queue full for a moment: refused, but not held
			return engine.Depth{}, pc, false, errBookUnread
		}
		return d, pc, true, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.DepthTimeout)
	defer cancel()
	if err := r.ErrContext(ctx); err != nil { // then Pair reads the pairs it loaded
		return fail()
	}
	pc, ok := x.Pair(sym)
	if !ok {
		return engine.Depth{}, pc, false, nil
	}
	d, err := r.DepthContext(ctx, sym, s.cfg.DepthLevels)
	if err != nil {
		return fail()
	}
	return d, pc, true, nil
}

// depthPriceWithin is depthPrice over the levels inside band ([lo, hi] kobo; every level
// when nil).
func (s *Service) depthPriceWithin(env string, x Exchange, asset money.Asset, side string, size money.Amount, band *[2]*big.Rat) (vwap *big.Rat, found bool, err error) {
	sym := Symbol(asset)
	d, pc, ok, err := s.depth(env, x, sym)
	if err != nil || !ok {
		return nil, false, err
	}
	levels := d.Asks
	if side == Sell {
		levels = d.Bids
	}
	if len(levels) == 0 {
		return nil, false, nil
	}
	// A price unit is 10^-PriceDecimals NGN, a lot 10^-QtyDecimals of the asset. A level's
	// price in kobo per unit is exact (a fraction of a kobo when PriceDecimals > 2): the one
	// rounding is applySpread's, through payments/money (issue 32: no rounding by hand).
	kobo := func(p engine.Price) *big.Rat {
		return new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(p)), big.NewInt(100)), pow10Big(pc.PriceDecimals))
	}
	// Only levels inside the band count: a far-off order (at ten times the market, or a
	// tenth of it) is skipped, so it can neither move the price nor block the quote.
	in := levels[:0:0]
	for _, l := range levels {
		p := kobo(l.Price)
		if l.Qty > 0 && (band == nil || p.Cmp(band[0]) >= 0 && p.Cmp(band[1]) <= 0) {
			in = append(in, l)
		}
	}
	if len(in) == 0 { // every level lies outside the band: as if the side were empty
		return nil, false, nil
	}
	levels = in
	lotsPerUnit := pow10Big(pc.QtyDecimals)
	notional := new(big.Rat) // sum of kobo price x lots
	filled := new(big.Int)   // lots
	if size.Asset == asset { // fill a quantity: lots = minor x 10^qd / 10^places, rounded up
		need := new(big.Int).Mul(big.NewInt(size.Minor), lotsPerUnit)
		need = ceilDiv(need, pow10Big(asset.Places()))
		for _, l := range levels {
			take := new(big.Int).Sub(need, filled)
			if q := big.NewInt(int64(l.Qty)); q.Cmp(take) < 0 {
				take = q
			}
			notional.Add(notional, new(big.Rat).Mul(kobo(l.Price), new(big.Rat).SetInt(take)))
			filled.Add(filled, take)
			if filled.Cmp(need) >= 0 {
				break
			}
		}
		if filled.Cmp(need) < 0 || need.Sign() == 0 {
			return nil, false, ErrRateUnavailable
		}
	} else { // fill an NGN notional: sum(kobo price x lots) >= minor x 10^qd
		need := new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(size.Minor), lotsPerUnit))
		for _, l := range levels {
			p := kobo(l.Price)
			if p.Sign() <= 0 {
				continue
			}
			left := new(big.Rat).Quo(new(big.Rat).Sub(need, notional), p) // lots still needed at p
			take := ceilDiv(left.Num(), left.Denom())
			if q := big.NewInt(int64(l.Qty)); q.Cmp(take) < 0 {
				take = q
			}
			notional.Add(notional, new(big.Rat).Mul(p, new(big.Rat).SetInt(take)))
			filled.Add(filled, take)
			if notional.Cmp(need) >= 0 {
				break
			}
		}
		if notional.Cmp(need) < 0 || filled.Sign() == 0 {
			return nil, false, ErrRateUnavailable
		}
	}
	vwap = new(big.Rat).Quo(notional, new(big.Rat).SetInt(filled))
	if band != nil && (vwap.Cmp(band[0]) < 0 || vwap.Cmp(band[1]) > 0) { // cannot happen (an average of in-band prices); kept as the last guard
		return nil, false, ErrRateUnavailable
	}
	return vwap, true, nil
}

func ceilDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func pow10Big(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// applySpread moves a kobo price by the spread against the customer: up (rounded up) to
// buy, down (rounded down, at least 1 kobo) to sell; one rounding, by the decimal library.
func (s *Service) applySpread(p *big.Rat, side string) int64 {
	f, mode := s.up, money.Up
	if side != Buy {
		f, mode = s.down, money.Down
	}
	r := new(big.Rat).Mul(p, f)
	v, err := money.Ratio(r.Num(), r.Denom(), mode)
	if err != nil || v <= 0 {
		return 1 // a price is at least 1 kobo; prices are far below int64 (the band bounds them)
	}
	return v
}

// Request selects the quotes of GET /payments/rates; empty fields mean every value.
type Request struct {
	Assets []money.Asset // USDT, USDC (default both)
	Sides  []string      // buy, sell (default both)
	// Size is the amount each quote is priced for (an amount of the asset, or of NGN); the
	// zero Amount means Config.QuoteSize units of the asset.
	Size money.Amount
}

// Quote prices every (asset, side) of req, stores each as a quote and returns them.
//
// Errors: when none of them can be priced, the first refusal (ErrNoPrice,
// ErrRateUnavailable, a *payments.FieldError for Size); the database's.
func (s *Service) Quote(ctx context.Context, t payments.Tenant, req Request) ([]Quote, error) {
	if len(req.Assets) == 0 {
		req.Assets = []money.Asset{money.USDT, money.USDC}
	}
	if len(req.Sides) == 0 {
		req.Sides = []string{Buy, Sell}
	}
	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	var out []Quote
	var first error
	for _, a := range req.Assets {
		for _, side := range req.Sides {
			p, err := s.MarketFor(t.Environment, a, side, req.Size)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			out = append(out, Quote{ID: uuid.Must(uuid.NewV7()), Tenant: t, Asset: a, Side: side, Price: p.Price,
				Source: p.Source, ExpiresAt: now.Add(s.cfg.TTL), CreatedAt: now})
		}
	}
	if len(out) == 0 {
		if first == nil {
			first = ErrNoPrice
		}
		return nil, first
	}
	b := &pgx.Batch{}
	for _, q := range out {
		b.Queue(`insert into rate_quotes (id, merchant_id, environment, asset, side, price, source, expires_at, created_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			q.ID, t.MerchantID, t.Environment, string(q.Asset), q.Side, q.Price, q.Source, q.ExpiresAt, q.CreatedAt)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("store quotes: %w", err)
	}
	return out, nil
}

// Lock marks quote id used by `by` in tx and returns it. It must be the tenant's quote of
// asset on side.
//
// Errors: ErrUnknownRate (also for another tenant's quote), a *payments.FieldError when the quote is
// for another asset or side, ErrRateAlreadyUsed, ErrRateExpired, the database's.
func (s *Service) Lock(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, asset money.Asset, side, by string) (Quote, error) {
	q := Quote{ID: id, Tenant: t}
	var (
		a    string
		used *time.Time
	)
	err := tx.QueryRow(ctx, `select asset, side, price, source, expires_at, used_at, created_at from rate_quotes
		where id = $1 and merchant_id = $2 and environment = $3 for update`, id, t.MerchantID, t.Environment).
		Scan(&a, &q.Side, &q.Price, &q.Source, &q.ExpiresAt, &used, &q.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Quote{}, ErrUnknownRate
	}
	if err != nil {
		return Quote{}, fmt.Errorf("read quote: %w", err)
	}
	q.Asset = money.Asset(a)
	if q.Asset != asset || q.Side != side {
		return Quote{}, &payments.FieldError{Field: "rate_id", Message: fmt.Sprintf("is a %s rate of %s; this needs a %s rate of %s",
			q.Side, q.Asset, side, asset)}
	}
	if used != nil {
		return Quote{}, ErrRateAlreadyUsed
	}
	now := s.cfg.Now()
	if !now.Before(q.ExpiresAt) {
		return Quote{}, ErrRateExpired
	}
	if _, err := tx.Exec(ctx, `update rate_quotes set used_at = $2, used_by = $3 where id = $1`, id, now.UTC(), by); err != nil {
		return Quote{}, fmt.Errorf("lock quote: %w", err)
	}
	return q, nil
}

// Purge deletes unused quotes that expired before `before` (they can never be locked).
func (s *Service) Purge(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `delete from rate_quotes q where used_at is null and expires_at < $1
		and not exists (select 1 from onramps o where o.rate_id = q.id)`, before)
	if err != nil {
		return 0, fmt.Errorf("purge quotes: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Convert returns ngn converted to asset at price (kobo per unit of asset), rounded half
// even: asset_minor = kobo * 10^places(asset) / price. ErrOverflow for absurd amounts.
func Convert(ngn money.Amount, asset money.Asset, price int64) (money.Amount, error) {
	if ngn.Asset != money.NGN || !asset.Valid() {
		return money.Amount{}, money.ErrBadRate
	}
	r, err := money.RateOfMinor(price, 2)
	if err != nil {
		return money.Amount{}, err
	}
	return money.ConvertAtPrice(ngn, asset, r, money.HalfEven)
}

// ToNGN returns amount of asset at price (kobo per unit), rounded half even.
func ToNGN(a money.Amount, price int64) (money.Amount, error) {
	if !a.Asset.Valid() {
		return money.Amount{}, money.ErrBadRate
	}
	r, err := money.RateOfMinor(price, 2)
	if err != nil {
		return money.Amount{}, err
	}
	return money.Convert(a, money.NGN, r, money.HalfEven)
}

// FormatPrice prints a kobo price as NGN with 2 places.
func FormatPrice(p int64) string { return money.Format(money.NGN, p) }

// RateString is the rate of the spec's Rate object: one unit of `from` in `to`. For
// from=NGN it is asset per NGN (1/price, 12 significant places after the point, trailing
// zeros trimmed); for from=asset it is NGN per asset (the price).
func RateString(price int64, fromNGN bool) string {
	if !fromNGN {
		return FormatPrice(price)
	}
	p, err := money.RateOfMinor(price, 2)
	if err != nil {
		return "0"
	}
	inv, err := p.InverseRound(12, money.HalfUp)
	if err != nil {
		return "0"
	}
	return inv.String()
}

// ParseReferences reads "USDT-NGN=1600,USDC-NGN=1600.50,USD-NGN=1590" (NGN per unit).
func ParseReferences(s string) (map[money.Asset]int64, error) {
	out := map[money.Asset]int64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sym, val, ok := strings.Cut(part, "=")
		base, quote, ok2 := strings.Cut(strings.TrimSpace(sym), "-")
		if !ok || !ok2 || quote != "NGN" {
			return nil, fmt.Errorf("rate reference %q: want SYMBOL=PRICE, e.g. USDT-NGN=1600", part)
		}
		a := money.Asset(base)
		if a != money.USDT && a != money.USDC && a != money.USD {
			return nil, fmt.Errorf("rate reference %q: unknown asset %q (USDT, USDC or USD)", part, base)
		}
		p, err := money.ParsePositive(money.NGN, strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("rate reference %q: %v", part, err)
		}
		out[a] = p.Minor
	}
	return out, nil
}
