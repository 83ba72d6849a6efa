// Package paymentstest owns the set-up the payments tests share: a fresh migrated database
// (persistence/postgres/pgtest) with the context the test works in, an insert-only job client
// and the event recorder on it, test funds posted to the ledger, and a Paystack contract
// server with the adapter pointed at it. Each test then says only what it is about, and a
// change to how the services are wired for tests is made once.
//
// Only external test packages (package x_test) may import it: it imports the payments
// packages themselves.
package paymentstest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/payments/rates"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// New gives the test its own migrated database (dropped when the test ends) and the context
// to use on it.
func New(t testing.TB) (*pgxpool.Pool, context.Context) {
	t.Helper()
	pool, _ := pgtest.New(t)
	return pool, context.Background()
}

// Jobs is an insert-only job client on pool (no queues are worked): what services are given
// to queue their jobs and events in the caller's transaction.
func Jobs(t testing.TB, pool *pgxpool.Pool) *jobs.Client {
	t.Helper()
	c, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Recorder is the event recorder services are given, over an insert-only job client (also
// returned, for the services that queue jobs too).
func Recorder(t testing.TB, pool *pgxpool.Pool) (*events.Recorder, *jobs.Client) {
	t.Helper()
	c := Jobs(t, pool)
	return events.NewRecorder(c), c
}

// Fund posts a from the external world to account in tn's ledger, in its own transaction
// (each call a new reference), the way money arrives in production.
func Fund(t testing.TB, pool *pgxpool.Pool, tn payments.Tenant, account ledger.Account, a money.Amount) {
	t.Helper()
	ctx := context.Background()
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: tn.MerchantID, Environment: tn.Environment,
			Reference: "test:fund:" + uuid.NewString(), Kind: "test.fund", Description: "test funds",
			Postings: ledger.Move(ledger.System(ledger.External), account, a)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// Exec runs one statement on pool (fixtures a test writes directly), failing the test on error.
func Exec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// FixedPrice is a market that always quotes p, whatever the asset, side and size: for tests of
// what a service does with a price, not of the price.
type FixedPrice rates.Price

// MarketFor returns the fixed price.
func (p FixedPrice) MarketFor(string, money.Asset, string, money.Amount) (rates.Price, error) {
	return rates.Price(p), nil
}

// USDTAt is the fixed USDT sell price the transfer and payout tests use: 1,592.00 NGN.
var USDTAt = FixedPrice{Asset: money.USDT, Side: rates.Sell, Price: 159_200}

// Paystack starts a Paystack contract server with secret as its key (closed when the test
// ends) and returns it with the adapter pointed at it; emailDomain is where the adapter makes
// its customers' addresses.
func Paystack(t testing.TB, secret, emailDomain string) (*paystacktest.Server, *paystack.Client) {
	t.Helper()
	srv := paystacktest.New(secret)
	t.Cleanup(srv.Close)
	c, err := paystack.New(paystack.Config{SecretKey: srv.Secret, BaseURL: srv.URL, CustomerEmailDomain: emailDomain,
		Phone: "+2348000000000", Backoff: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// Race runs f n times at once (i is the run's number, 0 to n-1), waits for all of them and
// returns their errors joined (nil when none failed): for tests that what is done
// concurrently happens once.
func Race(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Available is what the owner (of type owner, id) has available in asset in tn's ledger: zero
// when the account was never used.
func Available(t testing.TB, pool *pgxpool.Pool, tn payments.Tenant, owner ledger.OwnerType, id uuid.UUID, asset money.Asset) money.Amount {
	t.Helper()
	bs, err := ledger.OwnerBalances(context.Background(), pool, tn.MerchantID, tn.Environment, owner, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Account.Purpose == ledger.Available && b.Amount.Asset == asset {
			return b.Amount
		}
	}
	return money.Zero(asset)
}

// Deadlocks is how many deadlocks PostgreSQL has detected in pool's database: every idle
// connection of the pool first flushes its pending statistics (a backend reports them
// before it answers ReadyForQuery, at most once a second unless forced), so the count
// includes the deadlocks the test's own transactions were chosen as the victims of. Read it
// before and after the concurrent part, with the pool idle.
func Deadlocks(t testing.TB, pool *pgxpool.Pool) int64 {
	t.Helper()
	ctx := context.Background()
	for _, c := range pool.AcquireAllIdle(ctx) {
		_, err := c.Exec(ctx, `select pg_stat_force_next_flush()`)
		c.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := pool.QueryRow(ctx, `select deadlocks from pg_stat_database where datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
