package deposits_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/engine"
	"svc/gateway/api/shapes"
	"svc/gateway/auth/authtest"
	gwbalance "svc/gateway/balance"
	gwcustomers "svc/gateway/customers"
	gwdeposits "svc/gateway/deposits"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	gwonramps "svc/gateway/onramps"
	gwrates "svc/gateway/rates"
	gwva "svc/gateway/virtualaccounts"
	"svc/payments/balance"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/payments/treasury"
	"svc/payments/virtualaccounts"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
)

// clock is a settable clock; zero offset is real time.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

type rigOptions struct {
	noWorkers   bool // jobs are inserted but not worked (steps are driven by hand)
	liveBank    bool // live has the sandbox simulators too (to test separation)
	noReference bool // no reference prices: an empty book cannot be priced
	// tracer, when set, is installed on the rig's pool (its own pool of 20 connections on
	// the test database) to count statements, round trips and pool acquires.
	tracer pgx.QueryTracer
	// maxConns, when set, gives the rig its own pool of that many connections (as svcd's
	// --db-max-conns) instead of pgtest's 20.
	maxConns int32
	// minConns, with maxConns, is the pool's MinConns (opened at start and kept open, as
	// svcd opens its pool).
	minConns int32
	// fetchCooldown is the river clients' FetchCooldown, which also spaces their insert
	// notifications (NOTIFY) per queue; default 5 ms.
	fetchCooldown time.Duration
	// settled is given to the deposits service (deposits.Config Settled), if set.
	settled deposits.SettlementHook
	// treasury gives the sandbox a treasury and a market maker, as svcd does (issue 27).
	treasury bool
	// settleInConversion is deposits.Config SettleInConversion, as svcd sets it.
	settleInConversion bool
	// convertOnReceipt is deposits.Config ConvertOnReceipt, as svcd sets it.
	convertOnReceipt bool
}

// rig is the whole money-in stack: sandbox and live engines on in-memory journals, the
// services over PostgreSQL, the river workers, and the real gateway with identity,
// customers and virtual accounts.
type rig struct {
	pool     *pgxpool.Pool
	srv      *gatewaytest.Server
	a, b     authtest.Merchant
	clock    *clock
	engines  map[string]*engine.Engine
	client   *jobs.Client
	rates    *rates.Service
	onramps  *onramps.Service
	deposits *deposits.Service
	balance  *balance.Service
	desk     *treasury.Desk  // with rigOptions.treasury
	maker    *treasury.Maker // with rigOptions.treasury
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	pool, url := pgtest.New(t)
	if o.tracer != nil || o.maxConns > 0 {
		pool = tracedPool(t, url, o.tracer, o.maxConns, o.minConns)
	}
	r := &rig{pool: pool, clock: &clock{}, engines: map[string]*engine.Engine{}}
	rx, bx := map[string]rates.Exchange{}, map[string]balance.Exchange{}
	for _, env := range []string{"sandbox", "live"} {
		j := journal.NewMemory()
		if err := j.Start(); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Stop)
		r.engines[env], rx[env], bx[env] = eng, eng, eng
	}
	envs := providers.Default(providers.SandboxConfig{})
	if o.liveBank {
		envs.Live = providers.NewSandbox(providers.SandboxConfig{BankCode: "998", BankName: "Live Test Bank"})
	}
	refs := map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000, money.USD: 160000}
	if o.noReference {
		refs = nil
	}
	var err error
	late := &lateDesk{}
	var desk rates.Treasury
	if o.treasury {
		desk = late
	}
	r.rates, err = rates.New(pool, rates.Config{Exchanges: rx, References: refs, Now: r.clock.Now, Treasury: desk})
	if err != nil {
		t.Fatal(err)
	}
	if o.treasury {
		r.desk, r.maker = newTreasury(t, pool, r.engines["sandbox"], r.rates)
		late.desk = r.desk
	}
	if o.fetchCooldown == 0 {
		o.fetchCooldown = 5 * time.Millisecond
	}
	// The services enqueue through an insert-only client (as in svcd); r.client works them.
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: o.fetchCooldown})
	if err != nil {
		t.Fatal(err)
	}
	var settled []deposits.SettlementHook
	if o.settled != nil {
		settled = append(settled, o.settled)
	}
	workers := river.NewWorkers()
	rec := events.NewRecorder(inserter)
	r.onramps = onramps.New(pool, onramps.Config{Rates: r.rates, Providers: envs, Customers: onramps.Directory, Events: rec, Now: r.clock.Now})
	r.deposits = deposits.New(pool, deposits.Config{Onramps: r.onramps, Rates: r.rates, Providers: envs, Events: rec, Jobs: inserter,
		Settled: settled, SettleInConversion: o.settleInConversion,
		ConvertOnReceipt: o.convertOnReceipt, Now: r.clock.Now})
	r.balance = balance.New(pool, balance.Config{Exchanges: bx, Providers: envs, Jobs: inserter, Now: r.clock.Now})
	// Webhook deliveries are enqueued (endpoints the tests register) but not worked here.
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[events.DeliveryArgs]) error { return nil }))
	// Sandbox deposits arrive as the sandbox bank's notifications, through the partner path
	// (issue 19), as in svcd.
	inbound, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxBankPartner(rigPartnerSecret)},
		Jobs: inserter, Events: rec, Deposits: r.deposits, Onramps: r.onramps, Providers: envs, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range []error{onramps.Register(workers, r.onramps), deposits.Register(workers, r.deposits), balance.Register(workers, r.balance),
		partners.Register(workers, inbound)} {
		if reg != nil {
			t.Fatal(reg)
		}
	}
	cfg := jobs.Config{Workers: workers, Queues: map[string]int{onramps.Queue: 20, partners.Queue: 5}, FetchPollInterval: max(20*time.Millisecond, o.fetchCooldown), FetchCooldown: o.fetchCooldown}
	r.client, err = jobs.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !o.noWorkers {
		if err := r.client.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = r.client.Stop(ctx)
		})
	}
	idem := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
	r.srv = gatewaytest.New(t, pool,
		gwrates.New(r.rates), gwonramps.New(r.onramps, idem), gwdeposits.New(partners.SandboxDeposits{Service: r.deposits, Onramps: r.onramps, Partners: inbound, Secret: rigPartnerSecret}, nil), gwbalance.New(r.balance, idem),
		gwcustomers.New(customers.NewService(pool, rec, envs, nil), idem),
		gwva.New(virtualaccounts.NewService(pool, rec, envs, nil), idem))
	r.a, r.b = authtest.New(t, pool), authtest.New(t, pool)
	return r
}

