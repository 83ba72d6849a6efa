package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Scope is a transaction a caller opened for a whole request, carried in the request's
// context: payments/idempotency's keyed request, whose changes and stored answer must commit
// together. Packages below payments that write for such a request (identity's API keys) join
// it through InScope without importing payments.
type Scope interface {
	// InTx runs fn inside the scope's transaction (a savepoint: an error of fn undoes only
	// fn's writes); nothing commits until the scope does.
	InTx(ctx context.Context, fn func(tx pgx.Tx) error) error
}

type scopeKey struct{}

// ScopeKey is the key a Scope is found under in a context (ctx.Value): a fasthttp request
// stores it with RequestCtx.SetUserValue(ScopeKey(), scope), which RequestCtx.Value reads.
func ScopeKey() any { return scopeKey{} }

// WithScope returns a context carrying s.
func WithScope(parent context.Context, s Scope) context.Context {
	return context.WithValue(parent, scopeKey{}, s)
}

// ScopeFrom returns the scope in ctx, or nil.
func ScopeFrom(ctx context.Context) Scope {
	s, _ := ctx.Value(scopeKey{}).(Scope)
	return s
}

// InScope runs fn in the scope of ctx when there is one, else in a transaction of its own
// (InTx, with its retries).
func InScope(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	if s := ScopeFrom(ctx); s != nil {
		return s.InTx(ctx, fn)
	}
	return InTx(ctx, pool, fn)
}
