package withdrawals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

const cols = `id, merchant_id, environment, amount, token, chain, destination_address, status,
	coalesce(tx_hash, ''), coalesce(failure_reason, ''), created_at, updated_at, submitted_at, settled_at, metadata`

func scan(row pgx.Row) (Withdrawal, error) {
	var (
		w      Withdrawal
		amount int64
		chain  string
	)
	err := row.Scan(&w.ID, &w.Tenant.MerchantID, &w.Tenant.Environment, &amount, &w.Token, &chain, &w.DestinationAddress,
		&w.Status, &w.TxHash, &w.FailureReason, &w.CreatedAt, &w.UpdatedAt, &w.SubmittedAt, &w.SettledAt, &w.Metadata)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, ErrNotFound
	}
	w.Amount = money.New(money.USDT, amount)
	w.Chain = providers.Chain(chain)
	return w, err
}

func insert(ctx context.Context, tx pgx.Tx, w Withdrawal) error {
	_, err := tx.Exec(ctx, `insert into withdrawals (id, merchant_id, environment, amount, token, chain, destination_address,
		status, created_at, updated_at, metadata) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)`,
		w.ID, w.Tenant.MerchantID, w.Tenant.Environment, w.Amount.Minor, w.Token, string(w.Chain), w.DestinationAddress,
		w.Status, w.CreatedAt, w.Metadata.OrEmpty())
	if err != nil {
		return fmt.Errorf("withdrawals: insert: %w", err)
	}
	return nil
}

// table reads withdrawals (moneyout.Table: one record, or a page with its total).
var table = moneyout.Table[Withdrawal]{Name: "withdrawals", Cols: cols, Scan: scan, NotFound: ErrNotFound}

// load reads one withdrawal; t nil reads any tenant's (the jobs know only the id).
func load(ctx context.Context, q postgres.Querier, t *payments.Tenant, id uuid.UUID) (Withdrawal, error) {
	return table.Get(ctx, q, t, id)
}

// move changes the status from one of `from` to `to` and returns the row; ErrNotFound when
// it is no longer in one of `from` (another worker got there first).
// A move Machine forbids is a *payments.IllegalMoveError, and nothing is written.
func move(ctx context.Context, tx pgx.Tx, id uuid.UUID, from []string, to string, now time.Time, txHash, reason string) (Withdrawal, error) {
	for _, f := range from {
		if err := Machine.Check(f, to); err != nil {
			return Withdrawal{}, err
		}
	}
	w, err := scan(tx.QueryRow(ctx, `update withdrawals set status = $3, updated_at = $4,
		tx_hash = coalesce(nullif($5, ''), tx_hash),
		failure_reason = nullif($6, ''),
		submitted_at = case when $3 = 'SUBMITTED' then $4 else submitted_at end,
		settled_at = case when $3 = 'SETTLED' then $4 else settled_at end
		where id = $1 and status = any($2) returning `+cols, id, from, to, now, txHash, reason))
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("withdrawals: move: %w", err)
	}
	return w, err
}

func list(ctx context.Context, q postgres.Querier, t payments.Tenant, f Filter) ([]Withdrawal, int64, error) {
	where, args := `($3::text[] is null or status = any($3))`, []any{f.Statuses}
	if f.Metadata != nil { // containment, served by withdrawals_metadata (GIN)
		where, args = where+` and metadata @> $4::jsonb`, append(args, f.Metadata.JSON())
	}
	return table.List(ctx, q, t, where, args, f.Page, f.Limit)
}
