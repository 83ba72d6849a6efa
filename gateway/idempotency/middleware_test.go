package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	o "svc/gateway/openapi"
	"svc/payments/idempotency"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// holds is a test resource: POST /v1/test/holds moves an amount of USDT from the merchant's
// available balance to pending (as a withdrawal would), through idempotency.InTx.
type holds struct {
	pool    *pgxpool.Pool
	keys    *idempotency.Keys
	gate    chan struct{} // when set, the handler waits on it after its write
	crashes atomic.Int32  // the handler panics after its write this many times
	fail5xx atomic.Int32  // the handler answers 500 after its write this many times
	calls   atomic.Int32
}

func (h *holds) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/test/holds", protect(gwidem.Middleware(h.keys)(h.create)))
	r.POST("/v1/test/transfers", protect(gwidem.Middleware(h.keys, gwidem.AlsoIdempotencyKey())(h.create)))
}

func (h *holds) Docs() []o.Op {
	return []o.Op{{Method: "POST", Path: "/v1/test/holds", Summary: "test"}, {Method: "POST", Path: "/v1/test/transfers", Summary: "test"}}
}

func (h *holds) create(ctx *fasthttp.RequestCtx) {
	h.calls.Add(1)
	p, _ := api.PrincipalOf(ctx)
	var body struct {
		Amount string `json:"amount"`
	}
	if err := api.Decode(ctx, &body); err != nil {
		api.Fail(ctx, err)
		return
	}
	amt, err := money.ParsePositive(money.USDT, body.Amount)
	if err != nil {
		api.Fail(ctx, money.AsField(err, "amount"))
		return
	}
	var posted ledger.Posted
	err = idempotency.InTx(api.Ctx(ctx), h.pool, func(tx pgx.Tx) error {
		var err error
		posted, err = ledger.Post(api.Ctx(ctx), tx, ledger.Transaction{
			MerchantID: p.MerchantID, Environment: string(p.Environment),
			Reference: "hold:" + uuid.NewString(),
			Postings:  ledger.Move(ledger.Merchant(p.MerchantID, ledger.Available), ledger.Merchant(p.MerchantID, ledger.Pending), amt),
		})
		return err
	})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	if h.gate != nil {
		<-h.gate
	}
	if h.crashes.Add(-1) >= 0 {
		panic("simulated crash between the debit and the response")
	}
	if h.fail5xx.Add(-1) >= 0 {
		api.Fail(ctx, errors.New("simulated failure after the debit"))
		return
	}
	b, _ := posted.Find(ledger.Merchant(p.MerchantID, ledger.Available), money.USDT)
	api.Created(ctx, map[string]any{"transaction_id": posted.ID, "available": b.Amount})
}

type env struct {
	srv   *gatewaytest.Server
	h     *holds
	pool  *pgxpool.Pool
	m     authtest.Merchant
	clock *time.Time
}

func setup(t *testing.T) *env {
	pool, _ := pgtest.New(t)
	now := time.Now()
	e := &env{pool: pool, clock: &now}
	e.h = &holds{pool: pool, keys: idempotency.New(pool, idempotency.Config{Now: func() time.Time { return *e.clock }})}
	e.srv = gatewaytest.New(t, pool, e.h)
	e.m = authtest.New(t, pool)
	for _, environment := range []string{"sandbox", "live"} {
		fund(t, pool, e.m, environment, "100")
	}
	return e
}

