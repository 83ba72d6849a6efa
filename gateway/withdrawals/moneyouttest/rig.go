// Package moneyouttest runs the money-out routes (withdrawals, offramps, recipients,
// transfers, and the offramp flavour of the sandbox deposit) on the real gateway against a
// pgtest database, with sandbox providers that can be told to refuse, for the end-to-end
// tests and benchmarks of those routes.
package moneyouttest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	gwofframps "svc/gateway/offramps"
	o "svc/gateway/openapi"
	gwrecipients "svc/gateway/recipients"
	gwtransfers "svc/gateway/transfers"
	gwwithdrawals "svc/gateway/withdrawals"
	"svc/payments"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/offramps"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/payments/recipients"
	"svc/payments/transfers"
	"svc/payments/withdrawals"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// FailAddress is a destination the rig's custodian refuses (a chain rejection).
const FailAddress = "0x000000000000000000000000000000000000dead"

// FailAccount is an account number the rig's bank refuses (a bank rejection).
const FailAccount = "0000000000"

// sandboxSecret signs the rig's sandbox custodian notifications.
const sandboxSecret = "moneyouttest-sandbox-secret"

// Price is the rig's reference price of USDT, USDC and USD: 1,600.00 NGN.
const Price = 160_000

// Rig is a running gateway with the money-out routes and two merchants.
type Rig struct {
	Pool        *pgxpool.Pool
	Srv         *gatewaytest.Server
	M, Other    authtest.Merchant
	Withdrawals *withdrawals.Service
	Offramps    *offramps.Service
	Transfers   *transfers.Service
	Recipients  *recipients.Service
	Rates       *rates.Service
	Customers   *customers.Service
	Jobs        *CrashJobs
	// The route sets, whose AfterCreate hooks simulate a crash after the debit.
	WithdrawalRoutes *gwwithdrawals.Routes
	TransferRoutes   *gwtransfers.Routes
	OfframpRoutes    *gwofframps.Routes
	Client           *jobs.Client // working client when Options.Work, else insert-only
}

// Options tune the rig.
type Options struct {
	// Work starts a river client working the money-out queue (else jobs are only inserted
	// and tests drive the services' Advance themselves).
	Work bool
	// Live gives live the sandbox simulators too (else live is unconfigured).
	Live bool
	// Pool, when set, is used instead of a fresh pgtest database (benchmarks size it).
	Pool *pgxpool.Pool
}

// CrashJobs inserts through the client, and panics after the insert while Crashes > 0: a
// process dying in the middle of the service's writes.
type CrashJobs struct {
	C       *jobs.Client
	Crashes atomic.Int32
}

// InsertTx implements the services' JobInserter.
func (c *CrashJobs) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	r, err := c.C.InsertTx(ctx, tx, args, opts)
	if err == nil && c.Crashes.Add(-1) >= 0 {
		panic("simulated crash in the middle of the writes")
	}
	return r, err
}

// refusing wraps a set: sends to FailAddress and payouts to FailAccount are refused.
type refusingCustody struct{ providers.Custody }

func (r refusingCustody) Send(ctx context.Context, req providers.SendRequest) (providers.SendResult, error) {
	if req.To == FailAddress {
		return providers.SendResult{Status: providers.SendFailed, FailureReason: "rejected by the chain (test)"}, nil
	}
	return r.Custody.Send(ctx, req)
}

type refusingBank struct{ providers.Bank }

func (r refusingBank) Payout(ctx context.Context, req providers.PayoutRequest) (providers.PayoutResult, error) {
	if req.AccountNumber == FailAccount || req.Details["iban"] == "GB33BUKB20201555555555" {
		return providers.PayoutResult{Status: providers.PayoutFailed, FailureReason: "rejected by the bank (test)"}, nil
	}
	return r.Bank.Payout(ctx, req)
}

func sandboxSet() providers.Set {
	s := providers.NewSandbox(providers.SandboxConfig{})
	s.Custody = refusingCustody{s.Custody}
	s.Bank = refusingBank{s.Bank}
	return s
}

// sandboxDeposits stands in for the deposits edge's POST /payments/sandbox/deposits: only
// the offramp flavour (Dispatch), anything else 404.
type sandboxDeposits struct{ off *gwofframps.Routes }

func (s sandboxDeposits) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/sandbox/deposits", protect(s.off.Dispatch(func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(404)
	})))
}

func (sandboxDeposits) Docs() []o.Op {
	return []o.Op{{Method: "POST", Path: "/v1/payments/sandbox/deposits", Summary: "test stand-in"}}
}

