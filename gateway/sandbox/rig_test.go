package sandbox_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/gateway/api/shapes"
	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	gwdeposits "svc/gateway/deposits"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	gwonramps "svc/gateway/onramps"
	"svc/gateway/sandbox"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/operator"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// rig is the money-in stack (reference prices only, no engine) with the deposit lifecycle
// worked by river, behind the real gateway with the sandbox controls.
type rig struct {
	pool     *pgxpool.Pool
	srv      *gatewaytest.Server
	a, b     authtest.Merchant
	deposits *deposits.Service
	ops      *operator.Deposits
	partners *partners.Service // the intake the sandbox deposit simulation posts to
}

func newRig(t testing.TB) *rig {
	t.Helper()
	pool, _ := pgtest.New(t)
	r := &rig{pool: pool}
	envs := providers.Default(providers.SandboxConfig{})
	rs, err := rates.New(pool, rates.Config{References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000, money.USD: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	// The services enqueue through an insert-only client (as in svcd); worker works them.
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(inserter)
	ons := onramps.New(pool, onramps.Config{Rates: rs, Providers: envs, Customers: onramps.Directory, Events: rec})
	r.deposits = deposits.New(pool, deposits.Config{Onramps: ons, Rates: rs, Providers: envs, Events: rec, Jobs: inserter})
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[events.DeliveryArgs]) error { return nil }))
	if err := onramps.Register(workers, ons); err != nil {
		t.Fatal(err)
	}
	if err := deposits.Register(workers, r.deposits); err != nil {
		t.Fatal(err)
	}
	// Sandbox deposits arrive as the sandbox bank's notifications, through the partner path
	// (issue 19), as in svcd.
	const partnerSecret = "rig-sandbox-partner-secret"
	inbound, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxBankPartner(partnerSecret)},
		Jobs: inserter, Events: rec, Deposits: r.deposits, Onramps: ons, Providers: envs})
	if err != nil {
		t.Fatal(err)
	}
	r.partners = inbound
	if err := partners.Register(workers, inbound); err != nil {
		t.Fatal(err)
	}
	worker, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{onramps.Queue: 10, partners.Queue: 5},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = worker.Stop(ctx)
	})
	r.ops = operator.NewDeposits(r.deposits)
	idem := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
	r.srv = gatewaytest.New(t, pool, gwonramps.New(ons, idem), gwdeposits.New(partners.SandboxDeposits{Service: r.deposits, Onramps: ons, Partners: inbound, Secret: partnerSecret}, nil),
		gwcustomers.New(customers.NewService(pool, rec, envs, nil), idem), sandbox.New(r.ops))
	r.a, r.b = authtest.New(t, pool), authtest.New(t, pool)
	return r
}

type depositJSON = shapes.DepositJSON

func decode[T any](t testing.TB, r gatewaytest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return v
}

// onramp creates a TEMPORARY onramp of amount NGN (extra: more body fields).
func (r *rig) onramp(t testing.TB, key string, amount any, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"type": "TEMPORARY", "amount": amount}
	for k, v := range extra {
		body[k] = v
	}
	return decode[gwonramps.OnrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, body)).ID
}

// deposit simulates a deposit into a new TEMPORARY onramp and waits for want.
func (r *rig) deposit(t testing.TB, key string, amount any, flag bool, extra map[string]any, want string) depositJSON {
	t.Helper()
	o := r.onramp(t, key, amount, extra)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o, "should_flag": flag}))
	return r.wait(t, key, d.ID, want)
}

// wait polls the deposit until its status is want (10 s at most).
func (r *rig) wait(t testing.TB, key, id, want string) depositJSON {
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

// customer creates a customer and returns its id.
func (r *rig) customer(t testing.TB, key, email string) string {
	t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	r.srv.Must(t, 201, "POST", "/v1/customers", key, map[string]string{"email": email, "first_name": "Ada", "last_name": "Obi"}).Decode(t, &c)
	return c.ID
}

// events counts the merchant's events of typ about the deposit id (data id or deposit_id),
// with data status st when st is not "".
func (r *rig) events(t testing.TB, m uuid.UUID, typ events.Type, id, st string) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from events where merchant_id = $1 and type = $2
		and (data->>'id' = $3 or data->>'deposit_id' = $3) and ($4 = '' or data->>'status' = $4)`, m, string(typ), id, st).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// balance is an account's balance in the merchant's sandbox books.
func (r *rig) balance(t testing.TB, m uuid.UUID, a ledger.Account, asset money.Asset) money.Amount {
	t.Helper()
	b, err := ledger.GetBalance(context.Background(), r.pool, m, "sandbox", a, asset)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount
}

// ledgerTxs counts the ledger transactions with reference ref.
func (r *rig) ledgerTxs(t testing.TB, ref string) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from ledger_transactions where reference = $1`, ref).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// spend moves amount out of a merchant's or customer's available balance (what a withdrawal
// would do), so a later reversal finds less than it credited.
func (r *rig) spend(t testing.TB, m uuid.UUID, from ledger.Account, amount money.Amount) {
	t.Helper()
	err := postgres.InTx(context.Background(), r.pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(context.Background(), tx, ledger.Transaction{MerchantID: m, Environment: "sandbox",
			Reference: "test:spend:" + uuid.NewString(), Kind: "test.spend", Description: "spent by the test",
			Postings: ledger.Move(from, ledger.System(ledger.External), amount)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// verify fails the test on any ledger violation (what `svc ledger verify` checks).
func verify(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	vs, err := ledger.Verify(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("ledger violation: %v", v)
	}
}

func (r *rig) audits(t testing.TB, subject, action string) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from audit_log where subject = $1 and action = $2`, subject, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
