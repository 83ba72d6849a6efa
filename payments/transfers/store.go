package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/persistence/postgres"
)

const cols = `id, merchant_id, environment, currency, amount, reference, rail, recipient_id, destination_type, destination,
	customer_id, source_amount, price, status, coalesce(provider_reference, ''), coalesce(failure_reason, ''),
	created_at, updated_at, settled_at, metadata`

func scan(row pgx.Row, extra ...any) (Transfer, error) {
	var (
		tr          Transfer
		currency    string
		amount, src int64
		destination []byte
	)
	dst := append([]any{&tr.ID, &tr.Tenant.MerchantID, &tr.Tenant.Environment, &currency, &amount, &tr.Reference, &tr.Rail,
		&tr.RecipientID, &tr.Destination.Type, &destination, &tr.CustomerID, &src, &tr.Price, &tr.Status,
		&tr.ProviderReference, &tr.FailureReason, &tr.CreatedAt, &tr.UpdatedAt, &tr.SettledAt, &tr.Metadata}, extra...)
	err := row.Scan(dst...)
	if errors.Is(err, pgx.ErrNoRows) {
		return tr, ErrNotFound
	}
	if err != nil {
		return tr, err
	}
	tr.Amount = money.New(money.Asset(currency), amount)
	tr.SourceAmount = money.New(money.USDT, src)
	return tr, json.Unmarshal(destination, &tr.Destination.Details)
}

func insert(ctx context.Context, tx pgx.Tx, tr Transfer) error {
	dest, err := marshalDestination(tr.Destination)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `insert into transfers (id, merchant_id, environment, currency, amount, reference, rail, recipient_id,
		destination_type, destination, customer_id, source_asset, source_amount, price, status, created_at, updated_at, metadata)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'USDT', $12, $13, $14, $15, $15, $16)`,
		tr.ID, tr.Tenant.MerchantID, tr.Tenant.Environment, string(tr.Amount.Asset), tr.Amount.Minor, tr.Reference, tr.Rail,
		tr.RecipientID, tr.Destination.Type, dest, tr.CustomerID, tr.SourceAmount.Minor, tr.Price, tr.Status, tr.CreatedAt, tr.Metadata.OrEmpty())
	if postgres.IsUniqueViolation(err, "transfers_reference") {
		return ErrReferenceInUse
	}
	if err != nil {
		return fmt.Errorf("transfers: insert: %w", err)
	}
	return nil
}

// table reads transfers (moneyout.Table: one record, or a page with its total).
var table = moneyout.Table[Transfer]{Name: "transfers", Cols: cols, NotFound: ErrNotFound,
	Scan: func(row pgx.Row) (Transfer, error) { return scan(row) }}

// load reads one transfer; t nil reads any tenant's (the jobs know only the id).
func load(ctx context.Context, q postgres.Querier, t *payments.Tenant, id uuid.UUID) (Transfer, error) {
	return table.Get(ctx, q, t, id)
}

// move ends a PROCESSING transfer; ErrNotFound when it is no longer PROCESSING. A move
// Machine forbids is a *payments.IllegalMoveError, and nothing is written.
func move(ctx context.Context, tx pgx.Tx, id uuid.UUID, to string, now time.Time, providerRef, reason string) (Transfer, error) {
	if err := Machine.Check(Processing, to); err != nil {
		return Transfer{}, err
	}
	tr, err := scan(tx.QueryRow(ctx, `update transfers set status = $2, updated_at = $3,
		provider_reference = coalesce(nullif($4, ''), provider_reference), failure_reason = nullif($5, ''),
		settled_at = case when $2 = 'SETTLED' then $3::timestamptz else null end
		where id = $1 and status = 'PROCESSING' returning `+cols, id, to, now, providerRef, reason))
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("transfers: move: %w", err)
	}
	return tr, err
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Transfer, int64, error) {
	where, args := `($3 = '' or status = $3) and ($4 = '' or currency = $4)`, []any{f.Status, f.Currency}
	if f.Metadata != nil { // containment, served by transfers_metadata (GIN)
		where, args = where+` and metadata @> $5::jsonb`, append(args, f.Metadata.JSON())
	}
	return table.List(ctx, q, t, where, args, f.Page, f.Limit)
}
