package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/jobs"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

func TestWebhooksReplay(t *testing.T) {
	pool, url := pgtest.New(t)
	ctx := context.Background()
	m := uuid.New()
	if _, err := pool.Exec(ctx, `insert into webhook_endpoints (id, merchant_id, environment, url, secret_enc)
		values ($1, $2, 'sandbox', 'https://example.com/hook', '\x00')`, uuid.New(), m); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var id uuid.UUID
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		id, err = events.NewRecorder(client).Record(ctx, tx, m, "sandbox", events.DepositSettled, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	env := databaseEnv(url)
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"webhooks", "replay", "--reason", "merchant asked", id.String()}, env, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "1 deliveries enqueued") {
		t.Fatalf("output %q", out.String())
	}
	var jobsN, audits int
	_ = pool.QueryRow(ctx, `select count(*) from river_job`).Scan(&jobsN)
	_ = pool.QueryRow(ctx, `select count(*) from audit_log where action = 'webhooks.replay' and reason = 'merchant asked'`).Scan(&audits)
	if jobsN != 2 || audits != 1 {
		t.Fatalf("%d jobs, %d audit rows; want 2 and 1", jobsN, audits)
	}
	if err := run(ctx, []string{"webhooks", "replay", uuid.NewString()}, env, &out, &errOut); err == nil || !strings.Contains(err.Error(), "no event") {
		t.Fatalf("unknown event: %v", err)
	}
}
