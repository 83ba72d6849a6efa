package balance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/engine"
	"svc/gateway/auth/authtest"
	gwbalance "svc/gateway/balance"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	"svc/payments/balance"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

type rig struct {
	pool *pgxpool.Pool
	srv  *gatewaytest.Server
	eng  *engine.Engine
	svc  *balance.Service
	m    authtest.Merchant
}

// newRig is the merchant balance over real PostgreSQL, a real engine (in-memory journal),
// the river worker and the real gateway.
func newRig(t *testing.T) *rig {
	t.Helper()
	pool, _ := pgtest.New(t)
	r := &rig{pool: pool}
	xs := map[string]balance.Exchange{}
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
		xs[env] = eng
		if env == "sandbox" {
			r.eng = eng
		}
	}
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = balance.New(pool, balance.Config{Exchanges: xs, Providers: providers.Default(providers.SandboxConfig{}), Jobs: inserter})
	workers := river.NewWorkers()
	if err := balance.Register(workers, r.svc); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{onramps.Queue: 4},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	r.srv = gatewaytest.New(t, pool, gwbalance.New(r.svc, gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))))
	r.m = authtest.New(t, pool)
	return r
}

// fund credits the merchant's payments balance from outside the books.
func (r *rig) fund(t *testing.T, a money.Amount) {
	t.Helper()
	err := postgres.InTx(context.Background(), r.pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(context.Background(), tx, ledger.Transaction{MerchantID: r.m.ID, Environment: "sandbox",
			Reference: "test:fund:" + uuid.NewString(), Kind: "test.fund", Description: "test funding",
			Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(r.m.ID, ledger.Available), a)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) available(t *testing.T, asset money.Asset) money.Amount {
	t.Helper()
	b, err := ledger.GetBalance(context.Background(), r.pool, r.m.ID, "sandbox", ledger.Merchant(r.m.ID, ledger.Available), asset)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount
}

func (r *rig) trading(asset money.Asset) int64 {
	ea, _ := engine.ParseAsset(string(asset))
	return r.eng.Balances(engine.AccountID(r.m.ID))[ea].Available
}

type transferJSON struct {
	ID            string  `json:"id"`
	Direction     string  `json:"direction"`
	AmountUSD     *string `json:"amount_usd"`
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"`
	Status        string  `json:"status"`
	FailureReason *string `json:"failure_reason"`
}

func (r *rig) transfer(t *testing.T, body map[string]any, headers ...string) transferJSON {
	t.Helper()
	var tr transferJSON
	r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", r.m.SandboxKey, body, headers...).Decode(t, &tr)
	return tr
}

func (r *rig) wait(t *testing.T, id, want string) transferJSON {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var p struct {
			Items []transferJSON `json:"items"`
		}
		r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance/transfers?limit=100", r.m.SandboxKey, nil).Decode(t, &p)
		for _, tr := range p.Items {
			if tr.ID == id && tr.Status == want {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %s not %s after 10 s: %+v", id, want, p.Items)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func verify(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	v, err := ledger.Verify(context.Background(), pool)
	if err != nil || len(v) > 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
}

// Every asset moves both ways between the payments and trading balances, exactly: the
// engine holds the amount in its own unit (NGN at 1e-4: kobo x 100), the ledger's postings
// balance (merchant available -> pending -> system:trading and back), a refusal returns
// the funds, a replayed job moves nothing again, and the ledger verifies clean.
func TestEveryAssetMovesBothWays(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		asset                   money.Asset
		fund, out, back, tooBig string
		outUnits, leftUnits     int64 // engine units after to_trading and after the way back
		usd                     bool  // amount_usd shown
	}{
		{money.NGN, "1000000.25", "1234.56", "0.01", "1234.57", 12_345_600, 12_345_500, false},
		{money.USDT, "10.000001", "0.000001", "0.000001", "0.000001", 1, 0, true},
		{money.USDC, "12.345678", "12.345677", "2.000000", "10.345678", 12_345_677, 10_345_677, true},
		{money.USD, "500.55", "500.55", "100.10", "400.46", 50_055, 40_045, true},
	}
	for _, c := range cases {
		t.Run(string(c.asset), func(t *testing.T) {
			fund, out, back := money.MustParse(c.asset, c.fund), money.MustParse(c.asset, c.out), money.MustParse(c.asset, c.back)
			r.fund(t, fund)
			tr := r.transfer(t, map[string]any{"asset": string(c.asset), "amount": c.out})
			if tr.Status != "PENDING" || tr.Currency != string(c.asset) || tr.Amount != out.String() || (tr.AmountUSD != nil) != c.usd {
				t.Fatalf("%+v", tr)
			}
			r.wait(t, tr.ID, "COMPLETED")
			if got := r.trading(c.asset); got != c.outUnits {
				t.Fatalf("trading %s %d, want %d", c.asset, got, c.outUnits)
			}
			left, _ := fund.Sub(out)
			if got := r.available(t, c.asset); got != left {
				t.Fatalf("payments %s %s, want %s", c.asset, got, left)
			}

			tb := r.transfer(t, map[string]any{"asset": string(c.asset), "amount": c.back, "direction": "to_payments"})
			r.wait(t, tb.ID, "COMPLETED")
			if got := r.trading(c.asset); got != c.leftUnits {
				t.Fatalf("trading %s after the way back %d, want %d", c.asset, got, c.leftUnits)
			}
			left, _ = left.Add(back)
			if got := r.available(t, c.asset); got != left {
				t.Fatalf("payments %s after the way back %s, want %s", c.asset, got, left)
			}

			// More than the trading balance: FAILED, nothing moves.
			tf := r.transfer(t, map[string]any{"asset": string(c.asset), "amount": c.tooBig, "direction": "to_payments"})
			failed := r.wait(t, tf.ID, "FAILED")
			if failed.FailureReason == nil || !strings.HasPrefix(*failed.FailureReason, "INSUFFICIENT_BALANCE") ||
				r.trading(c.asset) != c.leftUnits || r.available(t, c.asset) != left {
				t.Fatalf("%+v", failed)
			}
			// More than the payments balance: 422 at once, nothing moves.
			res := r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", r.m.SandboxKey,
				map[string]any{"asset": string(c.asset), "amount": money.New(c.asset, left.Minor+1).String()})
			if res.Status != 422 || res.Message != "INSUFFICIENT_BALANCE" || r.available(t, c.asset) != left {
				t.Fatalf("%s", res)
			}

			// The job runs again (a crash before it was acknowledged): the engine answers
			// AlreadyApplied and the ledger's references replay, so nothing moves twice.
			if _, err := r.pool.Exec(context.Background(), `update merchant_balance_transfers set status = 'PENDING' where id = $1`, tr.ID); err != nil {
				t.Fatal(err)
			}
			if err := r.svc.Process(context.Background(), uuid.MustParse(tr.ID)); err != nil {
				t.Fatal(err)
			}
			if r.trading(c.asset) != c.leftUnits || r.available(t, c.asset) != left {
				t.Fatalf("replayed job moved money: trading %d payments %s", r.trading(c.asset), r.available(t, c.asset))
			}
			r.wait(t, tr.ID, "COMPLETED")
		})
	}
	t.Run("idempotent with a key", func(t *testing.T) {
		h := []string{"X-Idempotency-Key", "ngn-move-1"}
		body := map[string]any{"asset": "NGN", "amount": "1.00"}
		one := r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", r.m.SandboxKey, body, h...)
		two := r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", r.m.SandboxKey, body, h...)
		if string(one.Data) != string(two.Data) || two.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("%s / %s", one.Data, two.Data)
		}
		var tr transferJSON
		_ = json.Unmarshal(one.Data, &tr)
		r.wait(t, tr.ID, "COMPLETED")
		if got := r.trading(money.NGN); got != 12_345_500+10_000 {
			t.Fatalf("trading NGN %d", got)
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"asset": "EUR", "amount": "1"}, "asset"},
			{map[string]any{"amount": "1"}, "asset"},
			{map[string]any{"asset": "NGN"}, "amount"},
			{map[string]any{"asset": "NGN", "amount": "1.001"}, "amount"},
			{map[string]any{"asset": "USD", "amount": "0"}, "amount"},
			{map[string]any{"asset": "USDC", "amount": "-1"}, "amount"},
			{map[string]any{"asset": "USDT", "amount": "1", "amount_usd": "1"}, "amount_usd"},
			{map[string]any{}, "amount_usd"},
		} {
			res := r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", r.m.SandboxKey, tc.body)
			if res.Status != 400 || !strings.Contains(strings.Join(res.Fields(), ","), tc.field) {
				t.Fatalf("%v: %s", tc.body, res)
			}
		}
	})
	t.Run("the balance lists the other assets", func(t *testing.T) {
		var b struct {
			Currency string                                    `json:"currency"`
			Others   []struct{ Asset, Purpose, Amount string } `json:"other_assets"`
		}
		r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance", r.m.SandboxKey, nil).Decode(t, &b)
		seen := map[string]bool{}
		for _, o := range b.Others {
			if o.Purpose == "available" {
				seen[o.Asset] = true
			}
		}
		if b.Currency != "USDT" || !seen["NGN"] || !seen["USDC"] || !seen["USD"] {
			t.Fatalf("%+v", b)
		}
	})
	verify(t, r.pool)
}
