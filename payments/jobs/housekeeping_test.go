package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/paymentstest"
	"svc/payments/providers/mail"
	"svc/payments/rates"
)

// TestHousekeepingPurgesWhatNobodyCanUse runs the real river client with the periodic
// housekeeping job (it runs once at start) and waits until the expired rows are gone: unused
// expired quotes, expired idempotency keys, outbox bodies past 24 hours and rows past 30
// days. What is still usable stays.
func TestHousekeepingPurgesWhatNobodyCanUse(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	now := time.Now().UTC()
	m := uuid.Must(uuid.NewV7())
	mustExec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	quote := func(expires time.Time, used bool) uuid.UUID {
		id := uuid.Must(uuid.NewV7())
		var usedAt *time.Time
		if used {
			usedAt = &now
		}
		mustExec(`insert into rate_quotes (id, merchant_id, environment, asset, side, price, source, expires_at, used_at, created_at)
			values ($1, $2, 'sandbox', 'USDT', 'buy', 160000, 'reference', $3, $4, $5)`, id, m, expires, usedAt, expires.Add(-time.Minute))
		return id
	}
	expiredQuote, liveQuote, usedQuote := quote(now.Add(-time.Hour), false), quote(now.Add(time.Minute), false), quote(now.Add(-time.Hour), true)
	key := func(k string, expires time.Time) {
		mustExec(`insert into idempotency_keys (merchant_id, environment, key, request_hash, method, path, status_code, content_type, response_body, expires_at)
			values ($1, 'live', $2, '\x00', 'POST', '/v1/x', 201, 'application/json', '{}', $3)`, m, k, expires)
	}
	key("old", now.Add(-time.Minute))
	key("fresh", now.Add(time.Hour))
	outbox := func(body string, age time.Duration) uuid.UUID {
		id := uuid.Must(uuid.NewV7())
		mustExec(`insert into mail_outbox (id, to_addr, subject, body, created_at) values ($1, 'a@example.com', 'code', $2, $3)`, id, body, now.Add(-age))
		return id
	}
	ancient, stale, recent := outbox("code 111111", 31*24*time.Hour), outbox("code 222222", 25*time.Hour), outbox("code 333333", time.Hour)

	rs, err := rates.New(pool, rates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys := idempotency.New(pool, idempotency.Config{})
	workers, queues := river.NewWorkers(), map[string]int{}
	periodic, err := jobs.RegisterHousekeeping(workers, queues, jobs.HousekeepingConfig{Interval: time.Hour, Purgers: []jobs.Purger{
		{Name: "rate_quotes", Purge: rs.Purge},
		{Name: "idempotency_keys", Purge: func(ctx context.Context, _ time.Time) (int64, error) { return keys.Purge(ctx) }},
		{Name: "mail_outbox", Purge: func(ctx context.Context, now time.Time) (int64, error) { return mail.PurgeOutbox(ctx, pool, now) }},
	}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: queues, PeriodicJobs: periodic,
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(c)
	})

	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for count(`select count(*) from idempotency_keys where key = 'old'`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the housekeeping job did not run within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The job is one transaction-free sequence; give its last purger a moment.
	for count(`select count(*) from mail_outbox where id = $1`, ancient) != 0 || count(`select count(*) from rate_quotes where id = $1`, expiredQuote) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("expired quotes or ancient outbox rows were not purged")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for count(`select count(*) from mail_outbox where id = $1 and body = $2`, stale, mail.ExpiredBody) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("an outbox body older than 24 h was not blanked")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, n := range map[string]int{
		"fresh key":          count(`select count(*) from idempotency_keys where key = 'fresh'`),
		"unexpired quote":    count(`select count(*) from rate_quotes where id = $1`, liveQuote),
		"used quote":         count(`select count(*) from rate_quotes where id = $1`, usedQuote),
		"recent outbox body": count(`select count(*) from mail_outbox where id = $1 and body = 'code 333333'`, recent),
		"stale outbox row":   count(`select count(*) from mail_outbox where id = $1`, stale),
	} {
		if n != 1 {
			t.Fatalf("%s: %d rows, want it kept", name, n)
		}
	}
}
