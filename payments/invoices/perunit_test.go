package invoices

import (
	"math"
	"testing"

	"svc/payments/products"
)

// Issue 32 item 5: a product's fixed tax or discount is per unit, so a line of n units gets n
// times it; a product that would overflow is refused (a field error on the line's quantity),
// never kept per unit as before.
func TestPerUnitRefusesOverflow(t *testing.T) {
	fixed := func(v int64) products.Adjustment { return products.Adjustment{Type: products.AdjustFixed, Value: v} }
	pct := products.Adjustment{Type: products.AdjustPercentage, Value: 750}
	for _, c := range []struct {
		name string
		in   products.Adjustment
		qty  int64
		want products.Adjustment
		ok   bool
	}{
		{"fixed times quantity", fixed(150), 3, fixed(450), true},
		{"a percentage is not multiplied", pct, 3, pct, true},
		{"none", products.Adjustment{}, 5, products.Adjustment{}, true},
		{"at the bound", fixed(math.MaxInt64 / 8 / 1000), 1000, fixed(math.MaxInt64 / 8 / 1000 * 1000), true},
		{"past the bound", fixed(math.MaxInt64/8/1000 + 1), 1000, fixed(math.MaxInt64/8/1000 + 1), false},
		{"past int64", fixed(math.MaxInt64 / 2), 3, fixed(math.MaxInt64 / 2), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := perUnit(c.in, c.qty)
			if ok != c.ok || (ok && got != c.want) {
				t.Fatalf("perUnit(%+v, %d) = %+v, %v", c.in, c.qty, got, ok)
			}
		})
	}
}
