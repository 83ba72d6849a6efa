package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/gateway/auth/authtest"
	gwdeposits "svc/gateway/deposits"
	"svc/gateway/gatewaytest"
	gwofframps "svc/gateway/offramps"
	gwrates "svc/gateway/rates"
	gwtransfers "svc/gateway/transfers"
	gwwithdrawals "svc/gateway/withdrawals"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/offramps"
	"svc/payments/onramps"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/payments/transfers"
	"svc/payments/withdrawals"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// outRig is the money-out stack (withdrawals, transfers, offramps with payouts) behind the
// real gateway, with its jobs worked.
type outRig struct {
	pool *pgxpool.Pool
	srv  *gatewaytest.Server
	m    authtest.Merchant
}

func newOutRig(t testing.TB) *outRig {
	t.Helper()
	pool, _ := pgtest.New(t)
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
	deps := deposits.New(pool, deposits.Config{Onramps: ons, Rates: rs, Providers: envs, Events: rec, Jobs: inserter})
	out := moneyout.Deps{Providers: envs, Events: rec, Jobs: inserter, Poll: 20 * time.Millisecond}
	ws := withdrawals.New(pool, withdrawals.Config{Deps: out})
	ts := transfers.New(pool, transfers.Config{Deps: out, Prices: rs})
	ofs := offramps.New(pool, offramps.Config{Deps: out, Rates: rs, Customers: offramps.Directory{Svc: customers.NewService(pool, rec, envs, nil)}})
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[events.DeliveryArgs]) error { return nil }))
	for _, err := range []error{onramps.Register(workers, ons), deposits.Register(workers, deps), withdrawals.Register(workers, ws),
		transfers.Register(workers, ts), offramps.Register(workers, ofs)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	worker, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{onramps.Queue: 10, moneyout.Queue: 10},
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
	keys := idempotency.New(pool, idempotency.Config{})
	// The offramp flavour of the sandbox deposit is the sandbox custodian's notification
	// through the partner path.
	inbound, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxCustodyPartner("sandbox-secret")},
		Jobs: inserter, Events: rec, Offramps: ofs, Providers: envs})
	if err != nil {
		t.Fatal(err)
	}
	gof := gwofframps.New(ofs, keys, partners.SandboxOfframps{Offramps: ofs, Partners: inbound, Secret: "sandbox-secret"})
	gd := gwdeposits.New(deps, gof.Dispatch)
	r := &outRig{pool: pool}
	r.srv = gatewaytest.New(t, pool, gwrates.New(rs), gd, gwwithdrawals.New(ws, keys), gwtransfers.New(ts, keys), gof)
	r.m = authtest.New(t, pool)
	return r
}

// fund credits the merchant's sandbox USDT balance (as a settled deposit would).
func (r *outRig) fund(t testing.TB, usdt int64) {
	t.Helper()
	err := postgres.InTx(context.Background(), r.pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(context.Background(), tx, ledger.Transaction{MerchantID: r.m.ID, Environment: "sandbox",
			Reference: "test:fund:" + uuid.NewString(), Kind: "test.fund", Description: "test funding",
			Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(r.m.ID, ledger.Available), money.New(money.USDT, usdt))})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *outRig) available(t testing.TB) money.Amount {
	t.Helper()
	b, err := ledger.GetBalance(context.Background(), r.pool, r.m.ID, "sandbox", ledger.Merchant(r.m.ID, ledger.Available), money.USDT)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount
}

