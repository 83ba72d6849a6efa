package engine

import (
	"errors"
	"math/bits"
	"strconv"
)

// Asset is a currency the trading accounts hold.
type Asset uint8

// Assets. AssetNone is the zero value and is never valid.
const (
	AssetNone Asset = iota
	NGN
	USDT
	USDC
	USD
	numAssets
)

// NumAssets is the number of valid assets plus one (index 0 is AssetNone).
const NumAssets = int(numAssets)

var assetInfo = [numAssets]struct {
	name     string
	decimals int // internal unit: 10^-decimals of the asset
	display  int // decimals the API shows at least (DESIGN.md section 6)
}{
	AssetNone: {"NONE", 0, 0},
	NGN:       {"NGN", 4, 2},
	USDT:      {"USDT", 6, 6},
	USDC:      {"USDC", 6, 6},
	USD:       {"USD", 2, 2},
}

func (a Asset) String() string {
	if a < numAssets {
		return assetInfo[a].name
	}
	return "Asset(" + strconv.Itoa(int(a)) + ")"
}

// Valid reports whether a is one of NGN, USDT, USDC, USD.
func (a Asset) Valid() bool { return a > AssetNone && a < numAssets }

// Decimals is the engine's unit for a: balances and amounts of a are int64 counts of
// 10^-Decimals. NGN is kept at 1e-4 (not kobo) so that price (0.01) x quantity (0.01)
// is always a whole number of units; USDT and USDC at 1e-6; USD at 1e-2.
func (a Asset) Decimals() int { return assetInfo[a].decimals }

// DisplayDecimals is the number of decimals the API shows for a (NGN and USD 2, USDT and USDC 6).
func (a Asset) DisplayDecimals() int { return assetInfo[a].display }

// ParseAsset maps "NGN", "USDT", "USDC", "USD" to an Asset.
func ParseAsset(s string) (Asset, bool) {
	for a := NGN; a < numAssets; a++ {
		if assetInfo[a].name == s {
			return a, true
		}
	}
	return AssetNone, false
}

// ParseAmount parses a positive amount of a written with at most a's display decimals
// (so "10.50" NGN, "1.123456" USDT) into engine units of a.
func ParseAmount(a Asset, s string) (int64, error) {
	if !a.Valid() {
		return 0, &DecimalError{Reason: ReasonSyntax}
	}
	v, err := ParseDecimal(s, a.DisplayDecimals())
	if err != nil {
		return 0, err
	}
	m := pow10[a.Decimals()-a.DisplayDecimals()]
	hi, lo := bits.Mul64(uint64(v), uint64(m))
	if hi != 0 || lo > 1<<63-1 {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: a.DisplayDecimals()}
	}
	return int64(lo), nil
}

// AppendAmount appends an amount of a in engine units, with at least a's display
// decimals and more only when the value needs them: NGN 150000000 -> "15000.00",
// NGN 150001 -> "15.0001".
func AppendAmount(dst []byte, a Asset, v int64) []byte {
	dec := a.Decimals()
	for dec > a.DisplayDecimals() && v%10 == 0 {
		v /= 10
		dec--
	}
	return AppendDecimal(dst, v, dec)
}

// FormatAmount is AppendAmount to a new string.
func FormatAmount(a Asset, v int64) string { return string(AppendAmount(nil, a, v)) }

// Price is a limit price in units of 10^-PriceDecimals quote per one base (0.01 NGN for
// the default pairs), a positive multiple of the pair's TickSize.
type Price int64

// Qty is a base quantity in units of 10^-QtyDecimals base ("lots"; 0.01 for the default
// pairs), a positive multiple of the pair's StepSize.
type Qty int64

// PairConfig describes one symbol.
type PairConfig struct {
	Symbol        string // e.g. "USDT-NGN"
	Base, Quote   Asset
	PriceDecimals int   // decimals of Price (2: a price unit is 0.01 quote)
	QtyDecimals   int   // decimals of Qty (2: a lot is 0.01 base)
	TickSize      Price // every price is a multiple of this (1 = 0.01 NGN)
	StepSize      Qty   // every quantity is a multiple of this (1 = 0.01 base)
	MinQty        Qty   // smallest order quantity (100 = 1.00 base)
	MinNotional   int64 // smallest limit order value, in Quote units (1000 NGN = 1000_0000)
	MaxPrice      Price // largest accepted price; 0 means 10^9 price units (10,000,000.00)
	MaxQty        Qty   // largest accepted quantity; 0 means 10^9 lots (10,000,000.00)
}

// DefaultPairs returns USDT-NGN, USDC-NGN and USD-NGN with tick 0.01 NGN, step 0.01,
// minimum quantity 1 and minimum notional 1,000 NGN (DESIGN.md section 6).
func DefaultPairs() []PairConfig {
	mk := func(sym string, base Asset) PairConfig {
		return PairConfig{
			Symbol: sym, Base: base, Quote: NGN,
			PriceDecimals: 2, QtyDecimals: 2,
			TickSize: 1, StepSize: 1, MinQty: 100,
			MinNotional: 1000 * pow10[NGN.Decimals()],
		}
	}
	return []PairConfig{mk("USDT-NGN", USDT), mk("USDC-NGN", USDC), mk("USD-NGN", USD)}
}

