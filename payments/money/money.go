// Package money holds exact amounts of the assets the payments side moves: an int64 count of
// the asset's minor unit (NGN kobo and US cents: 2 places; USDT and USDC: 6 places).
//
// No floats anywhere. Decimal strings are parsed and printed at the edge only:
//
//	a, err := money.Parse(money.NGN, "1500.5")       // {NGN 150050}
//	if err != nil { return err.(*money.ParseError).Field("amount") } // a 400 naming the field
//	b, err := a.Add(money.New(money.NGN, 50))         // checked: ErrOverflow, ErrAssetMismatch
//	s := b.String()                                   // "1501.00" (always the asset's places)
//
// Conversion between assets is at a decimal Rate with an explicit Rounding:
//
//	rate, _ := money.ParseRate("0.000625")            // USDT per NGN
//	usdt, _ := money.Convert(b, money.USDT, rate, money.HalfEven)
//
// Rounding policy of the service (see docs/decisions.md): conversions that settle money use
// HalfEven (banker's rounding: unbiased, so rounding differences cancel out over many
// conversions rather than drifting one way). The rounded amount is what the customer or
// merchant is credited or debited; the difference from the exact product is borne by the
// house, because every conversion in the ledger goes through the system FX accounts of both
// assets, and those absorb it (system accounts may go negative). Callers that must never pay
// out more than they received (a payout quoted to the kobo) may pass Down instead.
package money

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/ericlagergren/decimal"
)

// Asset is a currency or token the payments side holds.
type Asset string

// The assets and their decimal places (DESIGN.md section 6).
const (
	NGN  Asset = "NGN"  // 2 places (kobo)
	USD  Asset = "USD"  // 2 places (cents)
	USDT Asset = "USDT" // 6 places
	USDC Asset = "USDC" // 6 places
)

// Assets lists every asset, in a fixed order.
var Assets = []Asset{NGN, USD, USDT, USDC}

// Places is the number of decimal places of the asset's minor unit; 0 for an unknown asset.
func (a Asset) Places() int {
	switch a {
	case NGN, USD:
		return 2
	case USDT, USDC:
		return 6
	}
	return 0
}

// Valid reports whether a is one of the known assets.
func (a Asset) Valid() bool { return a.Places() > 0 }

// String is the asset code.
func (a Asset) String() string { return string(a) }

// ParseAsset accepts an asset code in upper case.
func ParseAsset(s string) (Asset, error) {
	a := Asset(s)
	if !a.Valid() {
		return "", fmt.Errorf("%w: %q", ErrUnknownAsset, s)
	}
	return a, nil
}

// Errors of the arithmetic.
var (
	ErrUnknownAsset  = errors.New("money: unknown asset")
	ErrAssetMismatch = errors.New("money: amounts of different assets")
	ErrOverflow      = errors.New("money: amount out of range")
	ErrBadRate       = errors.New("money: invalid rate")
)

// Amount is an exact quantity of one asset, counted in its minor unit (10^-Places). The zero
// Amount has no asset; use New or Zero.
type Amount struct {
	Asset Asset
	Minor int64
}

// New returns minor units of asset.
func New(asset Asset, minor int64) Amount { return Amount{Asset: asset, Minor: minor} }

// Zero is no amount of asset.
func Zero(asset Asset) Amount { return Amount{Asset: asset} }

// Sign is -1, 0 or 1.
func (a Amount) Sign() int {
	switch {
	case a.Minor < 0:
		return -1
	case a.Minor > 0:
		return 1
	}
	return 0
}

// IsZero reports a zero quantity.
func (a Amount) IsZero() bool { return a.Minor == 0 }

// IsPositive reports a quantity above zero.
func (a Amount) IsPositive() bool { return a.Minor > 0 }

// Neg is -a. The most negative int64 has no negation and is refused by every checked
// operation, so it never arises from Parse or the arithmetic here.
func (a Amount) Neg() Amount { return Amount{a.Asset, -a.Minor} }

// Abs is |a|.
func (a Amount) Abs() Amount {
	if a.Minor < 0 {
		return a.Neg()
	}
	return a
}

// Add returns a+b; ErrAssetMismatch or ErrOverflow.
func (a Amount) Add(b Amount) (Amount, error) {
	if a.Asset != b.Asset {
		return Amount{}, fmt.Errorf("%w: %s + %s", ErrAssetMismatch, a.Asset, b.Asset)
	}
	s := a.Minor + b.Minor
	if (b.Minor > 0 && s < a.Minor) || (b.Minor < 0 && s > a.Minor) || s == math.MinInt64 {
		return Amount{}, ErrOverflow
	}
	return Amount{a.Asset, s}, nil
}

