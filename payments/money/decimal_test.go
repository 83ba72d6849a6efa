package money

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// roundRat is the reference rounding of an exact fraction to an integer (the test's small,
// obviously correct model of the four modes).
func roundRat(x *big.Rat, mode Rounding) *big.Int {
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int)) // toward zero
	if r.Sign() == 0 {
		return q
	}
	away := func() *big.Int { return q.Add(q, big.NewInt(int64(x.Sign()))) }
	twice := new(big.Int).Lsh(new(big.Int).Abs(r), 1)
	c := twice.Cmp(x.Denom())
	switch {
	case mode == Up, mode == HalfUp && c >= 0, mode == HalfEven && (c > 0 || c == 0 && q.Bit(0) == 1):
		return away()
	}
	return q
}

func pow10Rat(n int) *big.Rat {
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil))
	if n < 0 {
		return p.Inv(p)
	}
	return p
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func fits(v *big.Int) bool { return v.IsInt64() && v.Int64() != math.MinInt64 }

// FuzzDecimalAgreesWithBigRat: Convert, ConvertAtPrice and InverseRound (on the decimal
// library) give exactly what exact big.Rat arithmetic rounded once gives, for every amount,
// asset pair, rate and rounding mode, overflow included. Step 1 of this change (commit
// ef0a814) compared the decimal code with the hand-written math/big code it replaced.
func FuzzDecimalAgreesWithBigRat(f *testing.F) {
	for _, s := range []struct {
		minor    int64
		rate     string
		from, to uint8
		mode     uint8
	}{
		{100000, "0.000625", 0, 2, 0}, {1, "1600", 2, 0, 0}, {5, "0.5", 0, 0, 0}, {-3, "0.5", 0, 0, 1},
		{1234567, "0.00066", 0, 1, 0}, {9223372036854775807, "1000000", 2, 0, 2}, {-7, "3", 3, 3, 3},
		{1, "999999999999999999999999999999.999999999999999999", 0, 2, 3}, {7, "0.000000000000000001", 2, 0, 0},
		{-9223372036854775807, "1", 0, 0, 0}, {3, "1600.5", 0, 2, 1},
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
		shift := pow10Rat(dst.Places() - a.Asset.Places())

		want := roundRat(new(big.Rat).Mul(new(big.Rat).Mul(new(big.Rat).SetInt64(minor), r.Rat()), shift), m)
		got, err := Convert(a, dst, r, m)
		switch {
		case !fits(want) && !errors.Is(err, ErrOverflow):
			t.Fatalf("Convert(%d %s, %s, %s, %s) = %v, %v; want ErrOverflow", minor, a.Asset, dst, rs, m, got, err)
		case fits(want) && (err != nil || got != Amount{dst, want.Int64()}):
			t.Fatalf("Convert(%d %s, %s, %s, %s) = %v, %v; want %s", minor, a.Asset, dst, rs, m, got, err, want)
		}

		want = roundRat(new(big.Rat).Quo(new(big.Rat).Mul(new(big.Rat).SetInt64(minor), shift), r.Rat()), m)
		got, err = ConvertAtPrice(a, dst, r, m)
		switch {
		case !fits(want) && !errors.Is(err, ErrOverflow):
			t.Fatalf("ConvertAtPrice(%d %s, %s, %s, %s) = %v, %v; want ErrOverflow", minor, a.Asset, dst, rs, m, got, err)
		case fits(want) && (err != nil || got != Amount{dst, want.Int64()}):
			t.Fatalf("ConvertAtPrice(%d %s, %s, %s, %s) = %v, %v; want %s", minor, a.Asset, dst, rs, m, got, err, want)
		}

		places := int(from) % (MaxRatePlaces + 1)
		want = roundRat(new(big.Rat).Mul(new(big.Rat).Inv(r.Rat()), pow10Rat(places)), m)
		inv, err := r.InverseRound(places, m)
		switch {
		case want.Sign() <= 0 && err == nil:
			t.Fatalf("InverseRound(%s, %d, %s) = %s; want an error (rounds to zero)", rs, places, m, inv)
		case want.Sign() > 0 && (err != nil || inv.Rat().Cmp(new(big.Rat).Mul(new(big.Rat).SetInt(want), pow10Rat(-places))) != 0):
			t.Fatalf("InverseRound(%s, %d, %s) = %s, %v; want %s e-%d", rs, places, m, inv, err, want, places)
		}

		num, den := big.NewInt(minor), r.Rat().Num()
		want = roundRat(new(big.Rat).SetFrac(num, den), m)
		if v, err := Ratio(num, den, m); fits(want) && (err != nil || v != want.Int64()) {
			t.Fatalf("Ratio(%d, %s, %s) = %d, %v; want %s", minor, den, m, v, err, want)
		}
	})
}

func TestRateStrings(t *testing.T) {
	for _, tc := range []struct{ in, str, fixed2 string }{
		{"1600", "1600", "1600.00"}, {"0.000625", "0.000625", "0.00"}, {"1600.505", "1600.505", "1600.51"},
		{"007.10", "7.1", "7.10"}, {"0.000000000000000001", "0.000000000000000001", "0.00"},
	} {
		r := MustRate(tc.in)
		if r.String() != tc.str || r.StringFixed(2) != tc.fixed2 {
			t.Fatalf("%s: %q %q", tc.in, r.String(), r.StringFixed(2))
		}
	}
	if r, err := RateOfMinor(160050, 2); err != nil || r.String() != "1600.5" {
		t.Fatal(r, err)
	}
}
