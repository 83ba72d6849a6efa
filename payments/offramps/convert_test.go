package offramps

import (
	"errors"
	"math"
	"testing"

	"svc/payments/money"
)

func TestNGNIsRoundedDown(t *testing.T) {
	for _, c := range []struct {
		amount string
		price  int64
		want   string
	}{
		{"250", 159200, "398000.00"},
		{"0.000001", 159200, "0.00"},    // 0.001592 NGN
		{"0.000007", 159200, "0.01"},    // 0.011144 down
		{"1.999999", 160000, "3199.99"}, // 3199.9984 down
		{"0.000001", 1, "0.00"},         // 10^-8 NGN down
	} {
		got, err := ngnDown(money.MustParse(money.USDT, c.amount), c.price)
		if err != nil || got.String() != c.want {
			t.Errorf("%s at %d: %v %v want %s", c.amount, c.price, got, err, c.want)
		}
	}
	// USDC has USDT's places, from payments/money's table; past int64 kobo is refused.
	if got, err := ngnDown(money.MustParse(money.USDC, "2.5"), 160000); err != nil || got.String() != "4000.00" {
		t.Errorf("USDC: %v %v", got, err)
	}
	if _, err := ngnDown(money.New(money.USDT, math.MaxInt64), math.MaxInt64); !errors.Is(err, money.ErrOverflow) {
		t.Errorf("overflow: %v", err)
	}
	if _, err := ngnDown(money.MustParse(money.USDT, "1"), 0); err == nil {
		t.Error("zero price accepted")
	}
}

func TestDefaultNames(t *testing.T) {
	if f, l := DefaultNames("ada.obi@example.com", "", ""); f != "ada.obi" || l != "Customer" {
		t.Fatal(f, l)
	}
	if f, l := DefaultNames("x@example.com", "Ada", "Obi"); f != "Ada" || l != "Obi" {
		t.Fatal(f, l)
	}
}