// Sub returns a-b; ErrAssetMismatch or ErrOverflow.
func (a Amount) Sub(b Amount) (Amount, error) {
	if b.Minor == math.MinInt64 {
		return Amount{}, ErrOverflow
	}
	return a.Add(b.Neg())
}

// Mul returns a*n; ErrOverflow.
func (a Amount) Mul(n int64) (Amount, error) {
	if a.Minor == 0 || n == 0 {
		return Amount{a.Asset, 0}, nil
	}
	p := a.Minor * n
	if p/n != a.Minor || p == math.MinInt64 || (a.Minor == -1 && n == math.MinInt64) {
		return Amount{}, ErrOverflow
	}
	return Amount{a.Asset, p}, nil
}

// Cmp compares two amounts of the same asset: -1, 0 or 1. Different assets compare by asset
// code first, so Cmp is a total order usable for sorting.
func (a Amount) Cmp(b Amount) int {
	if a.Asset != b.Asset {
		return strings.Compare(string(a.Asset), string(b.Asset))
	}
	switch {
	case a.Minor < b.Minor:
		return -1
	case a.Minor > b.Minor:
		return 1
	}
	return 0
}

// String formats the amount as a decimal string with exactly the asset's places and no
// exponent: "1500.00", "-0.000001". An unknown asset prints the integer.
func (a Amount) String() string { return Format(a.Asset, a.Minor) }

// Format prints minor units of asset as a decimal string with exactly the asset's places.
func Format(asset Asset, minor int64) string {
	return string(AppendFormat(nil, asset, minor))
}

// AppendFormat appends Format(asset, minor) to b (no allocation beyond b's growth).
func AppendFormat(b []byte, asset Asset, minor int64) []byte {
	places := asset.Places()
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = uint64(-(minor + 1)) + 1 // |MinInt64| without overflow
		b = append(b, '-')
	}
	var buf [24]byte
	digits := strconv.AppendUint(buf[:0], u, 10)
	if places == 0 {
		return append(b, digits...)
	}
	if len(digits) <= places {
		b = append(b, '0', '.')
		for i := len(digits); i < places; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	cut := len(digits) - places
	b = append(b, digits[:cut]...)
	b = append(b, '.')
	return append(b, digits[cut:]...)
}

// MarshalJSON writes the amount as a decimal string.
func (a Amount) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 24), '"')
	b = AppendFormat(b, a.Asset, a.Minor)
	return append(b, '"'), nil
}

var _ json.Marshaler = Amount{}

// Rounding says how a result between two minor units is rounded.
type Rounding int

const (
	// HalfEven rounds to the nearest minor unit, ties to the even one (banker's rounding).
	// The service's default for conversions.
	HalfEven Rounding = iota
	// HalfUp rounds to the nearest minor unit, ties away from zero.
	HalfUp
	// Down truncates toward zero (never more than the exact value in magnitude).
	Down
	// Up rounds away from zero.
	Up
)

func (r Rounding) String() string {
	switch r {
	case HalfEven:
		return "half-even"
	case HalfUp:
		return "half-up"
	case Down:
		return "down"
	case Up:
		return "up"
	}
	return "Rounding(" + strconv.Itoa(int(r)) + ")"
}

// Rate is an exact positive decimal exchange rate: units of the target asset per one unit
// of the source asset (e.g. 1600.25 NGN per USDT, or 0.000625 USDT per NGN). It is a
// github.com/ericlagergren/decimal value, never modified after it is made.
type Rate struct {
	d *decimal.Big // > 0
}

// MaxRatePlaces is the most decimal places a rate may carry.
const MaxRatePlaces = 18

// ParseRate parses a positive decimal string with at most MaxRatePlaces places, no sign and
// no exponent.
func ParseRate(s string) (Rate, error) {
	intPart, frac, err := splitDecimal(s)
	if err != nil || len(intPart) > 30 || len(frac) > MaxRatePlaces {
		return Rate{}, fmt.Errorf("%w: %q", ErrBadRate, s)
	}
	m, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok || m.Sign() <= 0 {
		return Rate{}, fmt.Errorf("%w: %q (must be positive)", ErrBadRate, s)
	}
	return Rate{d: decOf(m, len(frac))}, nil
}

// RateOfMinor is the rate v x 10^-places (e.g. a price of 160050 kobo per unit is the rate
// RateOfMinor(160050, 2) = 1600.50). ErrBadRate unless v > 0 and 0 <= places <= MaxRatePlaces.
func RateOfMinor(v int64, places int) (Rate, error) {
	if v <= 0 || places < 0 || places > MaxRatePlaces {
		return Rate{}, ErrBadRate
	}
	return Rate{d: new(decimal.Big).SetMantScale(v, places)}, nil
}