// waitStatus polls GET path until data.status is want.
func (r *outRig) waitStatus(t testing.TB, path, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := decode[map[string]any](t, r.srv.Must(t, 200, "GET", path, r.m.SandboxKey, nil))
		if v["status"] == want {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v after 10 s, want %s (%v)", path, v["status"], want, v["failure_reason"])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *outRig) eventsAbout(t testing.TB, id string) []string {
	t.Helper()
	rows, err := r.pool.Query(context.Background(), `select type || ':' || coalesce(data->>'status', '') from events
		where merchant_id = $1 and (data->>'id' = $2 or data->>'deposit_id' = $2) order by created_at, id`, r.m.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

func TestMagicMoneyOutFailures(t *testing.T) {
	r := newOutRig(t)
	key := r.m.SandboxKey
	r.fund(t, 1_000_000_000) // 1,000 USDT
	before := r.available(t)

	t.Run("withdrawal rejected by the chain", func(t *testing.T) {
		for _, chain := range []providers.Chain{providers.Tron, providers.Base, providers.Solana, providers.Aptos} {
			w := decode[map[string]any](t, r.srv.Must(t, 201, "POST", "/v1/payments/withdrawals", key, map[string]any{
				"amount_usd": "5.00", "token": "USDT", "chain": string(chain), "destination_address": providers.SendRejected(chain)},
				"X-Idempotency-Key", uuid.NewString()))
			id := w["id"].(string)
			got := r.waitStatus(t, "/v1/payments/withdrawals/"+id, "FAILED")
			if reason, _ := got["failure_reason"].(string); !strings.Contains(reason, "rejected") {
				t.Fatalf("%s: %v", chain, got)
			}
			if evs := strings.Join(r.eventsAbout(t, id), ","); evs != "withdrawal.failed:FAILED" {
				t.Fatalf("%s: events %s", chain, evs)
			}
		}
		if a := r.available(t); a.Cmp(before) != 0 {
			t.Fatalf("available %s, want %s (funds back)", a, before)
		}
		verify(t, r.pool)
	})

	transfer := func(t *testing.T, body map[string]any) {
		tr := decode[map[string]any](t, r.srv.Must(t, 201, "POST", "/v1/payments/transfers", key, body, "Idempotency-Key", uuid.NewString()))
		id := tr["id"].(string)
		got := r.waitStatus(t, "/v1/payments/transfers/"+id, "FAILED")
		if reason, _ := got["failure_reason"].(string); !strings.Contains(reason, "sandbox rejected") {
			t.Fatalf("%v", got)
		}
		if evs := strings.Join(r.eventsAbout(t, id), ","); evs != "transfer.failed:FAILED" {
			t.Fatalf("events %s", evs)
		}
		if a := r.available(t); a.Cmp(before) != 0 {
			t.Fatalf("available %s, want %s (funds back)", a, before)
		}
		verify(t, r.pool)
	}
	t.Run("NGN transfer rejected by the bank", func(t *testing.T) {
		transfer(t, map[string]any{"currency": "NGN", "amount": "1000.00", "reference": "rej-ngn",
			"destination": map[string]any{"type": "BANK_ACCOUNT", "bank_account": map[string]any{"account_number": providers.PayoutRejectedAccountNGN, "bank_code": "058"}}})
	})
	t.Run("US transfer rejected by the bank", func(t *testing.T) {
		transfer(t, map[string]any{"currency": "USD", "amount": "10.00", "reference": "rej-us",
			"destination": map[string]any{"type": "US_BANK_ACCOUNT", "us_bank_account": map[string]any{"account_owner_name": "Ada Obi",
				"account_number": providers.PayoutRejectedAccountUS, "routing_number": "110000000", "bank_name": "Test Bank",
				"account_type": "checking", "payout_scheme": "ach", "address": map[string]any{"country": "USA"}}}})
	})
	t.Run("SWIFT transfer rejected by the bank", func(t *testing.T) {
		transfer(t, map[string]any{"currency": "USD", "amount": "10.00", "reference": "rej-swift",
			"destination": map[string]any{"type": "SWIFT_BANK_ACCOUNT", "swift_bank_account": map[string]any{"account_owner_name": "Ada Obi",
				"account_owner_type": "business", "account_country": "GBR", "iban": providers.PayoutRejectedIBAN, "category": "supplier",
				"purpose_of_funds": []string{"invoice_for_goods_and_services"}, "short_business_description": "Widgets",
				"address": map[string]any{"country": "GBR"}, "bank_address": map[string]any{"country": "GBR"}}}})
	})
	t.Run("offramp NGN payout rejected by the bank", func(t *testing.T) {
		rates := decode[[]map[string]any](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?from=USDT&to=NGN&side=sell", key, nil))
		if len(rates) == 0 {
			t.Fatal("no sell rate")
		}
		of := decode[map[string]any](t, r.srv.Must(t, 201, "POST", "/v1/payments/offramps", key, map[string]any{
			"type": "TEMPORARY", "customer": map[string]any{"email": "payee@example.com"}, "chain": "TRON", "asset": "USDT",
			"settlement": map[string]any{"mode": "NGN_PAYOUT", "rate_id": rates[0]["id"], "destination_bank": map[string]any{
				"account_name": "Ada Obi", "account_number": providers.PayoutRejectedAccountNGN, "bank_code": "058"}}},
			"X-Idempotency-Key", uuid.NewString()))
		d := decode[map[string]any](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"offramp_id": of["id"], "amount": "10"}))
		id := d["id"].(string)
		got := r.waitStatus(t, "/v1/payments/deposits/"+id, "FAILED")
		evs := r.eventsAbout(t, id)
		if reason, _ := got["failure_reason"].(string); !strings.Contains(reason, "sandbox rejected account") {
			t.Fatalf("%v", got)
		}
		if !strings.Contains(strings.Join(evs, ","), "customer.balance.credited") {
			t.Fatalf("no customer.balance.credited for the returned NGN: %v", evs)
		}
		verify(t, r.pool)
	})
}
