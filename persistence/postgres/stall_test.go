package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// A transaction that fails while the server stalls (its own connection healthy until then)
// returns promptly: the rollback is bounded, and the pool serves again once the server
// answers.
func TestInTxFailingDuringAStallReturnsPromptly(t *testing.T) {
	_, dbURL := pgtest.New(t)
	proxy, proxied := pgtest.NewProxy(t, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, proxied, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	boom := errors.New("a provider refused")
	start := time.Now()
	err = postgres.InTx(ctx, pool, func(tx pgxTx) error {
		if _, err := tx.Exec(ctx, `select 1`); err != nil {
			return err
		}
		proxy.Pause()
		return boom
	})
	took := time.Since(start)
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if took > postgres.RollbackTimeout+3*time.Second {
		t.Fatalf("InTx returned after %v while the server stalled", took)
	}
	proxy.Resume()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("after the stall: %v", err)
	}
}