func fund(t *testing.T, pool *pgxpool.Pool, m authtest.Merchant, environment, amount string) {
	err := postgres.InTx(context.Background(), pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(context.Background(), tx, ledger.Transaction{MerchantID: m.ID, Environment: environment,
			Reference: "fund:" + uuid.NewString(),
			Postings:  ledger.Move(ledger.System(ledger.External), ledger.Merchant(m.ID, ledger.Available), money.MustParse(money.USDT, amount))})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) available(t *testing.T, environment string) string {
	b, err := ledger.GetBalance(context.Background(), e.pool, e.m.ID, environment, ledger.Merchant(e.m.ID, ledger.Available), money.USDT)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount.String()
}

func TestReplayReturnsTheStoredResponse(t *testing.T) {
	e := setup(t)
	first := e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "10"}, "X-Idempotency-Key", "k-1")
	if first.Header[gwidem.HeaderReplayed] != "" {
		t.Fatal("first response marked as replayed")
	}
	again := e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "10"}, "X-Idempotency-Key", "k-1")
	if again.Header[gwidem.HeaderReplayed] != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("replay = %v %s, want %s", again.Header, again.Body, first.Body)
	}
	if got := e.available(t, "sandbox"); got != "90.000000" {
		t.Fatalf("available = %s after one hold and a replay", got)
	}
	// Different body, same key: 422; different path, same key: 422.
	r := e.srv.Must(t, 422, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "11"}, "X-Idempotency-Key", "k-1")
	if r.Message != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatal(r)
	}
	if r := e.srv.Must(t, 422, "POST", "/v1/test/transfers", e.m.SandboxKey, map[string]string{"amount": "10"}, "X-Idempotency-Key", "k-1"); r.Message != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatal(r)
	}
	// The same key in the live environment, or for another merchant, is another key.
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.LiveKey, map[string]string{"amount": "10"}, "X-Idempotency-Key", "k-1")
	other := authtest.New(t, e.pool)
	fund(t, e.pool, other, "sandbox", "5")
	e.srv.Must(t, 201, "POST", "/v1/test/holds", other.SandboxKey, map[string]string{"amount": "5"}, "X-Idempotency-Key", "k-1")
	if e.available(t, "live") != "90.000000" || e.available(t, "sandbox") != "90.000000" {
		t.Fatal("balances moved by another environment or merchant")
	}
	// Without a key every request runs.
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"})
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"})
	if got := e.available(t, "sandbox"); got != "88.000000" {
		t.Fatalf("available = %s", got)
	}
}

func TestBusinessErrorsAreStoredServerErrorsAreNot(t *testing.T) {
	e := setup(t)
	// A 422 is a result: replayed as is, even after the balance would cover it.
	r := e.srv.Must(t, 422, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1000"}, "X-Idempotency-Key", "big")
	if r.Message != "INSUFFICIENT_BALANCE" {
		t.Fatal(r)
	}
	fund(t, e.pool, e.m, "sandbox", "1000")
	r = e.srv.Must(t, 422, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1000"}, "X-Idempotency-Key", "big")
	if r.Header[gwidem.HeaderReplayed] != "true" {
		t.Fatal("422 not replayed")
	}
	// A 500 after the debit rolls the debit back and stores nothing: the retry runs.
	e.h.fail5xx.Store(1)
	e.srv.Must(t, 500, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "7"}, "X-Idempotency-Key", "flaky")
	if got := e.available(t, "sandbox"); got != "1100.000000" {
		t.Fatalf("a failed request left its debit: %s", got)
	}
	r = e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "7"}, "X-Idempotency-Key", "flaky")
	if r.Header[gwidem.HeaderReplayed] != "" {
		t.Fatal("a 500 was stored")
	}
	if got := e.available(t, "sandbox"); got != "1093.000000" {
		t.Fatalf("available = %s", got)
	}
}

// A crash between the debit and the response (here a panic: the process dies before the
// commit) leaves neither the debit nor the key; the retry does it exactly once, and any later
// retry replays it.
func TestCrashBetweenDebitAndResponse(t *testing.T) {
	e := setup(t)
	e.h.crashes.Store(1)
	r := e.srv.Do(t, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "25"}, "X-Idempotency-Key", "crash")
	if r.Status != 500 {
		t.Fatalf("crashed request answered %s", r)
	}
	if got := e.available(t, "sandbox"); got != "100.000000" {
		t.Fatalf("debit survived the crash: %s", got)
	}
	first := e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "25"}, "X-Idempotency-Key", "crash")
	again := e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "25"}, "X-Idempotency-Key", "crash")
	if string(first.Body) != string(again.Body) || e.available(t, "sandbox") != "75.000000" {
		t.Fatalf("after crash and two retries: %s / %s, available %s", first.Body, again.Body, e.available(t, "sandbox"))
	}
	var keys int
	_ = e.pool.QueryRow(context.Background(), `select count(*) from idempotency_keys`).Scan(&keys)
	if keys != 1 {
		t.Fatalf("%d keys stored", keys)
	}
}

