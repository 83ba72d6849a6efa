package transfers

import (
	"errors"
	"math"
	"testing"

	"svc/payments/money"
)

func TestSourceRoundsUpToTheMicroUSDT(t *testing.T) {
	for _, c := range []struct {
		amount string
		asset  money.Asset
		price  int64
		want   string
	}{
		{"100.00", money.USD, 100, "100.000000"},
		{"0.01", money.USD, 100, "0.010000"},
		{"16000.00", money.NGN, 159200, "10.050252"}, // 10.0502512... up
		{"1592.00", money.NGN, 159200, "1.000000"},
		{"0.01", money.NGN, 159200, "0.000007"}, // 0.00000628... up
	} {
		got, err := Source(money.MustParse(c.asset, c.amount), c.price)
		if err != nil || got.String() != c.want || got.Asset != money.USDT {
			t.Errorf("Source(%s %s at %d) = %v, %v; want %s", c.amount, c.asset, c.price, got, err, c.want)
		}
	}
	if _, err := Source(money.MustParse(money.USD, "1"), 0); err == nil {
		t.Fatal("zero price accepted")
	}
	// Past int64 micro-USDT: refused (issue 32 item 5: rounding and range in payments/money).
	if _, err := Source(money.New(money.NGN, math.MaxInt64/10), 1); !errors.Is(err, money.ErrOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	if !CanMove(Processing, Settled) || !CanMove(Processing, Failed) || !CanMove(Settled, Failed) || CanMove(Failed, Settled) || CanMove(Failed, Processing) {
		t.Fatal("state machine")
	}
}
