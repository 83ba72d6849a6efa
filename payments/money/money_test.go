package money_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"svc/payments/money"
)

func TestParseAndFormat(t *testing.T) {
	cases := []struct {
		asset money.Asset
		in    string
		minor int64
		out   string
	}{
		{money.NGN, "0", 0, "0.00"},
		{money.NGN, "1500", 150000, "1500.00"},
		{money.NGN, "1500.5", 150050, "1500.50"},
		{money.NGN, "0.01", 1, "0.01"},
		{money.NGN, "-2.30", -230, "-2.30"},
		{money.NGN, "007.10", 710, "7.10"},
		{money.USDT, "1.000001", 1000001, "1.000001"},
		{money.USDT, "0.5", 500000, "0.500000"},
		{money.USDC, "9223372036854.775807", math.MaxInt64, "9223372036854.775807"},
	}
	for _, c := range cases {
		a, err := money.Parse(c.asset, c.in)
		if err != nil {
			t.Fatalf("Parse(%s, %q): %v", c.asset, c.in, err)
		}
		if a.Minor != c.minor || a.Asset != c.asset {
			t.Fatalf("Parse(%s, %q) = %+v, want %d", c.asset, c.in, a, c.minor)
		}
		if a.String() != c.out {
			t.Fatalf("Format(%+v) = %q, want %q", a, a.String(), c.out)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	bad := []struct {
		asset money.Asset
		in    string
		why   string
	}{
		{money.NGN, "", "decimal string"},
		{money.NGN, "1.234", "at most 2 decimal places"},
		{money.USDT, "1.0000001", "at most 6 decimal places"},
		{money.NGN, "1e5", "decimal string"},
		{money.NGN, "1E5", "decimal string"},
		{money.NGN, "+1", "decimal string"},
		{money.NGN, " 1", "decimal string"},
		{money.NGN, "1 ", "decimal string"},
		{money.NGN, ".5", "decimal string"},
		{money.NGN, "5.", "decimal string"},
		{money.NGN, ".", "decimal string"},
		{money.NGN, "-", "decimal string"},
		{money.NGN, "--1", "decimal string"},
		{money.NGN, "1.2.3", "decimal string"},
		{money.NGN, "1,000", "decimal string"},
		{money.NGN, "NaN", "decimal string"},
		{money.NGN, "Infinity", "decimal string"},
		{money.NGN, "0x10", "decimal string"},
		{money.NGN, "92233720368547758.08", "too large"},
		{money.NGN, "99999999999999999999999", "too large"},
		{money.Asset("BTC"), "1", "unknown asset"},
	}
	for _, c := range bad {
		_, err := money.Parse(c.asset, c.in)
		var pe *money.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%s, %q) err = %v, want a *ParseError", c.asset, c.in, err)
		}
		if !strings.Contains(pe.Error(), c.why) {
			t.Fatalf("Parse(%s, %q) err = %q, want it to mention %q", c.asset, c.in, pe, c.why)
		}
		fe := pe.Field("amount")
		if f, ok := fe.(interface{ APIField() string }); !ok || f.APIField() != "amount" {
			t.Fatalf("Field(amount) = %#v", fe)
		}
	}
	if _, err := money.ParsePositive(money.NGN, "0.00"); err == nil {
		t.Fatal("ParsePositive accepted zero")
	}
	if _, err := money.ParsePositive(money.NGN, "-1"); err == nil {
		t.Fatal("ParsePositive accepted a negative amount")
	}
}

func TestCheckedArithmetic(t *testing.T) {
	a := money.New(money.NGN, 100)
	if s, err := a.Add(money.New(money.NGN, 50)); err != nil || s.Minor != 150 {
		t.Fatalf("Add = %v, %v", s, err)
	}
	if _, err := a.Add(money.New(money.USD, 1)); !errors.Is(err, money.ErrAssetMismatch) {
		t.Fatalf("Add across assets: %v", err)
	}
	if _, err := money.New(money.NGN, math.MaxInt64).Add(money.New(money.NGN, 1)); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("Add overflow: %v", err)
	}
	if _, err := money.New(money.NGN, -math.MaxInt64).Sub(money.New(money.NGN, 1)); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("Sub to MinInt64 must be refused: %v", err)
	}
	if d, err := a.Sub(money.New(money.NGN, 250)); err != nil || d.Minor != -150 {
		t.Fatalf("Sub = %v, %v", d, err)
	}
	if p, err := a.Mul(-3); err != nil || p.Minor != -300 {
		t.Fatalf("Mul = %v, %v", p, err)
	}
	if _, err := money.New(money.NGN, math.MaxInt64/2+1).Mul(2); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("Mul overflow: %v", err)
	}
	if _, err := money.New(money.NGN, -1).Mul(math.MinInt64); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("Mul -1*MinInt64: %v", err)
	}
}

