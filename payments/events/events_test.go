package events_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

func TestRecord(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	rec, _ := paymentstest.Recorder(t, pool)
	m1, m2 := uuid.New(), uuid.New()
	endpoint := func(m uuid.UUID, env string, subs []string, active bool) uuid.UUID {
		id := uuid.New()
		if subs == nil {
			subs = []string{}
		}
		_, err := pool.Exec(ctx, `insert into webhook_endpoints (id, merchant_id, environment, url, events, is_active, secret_enc)
			values ($1, $2, $3, 'https://example.com/hook', $4, $5, '\x00')`, id, m, env, subs, active)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	all := endpoint(m1, "sandbox", nil, true)
	settledOnly := endpoint(m1, "sandbox", []string{"deposit.settled"}, true)
	endpoint(m1, "sandbox", []string{"customer.created"}, true) // not subscribed
	endpoint(m1, "sandbox", nil, false)                         // inactive
	endpoint(m1, "live", nil, true)                             // other environment
	endpoint(m2, "sandbox", nil, true)                          // other merchant

	jobsFor := func(eventID uuid.UUID) map[uuid.UUID]bool {
		rows, err := pool.Query(ctx, `select (args->>'endpoint_id')::uuid from river_job where args->>'event_id' = $1`, eventID.String())
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			t.Fatal(err)
		}
		out := map[uuid.UUID]bool{}
		for _, id := range ids {
			out[id] = true
		}
		return out
	}

	t.Run("a committed event gets one job per subscribed active endpoint of its tenant", func(t *testing.T) {
		var id uuid.UUID
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			var err error
			id, err = rec.Record(ctx, tx, m1, "sandbox", events.DepositSettled, events.Deposit{ID: "d1", Status: "SETTLED"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := jobsFor(id)
		if len(got) != 2 || !got[all] || !got[settledOnly] {
			t.Fatalf("jobs for endpoints %v, want %v and %v", got, all, settledOnly)
		}
	})

	t.Run("a rolled-back event leaves neither row nor job", func(t *testing.T) {
		var id uuid.UUID
		boom := errors.New("boom")
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			var err error
			if id, err = rec.Record(ctx, tx, m1, "sandbox", events.DepositSettled, nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		var n int
		_ = pool.QueryRow(ctx, `select count(*) from events where id = $1`, id).Scan(&n)
		if n != 0 || len(jobsFor(id)) != 0 {
			t.Fatalf("rolled back event left %d rows and %d jobs", n, len(jobsFor(id)))
		}
	})

	t.Run("bad input is refused", func(t *testing.T) {
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := rec.Record(ctx, tx, m1, "sandbox", "deposit.exploded", nil)
			return err
		})
		if !errors.Is(err, events.ErrUnknownType) {
			t.Fatalf("unknown type: %v", err)
		}
		err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := rec.Record(ctx, tx, m1, "prod", events.TestWebhook, nil)
			return err
		})
		if !errors.Is(err, events.ErrBadEnvironment) {
			t.Fatalf("bad environment: %v", err)
		}
		err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := rec.Record(ctx, tx, m1, "sandbox", events.TestWebhook, []int{1})
			return err
		})
		if !errors.Is(err, events.ErrDataNotObject) {
			t.Fatalf("array data: %v", err)
		}
	})
}
