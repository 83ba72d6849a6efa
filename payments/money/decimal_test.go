package money

import (
	"math/big"
	"testing"
)

// FuzzDecimalAgreesWithBigInt: the decimal-library conversion (convertDecimal,
// inverseDecimal) gives exactly what the hand-written math/big code (Convert, Inverse) gives,
// for every amount, asset pair, rate and rounding mode, errors included.
func FuzzDecimalAgreesWithBigInt(f *testing.F) {
	for _, s := range []struct {
		minor    int64
		rate     string
		from, to uint8
		mode     uint8
	}{
		{100000, "0.000625", 0, 2, 0}, {1, "1600", 2, 0, 0}, {5, "0.5", 0, 0, 0}, {-3, "0.5", 0, 0, 1},
		{1234567, "0.00066", 0, 1, 0}, {9223372036854775807, "1000000", 2, 0, 2}, {-7, "3", 3, 3, 3},
		{1, "999999999999999999999999999999.999999999999999999", 0, 2, 3}, {7, "0.000000000000000001", 2, 0, 0},
	} {
		f.Add(s.minor, s.rate, s.from, s.to, s.mode)
	}
	f.Fuzz(func(t *testing.T, minor int64, rs string, from, to, mode uint8) {
		r, err := ParseRate(rs)
		if err != nil {
			return
		}
		a := Amount{Assets[int(from)%len(Assets)], minor}
		dst := Assets[int(to)%len(Assets)]
		m := Rounding(int(mode) % 4)
		old, oldErr := Convert(a, dst, r, m)
		got, err := convertDecimal(a, dst, r, m)
		if old != got || (oldErr == nil) != (err == nil) {
			t.Fatalf("Convert(%v %s, %s, %s, %s): math/big %v %v, decimal %v %v", a.Minor, a.Asset, dst, rs, m, old, oldErr, got, err)
		}
		oi, oErr := r.Inverse()
		ni, nErr := inverseDecimal(r)
		if (oErr == nil) != (nErr == nil) || (oErr == nil && (oi.scale != ni.scale || oi.mant.Cmp(ni.mant) != 0)) {
			t.Fatalf("Inverse(%s): math/big %v %v, decimal %v %v", rs, oi, oErr, ni, nErr)
		}
		// And both against the exact fraction.
		if oldErr == nil {
			exact := new(big.Rat).Mul(new(big.Rat).SetInt64(minor), r.Rat())
			shift := dst.Places() - a.Asset.Places()
			if shift >= 0 {
				exact.Mul(exact, new(big.Rat).SetInt(pow10(shift)))
			} else {
				exact.Quo(exact, new(big.Rat).SetInt(pow10(-shift)))
			}
			diff := new(big.Rat).Sub(exact, new(big.Rat).SetInt64(got.Minor))
			if diff.Abs(diff).Cmp(big.NewRat(1, 1)) >= 0 {
				t.Fatalf("Convert(%d, %s) = %d, exact %s", minor, rs, got.Minor, exact.FloatString(6))
			}
		}
	})
}