// Validate reports the first problem with p.
func (p *PairConfig) Validate() error {
	switch {
	case p.Symbol == "":
		return errors.New("engine: pair without symbol")
	case !p.Base.Valid() || !p.Quote.Valid() || p.Base == p.Quote:
		return errors.New("engine: pair " + p.Symbol + ": bad assets")
	case p.PriceDecimals < 0 || p.QtyDecimals < 0 || p.QtyDecimals > p.Base.Decimals():
		return errors.New("engine: pair " + p.Symbol + ": quantity decimals exceed the base asset's")
	case p.PriceDecimals+p.QtyDecimals > p.Quote.Decimals():
		return errors.New("engine: pair " + p.Symbol + ": price x quantity is finer than the quote asset's unit")
	case p.TickSize <= 0 || p.StepSize <= 0 || p.MinQty <= 0 || p.MinNotional < 0:
		return errors.New("engine: pair " + p.Symbol + ": tick, step and min quantity must be positive")
	case p.MinQty%Qty(p.StepSize) != 0:
		return errors.New("engine: pair " + p.Symbol + ": min quantity not a multiple of step")
	case p.MaxPrice < 0 || p.MaxQty < 0:
		return errors.New("engine: pair " + p.Symbol + ": negative maximum")
	}
	return nil
}

// pair is a validated PairConfig with its precomputed multipliers.
type pair struct {
	PairConfig
	baseMult  int64 // base units per lot
	quoteMult int64 // quote units per (price unit x lot)
	maxPrice  Price
	maxQty    Qty
}

func newPair(c PairConfig) (*pair, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &pair{PairConfig: c}
	p.baseMult = pow10[c.Base.Decimals()-c.QtyDecimals]
	p.quoteMult = pow10[c.Quote.Decimals()-c.PriceDecimals-c.QtyDecimals]
	p.maxPrice, p.maxQty = c.MaxPrice, c.MaxQty
	if p.maxPrice == 0 {
		p.maxPrice = 1e9
	}
	if p.maxQty == 0 {
		p.maxQty = 1e9
	}
	// Every notional and every base amount of an accepted order must fit an int64 with
	// room to spare, so the matching path can multiply without checks.
	n, ok := mul(int64(p.maxPrice), int64(p.maxQty))
	if ok {
		n, ok = mul(n, p.quoteMult)
	}
	if ok {
		_, ok = mul(int64(p.maxQty), p.baseMult)
	}
	if !ok || n > 1<<62 {
		return nil, errors.New("engine: pair " + c.Symbol + ": MaxPrice x MaxQty overflows")
	}
	return p, nil
}

// ParsePrice parses a limit price for p ("1520.50") and checks it is on the tick.
func (p *PairConfig) ParsePrice(s string) (Price, error) {
	v, err := ParseDecimal(s, p.PriceDecimals)
	if err != nil {
		return 0, err
	}
	if v%int64(p.TickSize) != 0 {
		return 0, &DecimalError{Reason: ReasonNotOnTick, Decimals: p.PriceDecimals}
	}
	if p.MaxPrice > 0 && v > int64(p.MaxPrice) {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: p.PriceDecimals}
	}
	return Price(v), nil
}

// ParseQty parses a base quantity for p ("12.5") and checks step and minimum.
func (p *PairConfig) ParseQty(s string) (Qty, error) {
	v, err := ParseDecimal(s, p.QtyDecimals)
	if err != nil {
		return 0, err
	}
	if v%int64(p.StepSize) != 0 {
		return 0, &DecimalError{Reason: ReasonNotOnStep, Decimals: p.QtyDecimals}
	}
	if v < int64(p.MinQty) {
		return 0, &DecimalError{Reason: ReasonBelowMinimum, Decimals: p.QtyDecimals}
	}
	if p.MaxQty > 0 && v > int64(p.MaxQty) {
		return 0, &DecimalError{Reason: ReasonOverflow, Decimals: p.QtyDecimals}
	}
	return Qty(v), nil
}

// FormatPrice prints a price of p with PriceDecimals decimals.
func (p *PairConfig) FormatPrice(v Price) string { return FormatDecimal(int64(v), p.PriceDecimals) }

// FormatQty prints a quantity of p with QtyDecimals decimals.
func (p *PairConfig) FormatQty(v Qty) string { return FormatDecimal(int64(v), p.QtyDecimals) }

// mul returns a*b, or ok=false if the product of the non-negative a and b exceeds int64.
func mul(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
}

// Notional returns price x qty in units of the quote asset, or ok=false on overflow.
func (p *pair) Notional(price Price, qty Qty) (int64, bool) {
	n, ok := mul(int64(price), int64(qty))
	if !ok {
		return 0, false
	}
	if p.quoteMult == 1 {
		return n, true
	}
	return mul(n, p.quoteMult)
}

// notional is Notional for values already known to be in range (prices and quantities
// bounded by maxPrice and maxQty, whose product always fits).
func (p *pair) notional(price Price, qty Qty) int64 {
	return int64(price) * int64(qty) * p.quoteMult
}

// baseUnits converts lots to units of the base asset.
func (p *pair) baseUnits(q Qty) int64 { return int64(q) * p.baseMult }
