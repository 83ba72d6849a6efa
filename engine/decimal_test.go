package engine

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	cases := []struct {
		in   string
		dec  int
		want int64
		why  DecimalReason
	}{
		{"1500.25", 2, 150025, 0},
		{"1500", 2, 150000, 0},
		{"0.01", 2, 1, 0},
		{"007.5", 2, 750, 0},
		{"1.5", 6, 1500000, 0},
		{"9223372036854775807", 0, math.MaxInt64, 0},
		{"92233720368547758.07", 2, math.MaxInt64, 0},
		{"92233720368547758.08", 2, 0, ReasonOverflow},
		{"9223372036854775808", 0, 0, ReasonOverflow},
		{"99999999999999999999999", 0, 0, ReasonOverflow},
		{"1000000000000000000", 2, 0, ReasonOverflow},
		{"", 2, 0, ReasonEmpty},
		{"-1", 2, 0, ReasonNegative},
		{"+1", 2, 0, ReasonSyntax},
		{"0", 2, 0, ReasonZero},
		{"0.00", 2, 0, ReasonZero},
		{"1e3", 2, 0, ReasonExponent},
		{"1.5E2", 2, 0, ReasonExponent},
		{"1.001", 2, 0, ReasonTooManyDecimals},
		{"1.000", 2, 0, ReasonTooManyDecimals},
		{"1.", 2, 0, ReasonSyntax},
		{".5", 2, 0, ReasonSyntax},
		{"1.2.3", 2, 0, ReasonSyntax},
		{"1,5", 2, 0, ReasonSyntax},
		{" 1", 2, 0, ReasonSyntax},
		{"NaN", 2, 0, ReasonSyntax},
	}
	for _, c := range cases {
		got, err := ParseDecimal(c.in, c.dec)
		if c.why == 0 {
			if err != nil || got != c.want {
				t.Errorf("ParseDecimal(%q,%d) = %d, %v; want %d", c.in, c.dec, got, err, c.want)
			}
			continue
		}
		var de *DecimalError
		if !errors.As(err, &de) || de.Reason != c.why {
			t.Errorf("ParseDecimal(%q,%d) err = %v; want reason %v", c.in, c.dec, err, c.why)
		}
		if !errors.Is(err, &DecimalError{Reason: c.why}) {
			t.Errorf("errors.Is failed for %q", c.in)
		}
	}
}

func TestFormatDecimal(t *testing.T) {
	cases := []struct {
		v    int64
		dec  int
		want string
	}{
		{150025, 2, "1500.25"}, {1, 2, "0.01"}, {0, 2, "0.00"}, {-1, 2, "-0.01"},
		{1500000, 6, "1.500000"}, {42, 0, "42"}, {0, 0, "0"}, {-150025, 4, "-15.0025"},
		{math.MaxInt64, 2, "92233720368547758.07"}, {math.MinInt64, 0, "-9223372036854775808"},
	}
	for _, c := range cases {
		if got := FormatDecimal(c.v, c.dec); got != c.want {
			t.Errorf("FormatDecimal(%d,%d) = %q; want %q", c.v, c.dec, got, c.want)
		}
	}
}

func TestDecimalRoundTrip(t *testing.T) {
	for dec := 0; dec <= 8; dec++ {
		for _, v := range []int64{1, 9, 10, 99, 100, 101, 123456789, math.MaxInt64 / 3, math.MaxInt64} {
			s := FormatDecimal(v, dec)
			got, err := ParseDecimal(s, dec)
			if err != nil || got != v {
				t.Fatalf("round trip %d at %d: %q -> %d, %v", v, dec, s, got, err)
			}
		}
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"1", "0.01", "1e5", "-3", "12.345", "99999999999999999999"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, dec int) {
		dec = ((dec % 9) + 9) % 9
		v, err := ParseDecimal(s, dec)
		if err != nil {
			return
		}
		if v <= 0 {
			t.Fatalf("accepted non-positive %q -> %d", s, v)
		}
		back, err := ParseDecimal(FormatDecimal(v, dec), dec)
		if err != nil || back != v {
			t.Fatalf("round trip %q -> %d -> %v", s, v, err)
		}
		// cross-check with strconv for integers
		if u, err := strconv.ParseUint(s, 10, 63); err == nil && dec == 0 && int64(u) != v {
			t.Fatalf("%q: %d vs strconv %d", s, v, u)
		}
	})
}
