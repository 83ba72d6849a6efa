package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth/authtest"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// hookSink is a merchant's webhook receiver: it records the event types delivered.
type hookSink struct {
	mu     sync.Mutex
	events []string
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Event string `json:"event"`
	}
	_ = json.NewDecoder(r.Body).Decode(&b)
	h.mu.Lock()
	h.events = append(h.events, b.Event)
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (h *hookSink) has(event string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.events, event)
}

// client calls svcd with an API key.
type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path, key string, body any) (int, json.RawMessage) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("X-Idempotency-Key", uuid.NewString())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &env)
	if env.Data == nil {
		env.Data = raw
	}
	return resp.StatusCode, env.Data
}

func (c client) must(want int, method, path, key string, body any, out any) {
	c.t.Helper()
	status, data := c.do(method, path, key, body)
	if status != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// eventually polls cond every 50 ms for up to 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveSvcd is svcd run in this process in live mode against a Paystack contract server
// (SVC_PAYSTACK_SECRET_KEY and the --paystack-* flags), with webhooks allowed to a local
// endpoint and retried quickly, on a database of its own.
type liveSvcd struct {
	pool *pgxpool.Pool
	ps   *paystacktest.Server
	base string
	out  *safeBuffer
	// hooks receives the merchant webhooks posted to hookURL (+ any path).
	hooks   *hookSink
	hookURL string
	stop    func() error // stops svcd and returns run's error; also run at the test's end
}

// startLiveSvcd starts it with Paystack's secret key secret and the webhook secret key
// webhookKey (hex), and returns once it answers /health.
func startLiveSvcd(t *testing.T, secret, webhookKey string) *liveSvcd {
	t.Helper()
	return startLiveSvcdWith(t, secret, webhookKey, nil, nil)
}

// startLiveSvcdWith is startLiveSvcd with extra flags and environment variables (the chain
// tests' custody configuration and keystore passphrase).
func startLiveSvcdWith(t *testing.T, secret, webhookKey string, extra []string, extraEnv map[string]string) *liveSvcd {
	t.Helper()
	pool, dbURL := pgtest.New(t)
	ps := paystacktest.New(secret)
	t.Cleanup(ps.Close)
	addr := freeAddr(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	out := &safeBuffer{}
	done := make(chan error, 1)
	env := map[string]string{"SVC_PAYSTACK_SECRET_KEY": ps.Secret}
	for k, v := range extraEnv {
		env[k] = v
	}
	go func() {
		done <- run(ctx, append([]string{"--addr", addr, "--database-url", dbURL, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--webhook-allow-insecure", "--webhook-retry-base", "100ms",
			"--webhook-secret-key", webhookKey,
			"--paystack-base-url", ps.URL, "--paystack-phone", "+2348000000000", "--paystack-email-domain", "dva.example.com",
		}, extra...), func(k string) string { return env[k] }, out, out)
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(60 * time.Second):
				runErr = errors.New("svcd did not stop within 60 s")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("run: %v", err)
		}
	})
	base := "http://" + addr
	eventually(t, "svcd answers /health", func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("svcd stopped: %v\n%s", err, out.String())
		default:
		}
		resp, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	hooks := &hookSink{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)
	return &liveSvcd{pool: pool, ps: ps, base: base, out: out, stop: stop, hooks: hooks, hookURL: hookSrv.URL}
}