// rigPartnerSecret signs the sandbox bank's notifications in the rig.
const rigPartnerSecret = "rig-sandbox-partner-secret"

// Typed JSON views of the API objects.
type onrampJSON = gwonramps.OnrampJSON
type depositJSON = shapes.DepositJSON

func decode[T any](t testing.TB, r gatewaytest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return v
}

// waitDeposit polls the deposit until its status is want (or fails after 10 s).
func (r *rig) waitDeposit(t testing.TB, key, id, want string) depositJSON {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+id, key, nil))
		if d.Status == want {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit %s is %s after 10 s, want %s (%v)", id, d.Status, want, d.FailureReason)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// temporary creates a TEMPORARY onramp of amount NGN with key.
func (r *rig) temporary(t testing.TB, key string, amount any, extra ...string) onrampJSON {
	t.Helper()
	body := map[string]any{"type": "TEMPORARY", "amount": amount}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	return decode[onrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, body))
}

// endpoint registers an active webhook endpoint of the merchant's sandbox subscribed to
// every event (its deliveries are enqueued, not sent).
func (r *rig) endpoint(t testing.TB, m uuid.UUID) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `insert into webhook_endpoints (id, merchant_id, environment, url, secret_enc)
		values ($1, $2, 'sandbox', 'https://example.com/hooks', '\\x00')`, uuid.New(), m); err != nil {
		t.Fatal(err)
	}
}

// countingHook is a settlement hook for tests that count its runs. It records each run in
// the settling transaction itself (table settle_hook_runs), so only runs that committed are
// counted: a step's transaction can run more than once, as postgres.InTx reruns a batch the
// database aborted (a deadlock between concurrent batches), and a counter outside the
// transaction counts the aborted run too (the flake of CI at 2f8cad1: "ran 9 times, want
// 8"). A deposit in refusing is refused on every attempt until the test deletes it, so a
// rerun refuses it as the aborted run did. check, if set, runs first.
type countingHook struct {
	refusing sync.Map // deposit id -> struct{}
	check    func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error
}

// DepositSettled refuses a deposit in h.refusing, or records the run in tx.
func (h *countingHook) DepositSettled(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
	if h.check != nil {
		if err := h.check(ctx, tx, d); err != nil {
			return err
		}
	}
	if _, ok := h.refusing.Load(d.ID); ok {
		return errors.New("the hook refuses")
	}
	_, err := tx.Exec(ctx, `insert into settle_hook_runs (deposit_id) values ($1)`, d.ID)
	return err
}

// countHookRuns creates the table countingHook records its runs in: call it before any
// deposit settles.
func countHookRuns(t testing.TB, r *rig) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `create table settle_hook_runs (deposit_id uuid not null)`); err != nil {
		t.Fatal(err)
	}
}

// hookRuns reports the committed runs of countingHook: in all, and of distinct deposits.
func hookRuns(t testing.TB, r *rig) (runs, distinct int) {
	t.Helper()
	if err := r.pool.QueryRow(context.Background(),
		`select count(*), count(distinct deposit_id) from settle_hook_runs`).Scan(&runs, &distinct); err != nil {
		t.Fatal(err)
	}
	return runs, distinct
}
