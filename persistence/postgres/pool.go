package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Querier is what a store needs to run SQL: satisfied by *pgxpool.Pool and by pgx.Tx, so the
// same store method works alone or inside a caller's transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

var (
	_ Querier = (*pgxpool.Pool)(nil)
	_ Querier = (pgx.Tx)(nil)
)

// ConnectTimeout bounds making one new connection (TCP connect, TLS and startup) when the
// URL does not set connect_timeout: a server that accepts but does not answer must not hold
// a caller, or a pool slot, for long.
const ConnectTimeout = 5 * time.Second

// Open connects a pool to url and checks the server answers within the context's deadline.
//
// The pool has no acquire timeout of its own (pgxpool has no such setting): every
// acquire, query and transaction runs under its caller's context, and the gateway gives each
// request a deadline (gateway/api.Ctx), so a stalled server makes callers fail at their
// deadline instead of queueing without bound. New connections are bounded by
// ConnectTimeout; broken ones are dropped by pgx and replaced on demand, so service resumes
// by itself when the server answers again.
func Open(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return OpenPool(ctx, url, PoolOptions{MaxConns: maxConns})
}

// PoolOptions sizes a pool (OpenPool).
type PoolOptions struct {
	// MaxConns is the most connections the pool opens (0: pgxpool's default, or the URL's
	// pool_max_conns).
	MaxConns int32
	// MinConns is how many connections the pool opens at once, in the background, and keeps
	// open through idle spells (0: none, or the URL's pool_min_conns). A server sets it to
	// MaxConns: a connection opened in the request path costs the request the connection's
	// setup and its first statements' preparation, hundreds of milliseconds on a loaded box
	// when a burst opens many at once (bench/RESULTS.md, issue 22 third round).
	MinConns int32
}

// LifetimeJitter spreads the pool's connection recycling: each connection lives
// pgxpool's MaxConnLifetime (an hour) plus up to this much, so connections opened together
// are not all replaced, and paid for again in the request path, in the same minute.
const LifetimeJitter = 10 * time.Minute

// OpenPool is Open with the pool's sizes.
func OpenPool(ctx context.Context, url string, o PoolOptions) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.MinConns > 0 {
		cfg.MinConns = min(o.MinConns, cfg.MaxConns)
	}
	if cfg.MaxConnLifetimeJitter == 0 {
		cfg.MaxConnLifetimeJitter = LifetimeJitter
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return pool, nil
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise
// (and on panic, which is re-raised). Serialization failures and deadlocks are retried a few
// times, since fn must be safe to run again: it may only touch the database through tx.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	const attempts = 5
	var err error
	for i := 0; i < attempts; i++ {
		err = inTxOnce(ctx, pool, fn)
		if !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i+1) * 5 * time.Millisecond):
		}
	}
	return err
}

// TxRunner runs fn in a transaction: InTx (one of its own), or InScope (the context's
// idempotency scope if it has one, as idempotency.InTx, for a write a keyed request can make).
type TxRunner func(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error

// InTxValue is run for a transaction that answers a value (the record it wrote): fn's value
// and error from its last run.
func InTxValue[T any](ctx context.Context, pool *pgxpool.Pool, run TxRunner, fn func(tx pgx.Tx) (T, error)) (T, error) {
	var out T
	err := run(ctx, pool, func(tx pgx.Tx) error {
		v, err := fn(tx)
		out = v
		return err
	})
	return out, err
}

func inTxOnce(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) (err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			Rollback(ctx, tx)
			panic(p)
		}
		if err != nil {
			Rollback(ctx, tx)
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// RollbackTimeout bounds a rollback. It runs even when the caller's context is done (so a
// healthy connection goes back to the pool), but a server that does not answer must not hold
// the caller: past it pgx closes the connection and PostgreSQL aborts the transaction itself.
const RollbackTimeout = time.Second

// Rollback rolls tx back within RollbackTimeout, even when ctx is done; for callers that
// manage a transaction themselves (InTx does it for its own).
func Rollback(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RollbackTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
}

// retryable reports whether err is a serialization failure or deadlock, after which the
// whole transaction can safely run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return false
}

// IsUniqueViolation reports whether err is a unique-constraint violation, optionally of the
// named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return false
	}
	return constraint == "" || pgErr.ConstraintName == constraint
}