// TestLiveThroughPaystack runs svcd in live mode against the Paystack contract server (real
// PostgreSQL, real HTTP both ways): a customer's NGN virtual account issued by Paystack, a
// bank transfer into it notified by Paystack (signed, confirmed with VerifyInbound) that
// becomes a settled deposit and the merchant's webhooks; an NGN transfer paid out through
// Paystack and settled by its transfer.success notification. Also: forged notifications are
// 401 and change nothing, repeats change nothing, and the sandbox simulation goes through the
// same partner path.
func TestLiveThroughPaystack(t *testing.T) {
	sv := startLiveSvcd(t, "sk_test_contract_0123456789", strings.Repeat("ab", 32))
	pool, ps, base, hooks := sv.pool, sv.ps, sv.base, sv.hooks
	ctx := context.Background()
	ps.AddAccount("058", "0123456789", "ADA LOVELACE")
	c := client{t: t, base: base}
	m := authtest.New(t, pool)

	// The merchant's live webhook endpoint.
	c.must(201, "POST", "/v1/webhooks/endpoints", m.LiveKey, map[string]any{"url": sv.hookURL + "/hooks"}, nil)

	// A customer verified at TIER_1 through Paystack customer identification (the API's
	// initiate with BVN and bank account, Paystack's customeridentification.success through
	// the partner route; the failure case and its details: TestLiveKYCThroughPaystack), then
	// a permanent NGN virtual account issued by Paystack.
	var cust struct {
		ID string `json:"id"`
	}
	c.must(201, "POST", "/v1/customers", m.LiveKey, map[string]any{"email": "ada@example.test", "first_name": "Ada", "last_name": "Lovelace"}, &cust)
	var kyc struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		KYCTier string `json:"kyc_tier"`
	}
	c.must(201, "POST", "/v1/customers/"+cust.ID+"/kyc/initiate", m.LiveKey, map[string]any{"bvn": "22222222222",
		"bank_account": map[string]any{"bank_code": "058", "account_number": "0123456789"}}, &kyc)
	ids := ps.Identifications()
	if len(ids) != 1 {
		t.Fatalf("Paystack holds identifications %+v", ids)
	}
	idn, err := ps.FinishIdentification(ids[0].CustomerCode, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if status, err := paystacktest.Deliver(ctx, http.DefaultClient, base+"/v1/partners/paystack/events", idn); err != nil || status != 200 {
		t.Fatalf("customeridentification.success: %d %v", status, err)
	}
	eventually(t, "the customer is verified at TIER_1", func() bool {
		c.must(200, "GET", "/v1/customers/"+cust.ID+"/verifications/"+kyc.ID, m.LiveKey, nil, &kyc)
		return kyc.Status == "VERIFIED" && kyc.KYCTier == "TIER_1"
	})
	var va struct {
		AccountNumber string `json:"accountNumber"`
		BankName      string `json:"bankName"`
	}
	c.must(201, "POST", "/v1/customers/"+cust.ID+"/ngn-virtual-account", m.LiveKey, map[string]any{}, &va)
	if ps.DedicatedAccounts() != 1 || len(va.AccountNumber) != 10 {
		t.Fatalf("virtual account %+v, Paystack holds %d", va, ps.DedicatedAccounts())
	}

	// 50,000.00 NGN arrives: Paystack's charge.success reaches the partner route.
	events := base + "/v1/partners/paystack/events"
	n, err := ps.Charge(va.AccountNumber, 5_000_000, paystacktest.Sender{Name: "ADA LOVELACE", Bank: "Guaranty Trust Bank", AccountNumber: "0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	forged := n
	forged.Signature = strings.Repeat("0", 128)
	if status, err := paystacktest.Deliver(ctx, http.DefaultClient, events, forged); err != nil || status != 401 {
		t.Fatalf("forged notification: %d %v", status, err)
	}
	unsigned := n
	unsigned.Signature = ""
	if status, _ := paystacktest.Deliver(ctx, http.DefaultClient, events, unsigned); status != 401 {
		t.Fatalf("unsigned notification: %d", status)
	}
	var stored int
	if err := pool.QueryRow(ctx, `select count(*) from partner_events where body = $1`, n.Body).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("refused notifications stored: %d %v", stored, err)
	}
	for range 2 { // Paystack delivers at least once
		if status, err := paystacktest.Deliver(ctx, http.DefaultClient, events, n); err != nil || status != 200 {
			t.Fatalf("notification: %d %v", status, err)
		}
	}
	type depositJSON struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Amount string `json:"amount"`
	}
	var deps []depositJSON
	eventually(t, "the deposit settles", func() bool {
		c.must(200, "GET", "/v1/payments/deposits", m.LiveKey, nil, &deps)
		return len(deps) > 0 && deps[0].Status == "SETTLED"
	})
	if len(deps) != 1 || deps[0].Amount != "50000.00" {
		t.Fatalf("deposits %+v (one, of 50000.00)", deps)
	}
	eventually(t, "deposit.settled reaches the merchant", func() bool {
		return hooks.has("deposit.received") && hooks.has("deposit.settled") && hooks.has("customer.balance.credited")
	})
	var status, provider string
	if err := pool.QueryRow(ctx, `select status, provider from partner_events where body = $1`, n.Body).Scan(&status, &provider); err != nil || status != "PROCESSED" || provider != "paystack" {
		t.Fatalf("stored notification %s %s %v", provider, status, err)
	}

	// A transfer the sending bank pulled back before we processed it: the notification is
	// signed, but Paystack's API no longer confirms the charge, so nothing is credited.
	n2, err := ps.Charge(va.AccountNumber, 100_000, paystacktest.Sender{Name: "MALLORY"})
	if err != nil {
		t.Fatal(err)
	}
	var charge struct {
		Data struct {
			Reference string `json:"reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(n2.Body, &charge); err != nil {
		t.Fatal(err)
	}
	if err := ps.Reverse(charge.Data.Reference); err != nil {
		t.Fatal(err)
	}
	if status, err := paystacktest.Deliver(ctx, http.DefaultClient, events, n2); err != nil || status != 200 {
		t.Fatalf("notification of a reversed charge: %d %v", status, err)
	}
	eventually(t, "the unconfirmed charge is rejected", func() bool {
		var st string
		_ = pool.QueryRow(ctx, `select status from partner_events where body = $1`, n2.Body).Scan(&st)
		return st == "REJECTED"
	})
	c.must(200, "GET", "/v1/payments/deposits", m.LiveKey, nil, &deps)
	if len(deps) != 1 {
		t.Fatalf("an unconfirmed charge was credited: %+v", deps)
	}

	// An NGN payout: a transfer from the merchant's USDT balance (funded here in the ledger).
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m.ID, Environment: "live", Reference: "test:fund", Kind: "test.fund",
			Description: "test funds", Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(m.ID, ledger.Available), money.New(money.USDT, 1_000_000_000))})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	c.must(201, "POST", "/v1/payments/transfers", m.LiveKey, map[string]any{"currency": "NGN", "amount": "15000.00", "reference": "pay-ada-1",
		"destination": map[string]any{"type": "BANK_ACCOUNT", "bank_account": map[string]any{"bank_code": "058", "account_number": "0123456789"}}}, &tr)
	ref, _ := paystack.EncodeReference("transfer:" + tr.ID)
	eventually(t, "Paystack holds the transfer", func() bool { _, ok := ps.Transfer(ref); return ok })
	done1, err := ps.Finish(ref, "success", "")
	if err != nil {
		t.Fatal(err)
	}
	if status, err := paystacktest.Deliver(ctx, http.DefaultClient, events, done1); err != nil || status != 200 {
		t.Fatalf("transfer.success: %d %v", status, err)
	}
	eventually(t, "the transfer settles", func() bool {
		c.must(200, "GET", "/v1/payments/transfers/"+tr.ID, m.LiveKey, nil, &tr)
		return tr.Status == "SETTLED"
	})
	eventually(t, "transfer.completed and payout.completed reach the merchant", func() bool {
		return hooks.has("transfer.completed") && hooks.has("payout.completed")
	})
	if got := len(ps.Transfers()); got != 1 {
		t.Fatalf("Paystack made %d transfers", got)
	}

	// The sandbox simulation posts the sandbox bank's notification through the same path.
	var on struct {
		ID string `json:"id"`
	}
	c.must(201, "POST", "/v1/payments/onramps", m.SandboxKey, map[string]any{"type": "TEMPORARY", "amount": "20000"}, &on)
	var sd depositJSON
	c.must(201, "POST", "/v1/payments/sandbox/deposits", m.SandboxKey, map[string]any{"onramp_id": on.ID}, &sd)
	var sandboxRows int
	if err := pool.QueryRow(ctx, `select count(*) from partner_events where provider = 'sandbox-bank' and deposit_id = $1`, sd.ID).Scan(&sandboxRows); err != nil || sandboxRows != 1 {
		t.Fatalf("sandbox simulation: %d partner events for deposit %s (%v)", sandboxRows, sd.ID, err)
	}
	c.must(422, "POST", "/v1/payments/sandbox/deposits", m.SandboxKey, map[string]any{"onramp_id": on.ID}, nil) // paid: INACTIVE

	if err := sv.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	_ = fmt.Sprint()
}
