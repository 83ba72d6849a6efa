package products

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/metadata"
	"svc/persistence/postgres"
)

// Service is the catalog's rules over its store. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewService returns the service; now nil means time.Now.
func NewService(pool *pgxpool.Pool, now func() time.Time) *Service {
	return &Service{pool: pool, now: payments.OrNow(now)}
}

func (s *Service) stamp() time.Time { return payments.Stamp(s.now()) }

// Create validates and stores a new product (defaults: type physical, currency NGN, status
// active, taxes and discounts none, stock unlimited).
//
// Errors: *ValidationError.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Product, error) {
	var p payments.Problems
	pr := Product{
		ID: uuid.Must(uuid.NewV7()), Tenant: t, Name: in.Name, Description: in.Description,
		Type: def(in.Type, TypePhysical), Currency: def(in.Currency, DefaultCurrency), Status: def(in.Status, StatusActive),
		StockQuantity: in.StockQuantity, ImageURLs: in.ImageURLs,
	}
	if pr.ImageURLs == nil {
		pr.ImageURLs = []string{}
	}
	pr.Price = parsePrice(&p, in.Price, pr.Currency)
	pr.Tax = ParseAdjustment(&p, "tax_type", "tax_rate", in.TaxType, in.TaxRate, pr.Currency)
	pr.Discount = ParseAdjustment(&p, "discount_type", "discount", in.DiscountType, in.Discount, pr.Currency)
	md, _, err := metadata.Parse(in.Metadata, false)
	p.Merge("", err)
	pr.Metadata = md.OrEmpty()
	pr.validate(&p)
	if err := p.Err(); err != nil {
		return Product{}, err
	}
	pr.CreatedAt = s.stamp()
	pr.UpdatedAt = pr.CreatedAt
	// In the request's idempotency scope when it has one (issue 30).
	if err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error { return insert(ctx, tx, pr) }); err != nil {
		return Product{}, err
	}
	return pr, nil
}

func def(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// Get returns one product. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Product, error) {
	return get(ctx, s.pool, t, id, false)
}

// List returns a page of products, newest first, and the total matching.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Product, int64, error) {
	return list(ctx, s.pool, t, f)
}

// Update changes the fields that are set. description null clears it; stock_quantity null
// makes stock unlimited; every other field refuses null.
//
// Errors: ErrNotFound, *ValidationError.
func (s *Service) Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in UpdateInput) (Product, error) {
	var out Product
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		pr, err := get(ctx, tx, t, id, true)
		if err != nil {
			return err
		}
		var p payments.Problems
		in.Name.Require(&p, "name", &pr.Name)
		in.Description.Apply(&pr.Description)
		in.Type.Require(&p, "type", &pr.Type)
		in.Status.Require(&p, "status", &pr.Status)
		in.Currency.Require(&p, "currency", &pr.Currency)
		if in.Price.Set {
			if in.Price.Null {
				p.Add("price", "must not be null")
			} else {
				pr.Price = parsePrice(&p, in.Price.Value.String(), pr.Currency)
			}
		}
		in.StockQuantity.Apply(&pr.StockQuantity)
		if in.ImageURLs.Set {
			pr.ImageURLs = in.ImageURLs.Value
			if pr.ImageURLs == nil {
				pr.ImageURLs = []string{}
			}
		}
		pr.Tax = patchAdjustment(&p, "tax_type", "tax_rate", in.TaxType, in.TaxRate, pr.Tax, pr.Currency)
		pr.Discount = patchAdjustment(&p, "discount_type", "discount", in.DiscountType, in.Discount, pr.Discount, pr.Currency)
		if err := metadata.Update(&p, in.Metadata, &pr.Metadata); err != nil {
			return err
		}
		pr.validate(&p)
		if err := p.Err(); err != nil {
			return err
		}
		pr.UpdatedAt = s.stamp()
		if err := update(ctx, tx, pr); err != nil {
			return err
		}
		out = pr
		return nil
	})
	return out, err
}

// patchAdjustment applies a partial change of a tax or discount: a new type with its value,
// or a new value for the current type; null type means none.
func patchAdjustment(p *payments.Problems, typeField, valueField string, typ Patch[string], value Patch[json.Number], cur Adjustment, currency string) Adjustment {
	if !typ.Set && !value.Set {
		return cur
	}
	t := cur.Type
	if typ.Set {
		t = typ.Value // null: "" -> none
	}
	var raw *string
	if value.Set && !value.Null {
		s := value.Value.String()
		raw = &s
	} else if !value.Set && t == cur.Type && t != AdjustNone {
		s := FormatAdjustment(cur, currency)
		raw = &s
	}
	return ParseAdjustment(p, typeField, valueField, t, raw, currency)
}

// Delete removes a product for good; invoice lines and links that used it keep their copy
// of its description and price. Errors: ErrNotFound.
func (s *Service) Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error {
	return remove(ctx, s.pool, t, id)
}

// ForLine reads a product for a new invoice or link line inside the caller's transaction.
//
// Errors: ErrNotFound, ErrInactive (inactive or archived).
func ForLine(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Product, error) {
	pr, err := get(ctx, q, t, id, false)
	if err != nil {
		return Product{}, err
	}
	if pr.Status != StatusActive {
		return Product{}, &payments.Error{Code: ErrInactive.Code, Message: fmt.Sprintf("product %s is %s", id, pr.Status), Family: Commerce}
	}
	return pr, nil
}

// InStock reports whether quantity units are available (unlimited stock always is).
// Errors: ErrNotFound.
func InStock(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, quantity int64) (bool, error) {
	pr, err := get(ctx, q, t, id, false)
	if err != nil {
		return false, err
	}
	return pr.StockQuantity == nil || *pr.StockQuantity >= quantity, nil
}

// TakeStock decrements a product's stock by quantity in the caller's transaction (no-op for
// unlimited stock, or for a product deleted since).
//
// Errors: ErrOutOfStock when fewer than quantity units are left.
func TakeStock(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, quantity int64) error {
	pr, err := get(ctx, tx, t, id, true)
	if err == ErrNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if pr.StockQuantity == nil {
		return nil
	}
	if *pr.StockQuantity < quantity {
		return &payments.Error{Code: ErrOutOfStock.Code, Message: fmt.Sprintf("%s: only %d left", pr.Name, *pr.StockQuantity), Family: Commerce}
	}
	_, err = tx.Exec(ctx, `update products set stock_quantity = stock_quantity - $4, updated_at = now()
		where merchant_id=$1 and environment=$2 and id=$3`, t.MerchantID, t.Environment, id, quantity)
	if err != nil {
		return fmt.Errorf("take stock: %w", err)
	}
	return nil
}
