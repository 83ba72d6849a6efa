package invoices

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/products"
	"svc/persistence/postgres"
)

// Compute fills the line's amounts from quantity, unit price, discount and tax:
//
//	subtotal = quantity x unit_price
//	discount = percentage of subtotal (rounded half up to the minor unit) or the fixed
//	           amount, at most the subtotal
//	tax      = percentage of (subtotal - discount), rounded half up, or the fixed amount
//	total    = subtotal - discount + tax
//
// Fixed discounts and taxes of a line are amounts for the whole line.
func Compute(currency string, l *Line) error {
	if l.Quantity <= 0 || l.UnitPrice < 0 {
		return fmt.Errorf("invoices: quantity must be positive and unit price not negative")
	}
	if l.UnitPrice > 0 && l.Quantity > math.MaxInt64/4/l.UnitPrice {
		return errTooLarge
	}
	l.Subtotal = l.Quantity * l.UnitPrice
	var err error
	switch l.Discount.Type {
	case products.AdjustPercentage:
		if l.DiscountAmount, err = products.Percent(currency, l.Subtotal, l.Discount.Value); err != nil {
			return err
		}
	case products.AdjustFixed:
		l.DiscountAmount = l.Discount.Value
	default:
		l.DiscountAmount = 0
	}
	l.DiscountAmount = min(l.DiscountAmount, l.Subtotal)
	after := l.Subtotal - l.DiscountAmount
	switch l.Tax.Type {
	case products.AdjustPercentage:
		if l.TaxAmount, err = products.Percent(currency, after, l.Tax.Value); err != nil {
			return err
		}
	case products.AdjustFixed:
		l.TaxAmount = l.Tax.Value
	default:
		l.TaxAmount = 0
	}
	if l.TaxAmount > math.MaxInt64/4-after {
		return errTooLarge
	}
	l.Total = after + l.TaxAmount
	return nil
}

var errTooLarge = errors.New("amount is too large")

// Total sums the lines' totals.
func Total(lines []Line) (int64, error) {
	var sum int64
	for _, l := range lines {
		if l.Total > math.MaxInt64/2-sum {
			return 0, errTooLarge
		}
		sum += l.Total
	}
	return sum, nil
}

// BuildLine checks one requested line and computes it. With product_id, the active
// product (same currency) gives the unit price, the description unless one is sent, and its
// tax and discount unless the line sends its own type (a product's fixed amounts are per
// unit, so they are multiplied by the quantity). field prefixes the field names in errors
// (e.g. "line_items[2].").
//
// Errors: a *payments.ValidationError (recorded in p, returned as nil error), or from the
// catalog: products.ErrInactive (422 PRODUCT_INACTIVE), products.ErrNotFound (404) for an
// unknown product or another tenant's.
func BuildLine(ctx context.Context, q postgres.Querier, t payments.Tenant, currency string, in LineInput, field string, p *payments.Problems, now time.Time) (Line, error) {
	l := Line{ID: uuid.Must(uuid.NewV7()), Description: in.Description, ProductID: in.ProductID, CreatedAt: now}
	qtyOK := p.Check(in.Quantity != nil, field+"quantity", "is required") &&
		p.Check(*in.Quantity > 0 && *in.Quantity <= MaxLineQuantity, field+"quantity", fmt.Sprintf("must be a positive integer up to %d", MaxLineQuantity))
	if qtyOK {
		l.Quantity = *in.Quantity
	}
	var prod *products.Product
	if in.ProductID != nil {
		pr, err := products.ForLine(ctx, q, t, *in.ProductID)
		switch {
		case errors.Is(err, products.ErrNotFound):
			// Unknown and another tenant's product alike: 404, as for any foreign id.
			return Line{}, &payments.Error{Code: products.ErrNotFound.Code,
				Message: fmt.Sprintf("%sproduct_id: product %s not found", field, *in.ProductID), Family: products.Commerce}
		case err != nil:
			return Line{}, err
		case pr.Currency != currency:
			p.Add(field+"product_id", fmt.Sprintf("the product is priced in %s, not %s", pr.Currency, currency))
		default:
			prod = &pr
		}
	}
	if prod != nil {
		if l.Description == "" {
			l.Description = prod.Name
			if len([]rune(l.Description)) > MaxLineDescLen {
				l.Description = string([]rune(l.Description)[:MaxLineDescLen])
			}
		}
		l.UnitPrice = prod.Price
	} else if in.ProductID == nil {
		if p.Check(in.UnitPrice != nil && *in.UnitPrice != "", field+"unit_price", "is required") {
			v, err := products.ParseAmount(currency, *in.UnitPrice)
			if err != nil {
				p.Add(field+"unit_price", err.Error())
			}
			l.UnitPrice = v
		}
	}
	n := len([]rune(l.Description))
	if n == 0 && in.ProductID == nil {
		p.Add(field+"description", "is required")
	} else {
		p.Check(n <= MaxLineDescLen, field+"description", fmt.Sprintf("must be at most %d characters", MaxLineDescLen))
	}
	l.Tax = products.ParseAdjustment(p, field+"tax_type", field+"tax_rate", in.TaxType, in.TaxRate, currency)
	l.Discount = products.ParseAdjustment(p, field+"discount_type", field+"discount", in.DiscountType, in.Discount, currency)
	if prod != nil {
		var ok bool
		if in.TaxType == "" {
			l.Tax, ok = perUnit(prod.Tax, l.Quantity)
			p.Check(ok, field+"quantity", "gives the product's tax an amount that is too large")
		}
		if in.DiscountType == "" {
			l.Discount, ok = perUnit(prod.Discount, l.Quantity)
			p.Check(ok, field+"quantity", "gives the product's discount an amount that is too large")
		}
	}
	if !p.Ok() {
		return l, nil
	}
	if err := Compute(currency, &l); err != nil {
		p.Add(field+"unit_price", "gives an amount that is too large")
	}
	return l, nil
}

// perUnit is a product's fixed tax or discount for qty units (a percentage stays as it is);
// ok is false when the product would overflow (it was silently kept per unit before: a line
// of 3 charged the tax of 1).
func perUnit(a products.Adjustment, qty int64) (products.Adjustment, bool) {
	if a.Type != products.AdjustFixed || qty <= 0 {
		return a, true
	}
	if a.Value > math.MaxInt64/8/qty {
		return a, false
	}
	a.Value *= qty
	return a, true
}