func TestConcurrentSameKeyIsInUse(t *testing.T) {
	e := setup(t)
	e.h.gate = make(chan struct{})
	done := make(chan gatewaytest.Response)
	go func() {
		done <- e.srv.Do(t, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "3"}, "X-Idempotency-Key", "slow")
	}()
	for e.h.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	r := e.srv.Must(t, 409, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "3"}, "X-Idempotency-Key", "slow")
	if r.Message != "IDEMPOTENCY_KEY_IN_USE" {
		t.Fatal(r)
	}
	close(e.h.gate)
	if first := <-done; first.Status != 201 {
		t.Fatal(first)
	}
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "3"}, "X-Idempotency-Key", "slow")
	if got := e.available(t, "sandbox"); got != "97.000000" {
		t.Fatalf("available = %s", got)
	}
}

func TestFiftyParallelRequestsOneEffect(t *testing.T) {
	e := setup(t)
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	bodies := make([]string, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.srv.Do(t, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "2"}, "X-Idempotency-Key", "fifty")
			statuses[i] = r.Status
			if r.Status == 201 {
				bodies[i] = string(r.Data)
			}
		}()
	}
	wg.Wait()
	created, inUse := 0, 0
	var body string
	for i, s := range statuses {
		switch s {
		case 201:
			created++
			if body != "" && bodies[i] != body {
				t.Fatalf("two different 201 bodies: %s / %s", body, bodies[i])
			}
			body = bodies[i]
		case 409:
			inUse++
		default:
			t.Fatalf("status %d", s)
		}
	}
	t.Logf("%d created or replayed, %d in use", created, inUse)
	if created == 0 {
		t.Fatal("no request succeeded")
	}
	if got := e.available(t, "sandbox"); got != "98.000000" {
		t.Fatalf("available = %s: more than one effect", got)
	}
	var tx struct {
		TransactionID string `json:"transaction_id"`
	}
	_ = json.Unmarshal([]byte(body), &tx)
	if tx.TransactionID == "" {
		t.Fatal(body)
	}
}

func TestAlternativeHeaderAndKeyFormatAndExpiry(t *testing.T) {
	e := setup(t)
	// Idempotency-Key counts only where enabled.
	e.srv.Must(t, 201, "POST", "/v1/test/transfers", e.m.SandboxKey, map[string]string{"amount": "1"}, "Idempotency-Key", "alt")
	r := e.srv.Must(t, 201, "POST", "/v1/test/transfers", e.m.SandboxKey, map[string]string{"amount": "1"}, "Idempotency-Key", "alt")
	if r.Header[gwidem.HeaderReplayed] != "true" {
		t.Fatal("Idempotency-Key not honoured on the transfer route")
	}
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"}, "Idempotency-Key", "alt2")
	r = e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"}, "Idempotency-Key", "alt2")
	if r.Header[gwidem.HeaderReplayed] != "" {
		t.Fatal("Idempotency-Key honoured where it is not enabled")
	}
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'a'
	}
	r = e.srv.Must(t, http.StatusBadRequest, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"}, "X-Idempotency-Key", string(long))
	if len(r.Errors) != 1 || r.Errors[0].Field != "X-Idempotency-Key" {
		t.Fatal(r)
	}
	// After 24 hours the key is forgotten: the same key may carry a new request.
	e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "1"}, "X-Idempotency-Key", "day")
	*e.clock = e.clock.Add(24*time.Hour + time.Second)
	r = e.srv.Must(t, 201, "POST", "/v1/test/holds", e.m.SandboxKey, map[string]string{"amount": "2"}, "X-Idempotency-Key", "day")
	if r.Header[gwidem.HeaderReplayed] != "" {
		t.Fatal("expired key replayed")
	}
	*e.clock = e.clock.Add(48 * time.Hour)
	n, err := e.h.keys.Purge(context.Background())
	if err != nil || n == 0 {
		t.Fatalf("purge = %d, %v", n, err)
	}
}