// New starts the rig.
func New(t testing.TB, opt Options) *Rig {
	t.Helper()
	pool := opt.Pool
	if pool == nil {
		pool, _ = pgtest.New(t)
	}
	r := &Rig{Pool: pool}
	envs := providers.Environments{Sandbox: sandboxSet(), Live: providers.Unconfigured()}
	if opt.Live {
		envs.Live = sandboxSet()
	}
	var err error
	r.Rates, err = rates.New(pool, rates.Config{References: map[money.Asset]int64{money.USDT: Price, money.USDC: Price, money.USD: Price}})
	if err != nil {
		t.Fatal(err)
	}
	// The services enqueue through an insert-only client (as in svcd); with Work, a second
	// client works their jobs.
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r.Jobs, r.Client = &CrashJobs{C: inserter}, inserter
	rec := events.NewRecorder(inserter)
	r.Customers = customers.NewService(pool, rec, envs, nil)
	out := moneyout.Deps{Providers: envs, Events: rec, Jobs: r.Jobs, Poll: 20 * time.Millisecond}
	r.Withdrawals = withdrawals.New(pool, withdrawals.Config{Deps: out})
	r.Transfers = transfers.New(pool, transfers.Config{Deps: out, Prices: r.Rates})
	r.Offramps = offramps.New(pool, offramps.Config{Deps: out, Rates: r.Rates, Customers: offramps.Directory{Svc: r.Customers}})
	r.Recipients = recipients.New(pool, nil)
	if opt.Work {
		workers := river.NewWorkers()
		for _, err := range []error{withdrawals.Register(workers, r.Withdrawals), transfers.Register(workers, r.Transfers),
			offramps.Register(workers, r.Offramps)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if r.Client, err = jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{moneyout.Queue: 10},
			FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := r.Client.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = r.Client.StopAndCancel(ctx)
		})
	}
	keys := idempotency.New(pool, idempotency.Config{})
	// The sandbox offramp deposits are the sandbox custodian's notifications through the
	// partner path (payments/partners), which enqueues its own jobs without crashing.
	inbound, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxCustodyPartner(sandboxSecret)},
		Jobs: inserter, Events: rec, Offramps: r.Offramps, Providers: envs})
	if err != nil {
		t.Fatal(err)
	}
	off := gwofframps.New(r.Offramps, keys, partners.SandboxOfframps{Offramps: r.Offramps, Partners: inbound, Secret: sandboxSecret})
	r.WithdrawalRoutes, r.TransferRoutes, r.OfframpRoutes = gwwithdrawals.New(r.Withdrawals, keys), gwtransfers.New(r.Transfers, keys), off
	r.Srv = gatewaytest.New(t, pool, r.WithdrawalRoutes, off, gwrecipients.New(r.Recipients, keys), r.TransferRoutes, sandboxDeposits{off})
	r.M = authtest.New(t, pool)
	r.Other = authtest.New(t, pool)
	return r
}

// RouteSets is unused; it keeps gateway imported for documentation of the rig's shape.
var _ gateway.RouteSet = sandboxDeposits{}

// Fund credits amount USDT to the merchant's available balance in env (system external ->
// merchant available), as a settled deposit would.
func (r *Rig) Fund(t testing.TB, m uuid.UUID, env, amount string) {
	t.Helper()
	err := postgres.InTx(context.Background(), r.Pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(context.Background(), tx, ledger.Transaction{MerchantID: m, Environment: env,
			Reference: "fund:" + uuid.NewString(), Kind: "test.fund",
			Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(m, ledger.Available), money.MustParse(money.USDT, amount))})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Balance returns a merchant USDT account's balance ("available" or "pending").
func (r *Rig) Balance(t testing.TB, m uuid.UUID, env string, purpose ledger.Purpose) string {
	t.Helper()
	b, err := ledger.GetBalance(context.Background(), r.Pool, m, env, ledger.Merchant(m, purpose), money.USDT)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount.String()
}

// CustomerBalance returns a customer's balance of asset ("available" or "pending").
func (r *Rig) CustomerBalance(t testing.TB, m uuid.UUID, env string, c uuid.UUID, asset money.Asset, purpose ledger.Purpose) string {
	t.Helper()
	b, err := ledger.GetBalance(context.Background(), r.Pool, m, env, ledger.Customer(c, purpose), asset)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount.String()
}

// Verify fails the test on any ledger violation.
func (r *Rig) Verify(t testing.TB) {
	t.Helper()
	v, err := ledger.Verify(context.Background(), r.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Fatalf("ledger violations: %v", v)
	}
}

// Customer creates a customer of m in env.
func (r *Rig) Customer(t testing.TB, m uuid.UUID, env, email string) uuid.UUID {
	t.Helper()
	c, err := r.Customers.Create(context.Background(), payments.Tenant{MerchantID: m, Environment: env},
		customers.CreateInput{Email: email, FirstName: "Ada", LastName: "Obi"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// SellRate returns a fresh sell quote id of asset for m in env.
func (r *Rig) SellRate(t testing.TB, m uuid.UUID, env string, asset money.Asset) uuid.UUID {
	t.Helper()
	qs, err := r.Rates.Quote(context.Background(), payments.Tenant{MerchantID: m, Environment: env},
		rates.Request{Assets: []money.Asset{asset}, Sides: []string{rates.Sell}})
	if err != nil || len(qs) != 1 {
		t.Fatal(qs, err)
	}
	return qs[0].ID
}

// Events returns the types of m's recorded events in env, oldest first.
func (r *Rig) Events(t testing.TB, m uuid.UUID, env string) []string {
	t.Helper()
	rows, err := r.Pool.Query(context.Background(), `select type from events where merchant_id = $1 and environment = $2 order by created_at, id`, m, env)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// Drive calls advance until it reports nothing left to do (at most 10 steps).
func Drive(t testing.TB, advance func(context.Context, uuid.UUID) (time.Duration, error), id uuid.UUID) {
	t.Helper()
	for i := 0; i < 10; i++ {
		wait, err := advance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if wait == 0 {
			return
		}
	}
	t.Fatal("still not terminal after 10 steps")
}

// CrashAfter returns a hook for a route set's AfterCreate that panics n times: the process
// dying after the service's writes (the debit), before the response.
func CrashAfter(n int32) func() {
	var left atomic.Int32
	left.Store(n)
	return func() {
		if left.Add(-1) >= 0 {
			panic("simulated crash between the debit and the response")
		}
	}
}
