package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// TestHousekeepingExpiresDueOnramps: the housekeeping job as svcd configures it (its
// periodic job, run once at start, with housekeepingPurgers) stores EXPIRED on a TEMPORARY
// onramp past its expiry and leaves one not due ACTIVE (issue 27: the onramp sweep is one of
// its purgers, not a job of its own), and logs the rows it moved.
func TestHousekeepingExpiresDueOnramps(t *testing.T) {
	pool, dbURL := pgtest.New(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tn := payments.Tenant{MerchantID: uuid.Must(uuid.NewV7()), Environment: payments.Sandbox}
	onramp := func(account string, created time.Time) uuid.UUID {
		a, exp := money.New(money.NGN, 100000), created.Add(onramps.TemporaryLifetime)
		o := onramps.Onramp{ID: uuid.Must(uuid.NewV7()), Tenant: tn, Type: onramps.Temporary, Status: onramps.Active,
			BankCode: "999", AccountNumber: account, BankName: "Sandbox Bank", AccountName: "Test", Amount: &a, Price: 160000,
			Settlement: onramps.Settlement{Mode: onramps.ModeInternal, Asset: money.USDT}, ExpiresAt: &exp, CreatedAt: created, UpdatedAt: created}
		if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			ok, err := onramps.InsertTx(ctx, tx, o)
			if err == nil && !ok {
				err = fmt.Errorf("account %s taken", account)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return o.ID
	}
	due, fresh := onramp("9000000001", now.Add(-time.Hour)), onramp("9000000002", now)
	stored := func(id uuid.UUID) string {
		t.Helper()
		var s string
		if err := pool.QueryRow(ctx, `select status from onramps where id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	_, out, stop := startSvcd(t, dbURL)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("svcd: %v", err)
		}
	}()
	eventually(t, "the due onramp stored EXPIRED by housekeeping", func() bool { return stored(due) == onramps.Expired })
	eventually(t, "housekeeping's log of the onramps it expired", func() bool {
		return strings.Contains(out.String(), "onramps_expired")
	})
	if s := stored(fresh); s != onramps.Active {
		t.Errorf("the onramp not due is stored %s", s)
	}
	var sweeps int
	if err := pool.QueryRow(ctx, `select count(*) from river_job where kind = 'onramp_expire_sweep'`).Scan(&sweeps); err != nil || sweeps != 0 {
		t.Errorf("%d jobs of the removed onramp sweep (%v)", sweeps, err)
	}
}
