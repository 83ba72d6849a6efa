package offramps

import (
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
	} {
		got, err := ngnDown(money.MustParse(money.USDT, c.amount), c.price)
		if err != nil || got.String() != c.want {
			t.Errorf("%s at %d: %v %v want %s", c.amount, c.price, got, err, c.want)
		}
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
