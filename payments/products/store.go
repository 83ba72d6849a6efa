package products

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/persistence/postgres"
)

const productColumns = `id, merchant_id, environment, name, description, type, price, currency, status,
	stock_quantity, image_urls, tax_type, tax_rate, discount_type, discount, created_at, updated_at, metadata`

func scanProduct(row pgx.Row) (Product, error) {
	var p Product
	err := row.Scan(&p.ID, &p.Tenant.MerchantID, &p.Tenant.Environment, &p.Name, &p.Description, &p.Type,
		&p.Price, &p.Currency, &p.Status, &p.StockQuantity, &p.ImageURLs, &p.Tax.Type, &p.Tax.Value,
		&p.Discount.Type, &p.Discount.Value, &p.CreatedAt, &p.UpdatedAt, &p.Metadata)
	if p.ImageURLs == nil {
		p.ImageURLs = []string{}
	}
	return p, err
}

func insert(ctx context.Context, q postgres.Querier, p Product) error {
	_, err := q.Exec(ctx, `insert into products (`+productColumns+`)
		values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)`,
		p.ID, p.Tenant.MerchantID, p.Tenant.Environment, p.Name, p.Description, p.Type, p.Price, p.Currency,
		p.Status, p.StockQuantity, p.ImageURLs, p.Tax.Type, p.Tax.Value, p.Discount.Type, p.Discount.Value,
		p.CreatedAt, p.UpdatedAt, p.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("insert product: %w", err)
	}
	return nil
}

func update(ctx context.Context, q postgres.Querier, p Product) error {
	_, err := q.Exec(ctx, `update products set name=$3, description=$4, type=$5, price=$6, currency=$7,
		status=$8, stock_quantity=$9, image_urls=$10, tax_type=$11, tax_rate=$12, discount_type=$13,
		discount=$14, updated_at=$15, metadata=$17
		where merchant_id=$1 and environment=$2 and id=$16`,
		p.Tenant.MerchantID, p.Tenant.Environment, p.Name, p.Description, p.Type, p.Price, p.Currency, p.Status,
		p.StockQuantity, p.ImageURLs, p.Tax.Type, p.Tax.Value, p.Discount.Type, p.Discount.Value, p.UpdatedAt, p.ID,
		p.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("update product: %w", err)
	}
	return nil
}

// get reads one product of the tenant; lock takes a row lock (inside a transaction).
func get(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Product, error) {
	sql := `select ` + productColumns + ` from products where merchant_id=$1 and environment=$2 and id=$3`
	if lock {
		sql += ` for update`
	}
	return postgres.One(ctx, q, "product", ErrNotFound, scanProduct, sql, t.MerchantID, t.Environment, id)
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Product, int64, error) {
	where := `merchant_id=$1 and environment=$2 and ($3 = '' or status = $3) and ($4 = '' or name ilike '%' || $4 || '%')`
	args := []any{t.MerchantID, t.Environment, f.Status, postgres.EscapeLike(f.Search)}
	if f.Metadata != nil { // containment, served by products_metadata (GIN)
		args = append(args, f.Metadata.JSON())
		where += ` and metadata @> $` + strconv.Itoa(len(args)) + `::jsonb`
	}
	return postgres.Page(ctx, q, "products", `select count(*) from products where `+where,
		`select `+productColumns+` from products where `+where+` order by created_at desc, id desc`, args, f.Limit, (f.Page-1)*f.Limit,
		scanProduct)
}

func remove(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) error {
	tag, err := q.Exec(ctx, `delete from products where merchant_id=$1 and environment=$2 and id=$3`, t.MerchantID, t.Environment, id)
	if err != nil {
		return fmt.Errorf("delete product: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}
