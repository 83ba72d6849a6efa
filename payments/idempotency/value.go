package idempotency

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/persistence/postgres"
)

// InTxValue is InTx for a write that answers what it wrote (a create's record).
//
// Deprecated: call postgres.InTxValue(ctx, pool, InTx, fn), the one helper for a
// transaction that answers a value; no caller is left.
func InTxValue[T any](ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) (T, error)) (T, error) {
	return postgres.InTxValue(ctx, pool, InTx, fn)
}
