package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/invoices"
	"svc/persistence/postgres"
)

// linkSelect reads links with the effective amount (the invoice's total for invoice links).
const linkSelect = `select l.id, l.merchant_id, l.environment, l.slug, l.title, l.description, l.type,
	coalesce(l.amount, i.total_amount, 0), l.currency, l.status, l.redirect_url, l.success_message, l.invoice_id,
	l.payments_count, l.created_at, l.updated_at, l.deleted_at, l.metadata
	from checkout_links l left join invoices i on i.id = l.invoice_id `

func scanLink(row pgx.Row) (Link, error) {
	var l Link
	err := row.Scan(&l.ID, &l.Tenant.MerchantID, &l.Tenant.Environment, &l.Slug, &l.Title, &l.Description, &l.Type,
		&l.Amount, &l.Currency, &l.Status, &l.RedirectURL, &l.SuccessMessage, &l.InvoiceID, &l.PaymentsCount,
		&l.CreatedAt, &l.UpdatedAt, &l.DeletedAt, &l.Metadata)
	return l, err
}

func insertLink(ctx context.Context, tx pgx.Tx, l Link) error {
	var amount *int64
	if l.Type == TypeOneTime {
		amount = &l.Amount
	}
	_, err := tx.Exec(ctx, `insert into checkout_links (id, merchant_id, environment, slug, title, description, type,
		amount, currency, status, redirect_url, success_message, invoice_id, created_at, updated_at, metadata)
		values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
		l.ID, l.Tenant.MerchantID, l.Tenant.Environment, l.Slug, l.Title, l.Description, l.Type, amount, l.Currency,
		l.Status, l.RedirectURL, l.SuccessMessage, l.InvoiceID, l.CreatedAt, l.UpdatedAt, l.Metadata.OrEmpty())
	if postgres.IsUniqueViolation(err, "checkout_links_slug_key") {
		return ErrSlugTaken
	}
	if err != nil {
		return fmt.Errorf("insert checkout link: %w", err)
	}
	return nil
}

func withLines(ctx context.Context, q postgres.Querier, links []Link) error {
	ids := make([]uuid.UUID, len(links))
	for i := range links {
		ids[i] = links[i].ID
	}
	lines, err := invoices.ReadLines(ctx, q, "checkout_link_items", "link_id", ids)
	if err != nil {
		return err
	}
	for i := range links {
		links[i].Lines = lines[links[i].ID]
	}
	return nil
}

// getLink reads a live (not deleted) link of the tenant.
func getLink(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Link, error) {
	return oneLink(ctx, q, `l.merchant_id=$1 and l.environment=$2 and l.id=$3 and l.deleted_at is null`, lock,
		t.MerchantID, t.Environment, id)
}

// linkBySlug reads a link by its public slug, deleted ones included.
func linkBySlug(ctx context.Context, q postgres.Querier, slug string, lock bool) (Link, error) {
	return oneLink(ctx, q, `l.slug=$1`, lock, slug)
}

// oneLink reads the link where holds (ErrNotFound when none), with its lines; lock takes the
// link's row for the caller's transaction.
func oneLink(ctx context.Context, q postgres.Querier, where string, lock bool, args ...any) (Link, error) {
	sql := linkSelect + `where ` + where
	if lock {
		sql += ` for update of l`
	}
	l, err := postgres.One(ctx, q, "checkout link", ErrNotFound, scanLink, sql, args...)
	if err != nil {
		return Link{}, err
	}
	ls := []Link{l}
	if err := withLines(ctx, q, ls); err != nil {
		return Link{}, err
	}
	return ls[0], nil
}

func listLinks(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Link, int64, error) {
	where := `l.merchant_id=$1 and l.environment=$2 and l.deleted_at is null and ($3 = '' or l.status = $3)`
	args := []any{t.MerchantID, t.Environment, f.Status}
	if f.Metadata != nil { // containment, served by checkout_links_metadata (GIN)
		args = append(args, f.Metadata.JSON())
		where += ` and l.metadata @> $4::jsonb`
	}
	out, total, err := postgres.Page(ctx, q, "checkout links", `select count(*) from checkout_links l where `+where,
		linkSelect+`where `+where+` order by l.created_at desc, l.id desc`, args, f.Limit, (f.Page-1)*f.Limit, scanLink)
	if err != nil {
		return nil, 0, err
	}
	if err := withLines(ctx, q, out); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

const paymentColumns = `id, link_id, merchant_id, environment, invoice_id, amount, currency, onramp_id, amount_ngn,
	coalesce(rate, ''), account_number, bank_name, account_name, expires_at, status, deposit_id, failure_reason,
	completed_at, created_at`

func scanPayment(row pgx.Row) (Payment, error) {
	var p Payment
	err := row.Scan(&p.ID, &p.LinkID, &p.Tenant.MerchantID, &p.Tenant.Environment, &p.InvoiceID, &p.Amount, &p.Currency,
		&p.OnrampID, &p.AmountNGN, &p.Rate, &p.AccountNumber, &p.BankName, &p.AccountName, &p.ExpiresAt, &p.Status,
		&p.DepositID, &p.FailureReason, &p.CompletedAt, &p.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Payment{}, ErrPaymentNotFound
	}
	if err != nil {
		return Payment{}, fmt.Errorf("read checkout payment: %w", err)
	}
	return p, nil
}

func insertPayment(ctx context.Context, tx pgx.Tx, p Payment) error {
	var rate *string
	if p.Rate != "" {
		rate = &p.Rate
	}
	_, err := tx.Exec(ctx, `insert into checkout_payments (id, link_id, merchant_id, environment, invoice_id, amount,
		currency, onramp_id, amount_ngn, rate, account_number, bank_name, account_name, expires_at, status, created_at)
		values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
		p.ID, p.LinkID, p.Tenant.MerchantID, p.Tenant.Environment, p.InvoiceID, p.Amount, p.Currency, p.OnrampID,
		p.AmountNGN, rate, p.AccountNumber, p.BankName, p.AccountName, p.ExpiresAt, p.Status, p.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert checkout payment: %w", err)
	}
	return nil
}
