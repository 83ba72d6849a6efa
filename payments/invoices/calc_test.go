package invoices

import (
	"testing"

	"svc/payments/products"
)

func pct(v int64) products.Adjustment {
	return products.Adjustment{Type: products.AdjustPercentage, Value: v}
}
func fixed(v int64) products.Adjustment {
	return products.Adjustment{Type: products.AdjustFixed, Value: v}
}

// Each case is worked by hand in minor units (kobo / cents).
func TestComputeHandWorked(t *testing.T) {
	cases := []struct {
		name                     string
		qty, price               int64
		discount, tax            products.Adjustment
		sub, disc, taxAmt, total int64
	}{
		{"plain", 3, 1000, products.Adjustment{}, products.Adjustment{}, 3000, 0, 0, 3000},
		// 2 x 49.99 = 99.98; 7.5% VAT = 7.4985 -> 7.50; total 107.48
		{"percentage tax rounds half up", 2, 4999, products.Adjustment{}, pct(75000), 9998, 0, 750, 10748},
		// 1 x 10.00, 10% off = 1.00; 9.00 + fixed tax 0.50 = 9.50
		{"percentage discount then fixed tax", 1, 1000, pct(100000), fixed(50), 1000, 100, 50, 950},
		// 4 x 25.00 = 100.00; fixed discount 15.00 -> 85.00; 7.5% of 85.00 = 6.375 -> 6.38
		{"fixed discount then percentage tax", 4, 2500, fixed(1500), pct(75000), 10000, 1500, 638, 9138},
		// discount larger than the line is capped at the subtotal
		{"fixed discount capped", 1, 500, fixed(900), products.Adjustment{}, 500, 500, 0, 0},
		// 3 x 0.33 = 0.99; 33.3333% off = 0.32999967 -> 0.33; 0.66 + 12.5% = 0.0825 -> 0.08
		{"fractional percentages", 3, 33, pct(333333), pct(125000), 99, 33, 8, 74},
		// half-up at exactly .5: 1 x 0.10, 5% tax = 0.005 -> 0.01
		{"tie rounds up", 1, 10, products.Adjustment{}, pct(50000), 10, 0, 1, 11},
		// 100% discount
		{"free", 2, 700, pct(1000000), pct(75000), 1400, 1400, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Line{Quantity: c.qty, UnitPrice: c.price, Discount: c.discount, Tax: c.tax}
			if err := Compute("NGN", &l); err != nil {
				t.Fatal(err)
			}
			if l.Subtotal != c.sub || l.DiscountAmount != c.disc || l.TaxAmount != c.taxAmt || l.Total != c.total {
				t.Fatalf("got sub %d disc %d tax %d total %d, want %d %d %d %d",
					l.Subtotal, l.DiscountAmount, l.TaxAmount, l.Total, c.sub, c.disc, c.taxAmt, c.total)
			}
		})
	}
}

func TestTotalOfManyLines(t *testing.T) {
	var lines []Line
	var want int64
	for i := int64(1); i <= 50; i++ {
		l := Line{Quantity: i, UnitPrice: 199, Tax: pct(75000)} // i x 1.99 + 7.5%
		if err := Compute("USD", &l); err != nil {
			t.Fatal(err)
		}
		// by hand: subtotal 199i cents, tax = round_half_up(199i * 0.075)
		sub := 199 * i
		tax := (sub*75 + 500) / 1000
		if l.Total != sub+tax {
			t.Fatalf("line %d: total %d, want %d", i, l.Total, sub+tax)
		}
		want += sub + tax
		lines = append(lines, l)
	}
	got, err := Total(lines)
	if err != nil || got != want {
		t.Fatalf("total %d (%v), want %d", got, err, want)
	}
}

func TestComputeRefusesOverflow(t *testing.T) {
	l := Line{Quantity: 1 << 40, UnitPrice: 1 << 40}
	if err := Compute("NGN", &l); err == nil {
		t.Fatal("no overflow error")
	}
}