// MustRate is ParseRate for constants; it panics on a bad literal.
func MustRate(s string) Rate {
	r, err := ParseRate(s)
	if err != nil {
		panic(err)
	}
	return r
}

// IsZero reports the zero Rate (not a valid rate).
func (r Rate) IsZero() bool { return r.d == nil }

// Rat returns the rate as a fraction.
func (r Rate) Rat() *big.Rat {
	if r.d == nil {
		return new(big.Rat)
	}
	return r.d.Rat(nil)
}

// String prints the rate with its own places, trailing zeros removed.
func (r Rate) String() string {
	if r.d == nil {
		return "0"
	}
	s := fmt.Sprintf("%f", r.d)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// StringFixed prints the rate rounded half away from zero to places decimal places.
func (r Rate) StringFixed(places int) string {
	if r.d == nil {
		return "0"
	}
	z := exact(HalfUp).Quantize(new(decimal.Big).Copy(r.d), places)
	return fmt.Sprintf("%f", z)
}

// Inverse is 1/r rounded half-even to MaxRatePlaces places.
func (r Rate) Inverse() (Rate, error) { return r.InverseRound(MaxRatePlaces, HalfEven) }

// InverseRound is 1/r rounded once with mode to places decimal places (at most
// MaxRatePlaces). ErrBadRate when it rounds to zero.
func (r Rate) InverseRound(places int, mode Rounding) (Rate, error) {
	if r.d == nil || places < 0 || places > MaxRatePlaces {
		return Rate{}, ErrBadRate
	}
	// 1/r = (10^places / r) x 10^-places; the integer quotient is rounded once.
	q := quoRound(new(decimal.Big).SetMantScale(1, -places), r.d, mode)
	if q.Sign() <= 0 {
		return Rate{}, fmt.Errorf("%w: inverse of %s rounds to zero", ErrBadRate, r)
	}
	return Rate{d: decOf(q.Int(nil), places)}, nil
}

// MarshalJSON writes the rate as a decimal string.
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// Convert returns a (of one asset) expressed in asset to at rate (units of to per unit of
// a.Asset), rounded to to's places with mode. Converting to the same asset is allowed (a
// percentage, say). Errors: ErrUnknownAsset, ErrBadRate, ErrOverflow.
//
// Exactly: result = a.Minor * rate * 10^(places(to) - places(from)), rounded once.
func Convert(a Amount, to Asset, rate Rate, mode Rounding) (Amount, error) {
	if !a.Asset.Valid() || !to.Valid() {
		return Amount{}, ErrUnknownAsset
	}
	if rate.d == nil {
		return Amount{}, ErrBadRate
	}
	v, ok := toInt64(mulRound(new(decimal.Big).SetMantScale(a.Minor, 0), rate.d, to.Places()-a.Asset.Places(), mode))
	if !ok {
		return Amount{}, ErrOverflow
	}
	return Amount{to, v}, nil
}

// ConvertAtPrice returns a expressed in asset to at a price of rate units of a.Asset per
// one unit of to (the inverse of Convert's rate: NGN at 1600 NGN per USDT gives USDT),
// rounded once to to's places with mode. Errors: as Convert.
//
// Exactly: result = a.Minor * 10^(places(to) - places(from)) / rate, rounded once.
func ConvertAtPrice(a Amount, to Asset, rate Rate, mode Rounding) (Amount, error) {
	if !a.Asset.Valid() || !to.Valid() {
		return Amount{}, ErrUnknownAsset
	}
	if rate.d == nil {
		return Amount{}, ErrBadRate
	}
	num := new(decimal.Big).SetMantScale(a.Minor, a.Asset.Places()-to.Places())
	v, ok := toInt64(quoRound(num, rate.d, mode))
	if !ok {
		return Amount{}, ErrOverflow
	}
	return Amount{to, v}, nil
}

// Ratio is num/den (den != 0) rounded once to an integer with mode: the rate arithmetic of
// callers that hold exact sums (a volume-weighted price, say). ErrOverflow beyond int64.
func Ratio(num, den *big.Int, mode Rounding) (int64, error) {
	if den.Sign() == 0 {
		return 0, ErrBadRate
	}
	v, ok := toInt64(quoRound(decOf(num, 0), decOf(den, 0), mode))
	if !ok {
		return 0, ErrOverflow
	}
	return v, nil
}
