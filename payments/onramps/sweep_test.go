package onramps_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/payments"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

var accounts atomic.Int64

// put stores one onramp of tenant t as the service would have created it at created, and
// returns it as stored.
func put(t *testing.T, pool *pgxpool.Pool, tn payments.Tenant, typ, status string, created time.Time) onramps.Onramp {
	t.Helper()
	o := onramps.Onramp{ID: uuid.Must(uuid.NewV7()), Tenant: tn, Type: typ, Status: status, BankCode: "999",
		AccountNumber: fmt.Sprintf("%010d", 1000000000+accounts.Add(1)), BankName: "Sandbox Bank", AccountName: "Test",
		Settlement: onramps.Settlement{Mode: onramps.ModeInternal, Asset: money.USDT}, CreatedAt: created, UpdatedAt: created}
	if typ == onramps.Temporary {
		a, exp := money.New(money.NGN, 100000), created.Add(onramps.TemporaryLifetime)
		o.Amount, o.Price, o.ExpiresAt = &a, 160000, &exp
	} else {
		c := uuid.Must(uuid.NewV7())
		o.CustomerID = &c
	}
	if err := postgres.InTx(context.Background(), pool, func(tx pgx.Tx) error {
		ok, err := onramps.InsertTx(context.Background(), tx, o)
		if err == nil && !ok {
			err = fmt.Errorf("account %s taken", o.AccountNumber)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return o
}

func stored(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `select status from onramps where id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// clock is a test clock the service reads.
type clock struct{ now atomic.Pointer[time.Time] }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.now.Store(&t) }
func (c *clock) Now() time.Time   { return *c.now.Load() }

// sweepRig is a fresh database, a clock an hour behind real time (start) and the service
// reading it with cfg.
type sweepRig struct {
	pool  *pgxpool.Pool
	ctx   context.Context
	start time.Time
	clk   *clock
	svc   *onramps.Service
}

func newSweepRig(t *testing.T, cfg onramps.Config) sweepRig {
	pool, ctx := paymentstest.New(t)
	start := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	clk := newClock(start)
	cfg.Now = clk.Now
	return sweepRig{pool: pool, ctx: ctx, start: start, clk: clk, svc: onramps.New(pool, cfg)}
}

// sweep runs the sweep at the rig's clock, as the housekeeping job runs it at its own.
func (r sweepRig) sweep() (int64, error) { return r.svc.ExpireDue(r.ctx, r.clk.Now()) }

// TestSweepExpiresOnlyDueActiveTemporaryOnramps: the sweep moves every ACTIVE TEMPORARY
// onramp past its expiry, of every merchant and environment, in batches, and leaves the
// ones not due, PERMANENT, INACTIVE and already EXPIRED ones; every read (get, lists by
// status, the by-account lookup money arriving uses) reports EXPIRED before the sweep and
// after it alike.
func TestSweepExpiresOnlyDueActiveTemporaryOnramps(t *testing.T) {
	r := newSweepRig(t, onramps.Config{SweepBatch: 2}) // 2: several statements per sweep
	pool, ctx, start, clk, svc := r.pool, r.ctx, r.start, r.clk, r.svc

	type row struct {
		o       onramps.Onramp
		swept   string // stored status after the sweep
		reports string // what reads report at the sweep's time
	}
	var rows []row
	var tenants []payments.Tenant
	for _, env := range []string{payments.Sandbox, payments.Live} {
		for range 2 {
			tn := payments.Tenant{MerchantID: uuid.Must(uuid.NewV7()), Environment: env}
			tenants = append(tenants, tn)
			due1 := put(t, pool, tn, onramps.Temporary, onramps.Active, start)
			due2 := put(t, pool, tn, onramps.Temporary, onramps.Active, start.Add(time.Minute))
			fresh := put(t, pool, tn, onramps.Temporary, onramps.Active, start.Add(time.Hour-time.Second))
			perm := put(t, pool, tn, onramps.Permanent, onramps.Active, start)
			paid := put(t, pool, tn, onramps.Temporary, onramps.Inactive, start)
			done := put(t, pool, tn, onramps.Temporary, onramps.Expired, start)
			rows = append(rows, row{due1, onramps.Expired, onramps.Expired}, row{due2, onramps.Expired, onramps.Expired},
				row{fresh, onramps.Active, onramps.Active}, row{perm, onramps.Active, onramps.Active},
				row{paid, onramps.Inactive, onramps.Inactive}, row{done, onramps.Expired, onramps.Expired})
		}
	}
	clk.set(start.Add(time.Hour)) // due1 and due2 are past their 25 minutes; fresh has 25 left

	reads := func(when string) {
		t.Helper()
		for _, r := range rows {
			got, err := svc.Get(ctx, r.o.Tenant, r.o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if s := got.StatusAt(svc.Now()); s != r.reports {
				t.Errorf("%s: get %s %s reads %s, want %s", when, r.o.Type, r.o.ID, s, r.reports)
			}
			var byAccount onramps.Onramp
			if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) (err error) {
				byAccount, err = svc.ByAccountTx(ctx, tx, r.o.BankCode, r.o.AccountNumber, r.o.Tenant.Environment)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if s := byAccount.StatusAt(svc.Now()); byAccount.ID != r.o.ID || s != r.reports {
				t.Errorf("%s: by account %s reads %s, want %s", when, r.o.AccountNumber, s, r.reports)
			}
		}
		for _, tn := range tenants {
			for _, status := range []string{onramps.Active, onramps.Expired, onramps.Inactive} {
				list, total, err := svc.List(ctx, tn, onramps.Filter{Status: status, Page: 1, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				want := map[uuid.UUID]bool{}
				for _, r := range rows {
					if r.o.Tenant == tn && r.reports == status {
						want[r.o.ID] = true
					}
				}
				if int(total) != len(want) || len(list) != len(want) {
					t.Errorf("%s: %s list of %v: %d (total %d), want %d", when, status, tn, len(list), total, len(want))
				}
				for _, o := range list {
					if !want[o.ID] {
						t.Errorf("%s: %s list of %v has %s", when, status, tn, o.ID)
					}
				}
			}
		}
	}

	reads("before the sweep")
	n, err := r.sweep()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * len(tenants)); n != want {
		t.Fatalf("the sweep expired %d onramps, want %d", n, want)
	}
	for _, r := range rows {
		if s := stored(t, pool, r.o.ID); s != r.swept {
			t.Errorf("%s %s created %s: stored %s after the sweep, want %s", r.o.Type, r.o.Status, r.o.CreatedAt.Sub(start), s, r.swept)
		}
	}
	reads("after the sweep")
	if n, err := r.sweep(); err != nil || n != 0 {
		t.Fatalf("a second sweep: %d, %v", n, err)
	}
}

// TestSweepUsesTheExpiringIndex: the sweep's selection is served by onramps_expiring (a
// partial index of the ACTIVE TEMPORARY onramps by expires_at), not by a scan of the table.
func TestSweepUsesTheExpiringIndex(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	var plan []string
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		// A test table is tiny, where a scan is cheapest: forbid it to see the index is usable.
		if _, err := tx.Exec(ctx, `set local enable_seqscan = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `explain `+onramps.ExpireDueSQL, time.Now(), 1000)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "onramps_expiring") {
		t.Fatalf("the sweep does not use onramps_expiring:\n%s", p)
	}
}

// work runs the real river client with the onramp workers as svcd registers them
// (Register) until done says so, within 30 s.
func work(t *testing.T, pool *pgxpool.Pool, svc *onramps.Service, done func() (bool, string)) {
	t.Helper()
	workers := river.NewWorkers()
	if err := onramps.Register(workers, svc); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{onramps.Queue: 2},
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(c)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOldExpiryJobsStillComplete: onramp_expire jobs an older release enqueued (one per
// TEMPORARY onramp, at its expires_at) complete after the upgrade, whether their onramp is
// still ACTIVE (the job expires it, as it did), already swept, or gone; an onramp not due
// is left ACTIVE.
func TestOldExpiryJobsStillComplete(t *testing.T) {
	r := newSweepRig(t, onramps.Config{})
	pool, ctx, start, clk, svc := r.pool, r.ctx, r.start, r.clk, r.svc
	tn := payments.Tenant{MerchantID: uuid.Must(uuid.NewV7()), Environment: payments.Sandbox}
	swept := put(t, pool, tn, onramps.Temporary, onramps.Active, start)
	clk.set(start.Add(time.Hour))
	if n, err := r.sweep(); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	clk.set(start)
	byJob := put(t, pool, tn, onramps.Temporary, onramps.Active, start)
	fresh := put(t, pool, tn, onramps.Temporary, onramps.Active, start.Add(time.Hour))
	clk.set(start.Add(time.Hour))

	inserter := paymentstest.Jobs(t, pool)
	var old []int64
	for _, id := range []uuid.UUID{byJob.ID, swept.ID, uuid.Must(uuid.NewV7())} {
		res, err := inserter.Insert(ctx, onramps.ExpireArgs{OnrampID: id}, &river.InsertOpts{ScheduledAt: start.Add(onramps.TemporaryLifetime)})
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, res.Job.ID)
	}
	work(t, pool, svc, func() (bool, string) {
		var pending int
		if err := pool.QueryRow(ctx, `select count(*) from river_job where id = any($1) and state <> 'completed'`, old).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		return pending == 0, fmt.Sprintf("%d of the old expiry jobs not completed", pending)
	})
	for _, c := range []struct {
		name string
		o    onramps.Onramp
		want string
	}{{"swept", swept, onramps.Expired}, {"by its job", byJob, onramps.Expired}, {"not due", fresh, onramps.Active}} {
		if s := stored(t, pool, c.o.ID); s != c.want {
			t.Errorf("%s: stored %s, want %s", c.name, s, c.want)
		}
	}
}

// TestConcurrentSweepsMoveEachOnrampOnce: sweeps running at once (a slow run overlapping
// the next period's) share the due rows through skip locked: together they move every due
// onramp exactly once, and none is left ACTIVE.
func TestConcurrentSweepsMoveEachOnrampOnce(t *testing.T) {
	r := newSweepRig(t, onramps.Config{SweepBatch: 7})
	const due = 120
	for i := range due {
		put(t, r.pool, payments.Tenant{MerchantID: uuid.Must(uuid.NewV7()), Environment: []string{payments.Sandbox, payments.Live}[i%2]},
			onramps.Temporary, onramps.Active, r.start.Add(time.Duration(i)*time.Millisecond))
	}
	r.clk.set(r.start.Add(time.Hour))
	var moved atomic.Int64
	if err := paymentstest.Race(4, func(int) error {
		n, err := r.sweep()
		moved.Add(n)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var active int
	if err := r.pool.QueryRow(r.ctx, `select count(*) from onramps where status = 'ACTIVE'`).Scan(&active); err != nil {
		t.Fatal(err)
	}
	if moved.Load() != due || active != 0 {
		t.Fatalf("sweeps moved %d of %d due onramps; %d left ACTIVE", moved.Load(), due, active)
	}
}
