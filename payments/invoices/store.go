package invoices

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/persistence/postgres"
)

const invoiceColumns = `id, merchant_id, environment, number, title, customer_name, customer_email, customer_id,
	currency, status, total_amount, issue_date, due_date, notes, paid_at, sent_at, created_at, updated_at, metadata`

func scanInvoice(row pgx.Row) (Invoice, error) {
	var inv Invoice
	err := row.Scan(&inv.ID, &inv.Tenant.MerchantID, &inv.Tenant.Environment, &inv.Number, &inv.Title,
		&inv.CustomerName, &inv.CustomerEmail, &inv.CustomerID, &inv.Currency, &inv.Status, &inv.TotalAmount,
		&inv.IssueDate, &inv.DueDate, &inv.Notes, &inv.PaidAt, &inv.SentAt, &inv.CreatedAt, &inv.UpdatedAt, &inv.Metadata)
	return inv, err
}

// nextNumber takes the tenant's next invoice number. The counter row stays locked until the
// caller's transaction ends, so concurrent creations queue and numbers have no gaps.
func nextNumber(ctx context.Context, tx pgx.Tx, t payments.Tenant) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `insert into invoice_counters (merchant_id, environment, last_number) values ($1, $2, 1)
		on conflict (merchant_id, environment) do update set last_number = invoice_counters.last_number + 1
		returning last_number`, t.MerchantID, t.Environment).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("next invoice number: %w", err)
	}
	return n, nil
}

func insertInvoice(ctx context.Context, tx pgx.Tx, inv Invoice) error {
	_, err := tx.Exec(ctx, `insert into invoices (`+invoiceColumns+`)
		values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)`,
		inv.ID, inv.Tenant.MerchantID, inv.Tenant.Environment, inv.Number, inv.Title, inv.CustomerName,
		inv.CustomerEmail, inv.CustomerID, inv.Currency, inv.Status, inv.TotalAmount, inv.IssueDate, inv.DueDate,
		inv.Notes, inv.PaidAt, inv.SentAt, inv.CreatedAt, inv.UpdatedAt, inv.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("insert invoice: %w", err)
	}
	return nil
}

// updateInvoice writes inv; a status change goes through Machine (a move it forbids is a
// *payments.IllegalMoveError and nothing is written).
func updateInvoice(ctx context.Context, tx pgx.Tx, inv Invoice) error {
	var from string
	if err := tx.QueryRow(ctx, `select status from invoices where id = $1`, inv.ID).Scan(&from); err != nil {
		return fmt.Errorf("update invoice: %w", err)
	}
	if err := Machine.Change(from, inv.Status); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `update invoices set title=$2, customer_name=$3, customer_email=$4, currency=$5,
		status=$6, total_amount=$7, issue_date=$8, due_date=$9, notes=$10, paid_at=$11, sent_at=$12, updated_at=$13,
		metadata=$14
		where id=$1`,
		inv.ID, inv.Title, inv.CustomerName, inv.CustomerEmail, inv.Currency, inv.Status, inv.TotalAmount,
		inv.IssueDate, inv.DueDate, inv.Notes, inv.PaidAt, inv.SentAt, inv.UpdatedAt, inv.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("update invoice: %w", err)
	}
	return nil
}

// InsertLines stores line items under owner in table (invoice_line_items with column
// invoice_id, or checkout_link_items with link_id), positions following after.
func InsertLines(ctx context.Context, tx pgx.Tx, table, ownerColumn string, owner uuid.UUID, after int, lines []Line) error {
	for i := range lines {
		l := &lines[i]
		l.Position = after + i + 1
		_, err := tx.Exec(ctx, `insert into `+table+` (id, `+ownerColumn+`, position, description, quantity, unit_price,
			product_id, tax_type, tax_rate, discount_type, discount, subtotal, discount_amount, tax_amount, total, created_at)
			values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
			l.ID, owner, l.Position, l.Description, l.Quantity, l.UnitPrice, l.ProductID, l.Tax.Type, l.Tax.Value,
			l.Discount.Type, l.Discount.Value, l.Subtotal, l.DiscountAmount, l.TaxAmount, l.Total, l.CreatedAt)
		if err != nil {
			return fmt.Errorf("insert line item: %w", err)
		}
	}
	return nil
}

// ReadLines returns the line items of owners from table, in position order, by owner.
func ReadLines(ctx context.Context, q postgres.Querier, table, ownerColumn string, owners []uuid.UUID) (map[uuid.UUID][]Line, error) {
	out := map[uuid.UUID][]Line{}
	if len(owners) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `select `+ownerColumn+`, id, position, description, quantity, unit_price, product_id,
		tax_type, tax_rate, discount_type, discount, subtotal, discount_amount, tax_amount, total, created_at
		from `+table+` where `+ownerColumn+` = any($1) order by position`, owners)
	if err != nil {
		return nil, fmt.Errorf("read line items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var owner uuid.UUID
		var l Line
		if err := rows.Scan(&owner, &l.ID, &l.Position, &l.Description, &l.Quantity, &l.UnitPrice, &l.ProductID,
			&l.Tax.Type, &l.Tax.Value, &l.Discount.Type, &l.Discount.Value, &l.Subtotal, &l.DiscountAmount,
			&l.TaxAmount, &l.Total, &l.CreatedAt); err != nil {
			return nil, fmt.Errorf("read line items: %w", err)
		}
		out[owner] = append(out[owner], l)
	}
	return out, rows.Err()
}

func getInvoice(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Invoice, error) {
	sql := `select ` + invoiceColumns + ` from invoices where merchant_id=$1 and environment=$2 and id=$3`
	if lock {
		sql += ` for update`
	}
	inv, err := postgres.One(ctx, q, "invoice", ErrNotFound, scanInvoice, sql, t.MerchantID, t.Environment, id)
	if err != nil {
		return Invoice{}, err
	}
	lines, err := ReadLines(ctx, q, "invoice_line_items", "invoice_id", []uuid.UUID{inv.ID})
	if err != nil {
		return Invoice{}, err
	}
	inv.Lines = lines[inv.ID]
	return inv, nil
}

func listInvoices(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Invoice, int64, error) {
	where := `merchant_id=$1 and environment=$2 and ($3 = '' or status = $3) and ($4 = '' or
		customer_name ilike '%' || $4 || '%' or customer_email ilike '%' || $4 || '%' or
		('INV-' || lpad(number::text, 6, '0')) ilike '%' || $4 || '%')`
	args := []any{t.MerchantID, t.Environment, f.Status, postgres.EscapeLike(f.Search)}
	if f.Metadata != nil { // containment, served by invoices_metadata (GIN)
		args = append(args, f.Metadata.JSON())
		where += ` and metadata @> $5::jsonb`
	}
	out, total, err := postgres.Page(ctx, q, "invoices", `select count(*) from invoices where `+where,
		`select `+invoiceColumns+` from invoices where `+where+` order by created_at desc, id desc`, args, f.Limit, (f.Page-1)*f.Limit,
		scanInvoice)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]uuid.UUID, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	lines, err := ReadLines(ctx, q, "invoice_line_items", "invoice_id", ids)
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		out[i].Lines = lines[out[i].ID]
	}
	return out, total, nil
}
