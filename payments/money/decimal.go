package money

import (
	"math"
	"math/big"

	"github.com/ericlagergren/decimal"
)

// Decimal arithmetic at the edges (DESIGN.md sections 3 and 9): conversions and rate
// arithmetic go through github.com/ericlagergren/decimal with an explicit rounding mode per
// operation, so every result is rounded exactly once, by the library.

// calcPrecision is the working precision of exact intermediate results: an int64 amount
// (19 digits) times a rate of up to 30 integer and MaxRatePlaces decimal digits, times a
// power of ten for the places of the target asset, fits with room to spare.
const calcPrecision = 120

// mode maps a Rounding to the library's rounding mode.
func (r Rounding) mode() decimal.RoundingMode {
	switch r {
	case HalfUp:
		return decimal.ToNearestAway
	case Down:
		return decimal.ToZero
	case Up:
		return decimal.AwayFromZero
	}
	return decimal.ToNearestEven
}

// exact is a context in which products and sums of our operands are exact.
func exact(mode Rounding) decimal.Context {
	return decimal.Context{Precision: calcPrecision, RoundingMode: mode.mode()}
}

// decOf returns mant x 10^-scale as a decimal.
func decOf(mant *big.Int, scale int) *decimal.Big {
	return new(decimal.Big).SetBigMantScale(mant, scale)
}

// toInt64 returns the integer value of z (already rounded), or false when it does not fit an
// int64 or is MinInt64 (which has no negation).
func toInt64(z *decimal.Big) (int64, bool) {
	if !z.IsFinite() || !z.IsInt() {
		return 0, false
	}
	v, ok := z.Int64()
	if !ok || v == math.MinInt64 {
		return 0, false
	}
	return v, true
}

// mulRound is x * y * 10^shift rounded once to an integer with mode.
func mulRound(x, y *decimal.Big, shift int, mode Rounding) *decimal.Big {
	ctx := exact(mode)
	z := ctx.Mul(new(decimal.Big), x, y)
	z = ctx.Mul(z, z, new(decimal.Big).SetMantScale(1, -shift))
	return ctx.Quantize(z, 0)
}

// quoRound is num / den (den != 0) rounded once to an integer with mode. The library rounds
// a quotient correctly at a precision; the precision that ends at the units digit is the
// number of digits of the truncated quotient. A quotient below 1 in magnitude is moved by an
// even offset (10) first, which changes neither its rounding direction nor its parity.
func quoRound(num, den *decimal.Big, mode Rounding) *decimal.Big {
	ctx := decimal.Context{Precision: calcPrecision, RoundingMode: decimal.ToZero}
	t := ctx.QuoInt(new(decimal.Big), num, den)
	if t.Sign() == 0 {
		off := new(decimal.Big).SetMantScale(10, 0)
		if num.Sign()*den.Sign() < 0 {
			off.Neg(off)
		}
		shifted := ctx.Add(new(decimal.Big), num, ctx.Mul(new(decimal.Big), off, den))
		q := quoRound(shifted, den, mode)
		return ctx.Sub(q, q, off)
	}
	digits := len(new(big.Int).Abs(t.Int(nil)).String())
	c := decimal.Context{Precision: digits, RoundingMode: mode.mode()}
	return c.Quo(new(decimal.Big), num, den)
}