func TestConvertRounding(t *testing.T) {
	ngnPerUSDT := money.MustRate("1600")
	usdtPerNGN, err := ngnPerUSDT.Inverse()
	if err != nil {
		t.Fatal(err)
	}
	if usdtPerNGN.String() != "0.000625" {
		t.Fatalf("inverse = %s", usdtPerNGN)
	}
	// 1000.00 NGN at 0.000625 USDT/NGN = 0.625 USDT exactly.
	got, err := money.Convert(money.MustParse(money.NGN, "1000"), money.USDT, usdtPerNGN, money.HalfEven)
	if err != nil || got.String() != "0.625000" {
		t.Fatalf("Convert = %v, %v", got, err)
	}
	// USDT -> NGN: 0.000001 USDT * 1600 = 0.0016 NGN -> 0.00
	got, _ = money.Convert(money.New(money.USDT, 1), money.NGN, ngnPerUSDT, money.HalfEven)
	if got.Minor != 0 {
		t.Fatalf("tiny conversion = %v", got)
	}
	// Ties: x.xx5 -> half-even vs half-up vs down vs up.
	r := money.MustRate("0.5")
	for _, c := range []struct {
		minor int64
		mode  money.Rounding
		want  int64
	}{
		{1, money.HalfEven, 0}, {3, money.HalfEven, 2}, {5, money.HalfEven, 2}, {7, money.HalfEven, 4},
		{1, money.HalfUp, 1}, {3, money.HalfUp, 2}, {-1, money.HalfUp, -1}, {-3, money.HalfEven, -2},
		{1, money.Down, 0}, {-1, money.Down, 0}, {1, money.Up, 1}, {-1, money.Up, -1},
	} {
		got, err := money.Convert(money.New(money.NGN, c.minor), money.NGN, r, c.mode)
		if err != nil || got.Minor != c.want {
			t.Fatalf("%d * 0.5 (%s) = %v, %v; want %d", c.minor, c.mode, got, err, c.want)
		}
	}
	// NGN -> USD at 0.00066 with 2-place target: 12345.67 * 0.00066 = 8.1481422 -> 8.15
	got, _ = money.Convert(money.MustParse(money.NGN, "12345.67"), money.USD, money.MustRate("0.00066"), money.HalfEven)
	if got.String() != "8.15" {
		t.Fatalf("NGN->USD = %s", got)
	}
	if _, err := money.Convert(money.New(money.USDT, math.MaxInt64), money.NGN, money.MustRate("1000000"), money.Down); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("overflowing conversion: %v", err)
	}
	for _, bad := range []string{"0", "-1", "1e3", "", "0.0000000000000000001"} {
		if _, err := money.ParseRate(bad); err == nil {
			t.Fatalf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	b, _ := money.MustParse(money.USDT, "12.5").MarshalJSON()
	if string(b) != `"12.500000"` {
		t.Fatalf("json = %s", b)
	}
}

// FuzzParse: whatever Parse accepts prints back to a string that parses to the same amount,
// never has more places than the asset, and never contains an exponent; whatever it refuses
// is a *ParseError.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-2.25", "1e3", "", ".", "9223372036854775807", "00.010", "1.0000001", "-0"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		asset := money.Assets[int(which)%len(money.Assets)]
		a, err := money.Parse(asset, s)
		if err != nil {
			var pe *money.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T", s, err)
			}
			return
		}
		out := a.String()
		if strings.ContainsAny(out, "eE+") {
			t.Fatalf("Format has an exponent or sign: %q", out)
		}
		if i := strings.IndexByte(out, '.'); i < 0 || len(out)-i-1 != asset.Places() {
			t.Fatalf("Format(%q) = %q: wrong places", s, out)
		}
		back, err := money.Parse(asset, out)
		if err != nil || back != a {
			t.Fatalf("round trip %q -> %q -> %+v, %v", s, out, back, err)
		}
	})
}
