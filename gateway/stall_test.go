package gateway_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	gwproducts "svc/gateway/products"
	"svc/gateway/trading"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/products"
	"svc/payments/providers"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

// A stalled PostgreSQL (a proxy in front of the test database stops forwarding, as a
// SIGSTOPped server looks to its clients) makes every endpoint that needs it answer 503 with
// a code and Retry-After within the request deadline: no hang, no 500. After the database
// returns, service resumes by itself and the goroutines started for the stalled requests are
// gone.
func TestStalledDatabaseAnswers503AndRecovers(t *testing.T) {
	direct, dbURL := pgtest.New(t)
	m := authtest.New(t, direct)
	proxy, proxied := pgtest.NewProxy(t, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, proxied, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(client)
	envs := providers.Default(providers.SandboxConfig{BankCode: "999", BankName: "Svc Sandbox Bank"})
	idem := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
	const deadline = 2 * time.Second
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	cfg.RequestTimeout = deadline
	// The exchange: a sandbox engine with its journal and the projection into PostgreSQL.
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	proj := projection.New(pool, string(api.Sandbox), j, nil)
	el := eventlog.New(j, func([]engine.Event, uint64) { proj.Wake() })
	eng, err := engine.New(engine.Config{Journal: el})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(context.Background())
	projDone := make(chan struct{})
	go func() { defer close(projDone); _ = proj.Run(pctx) }()
	t.Cleanup(func() { pcancel(); <-projDone; eng.Stop() })
	exchanges := map[api.Environment]trading.Exchange{api.Sandbox: eng}
	projections := trading.Projections{Store: projection.NewStore(pool), Projectors: map[api.Environment]*projection.Projector{api.Sandbox: proj}}

	routes := func() []gateway.RouteSet {
		return []gateway.RouteSet{gwcustomers.New(customers.NewService(pool, rec, envs, nil), idem),
			gwproducts.New(products.NewService(pool, nil)), trading.New(exchanges, projections, nil)}
	}
	// all: everything behind the stalled proxy, authentication included; handlers:
	// authentication on the direct pool, so the handlers' own database work is what stalls.
	all := gatewaytest.NewWithConfig(t, pool, cfg, routes()...)
	handlers := gatewaytest.NewWithConfig(t, direct, cfg, routes()...)

	type call struct {
		name, method, path string
		body               any
		headers            []string
		ok                 int
		srv                *gatewaytest.Server
	}
	n := 0
	calls := func() []call {
		var out []call
		for _, srv := range []*gatewaytest.Server{all, handlers} {
			n++
			who := "auth stalled too"
			if srv == handlers {
				who = "handler"
			}
			out = append(out,
				call{"list customers, " + who, "GET", "/v1/customers", nil, nil, 200, srv},
				call{"create customer (idempotent), " + who, "POST", "/v1/customers",
					map[string]any{"email": fmt.Sprintf("c%d@example.test", n), "first_name": "Ada", "last_name": "Lovelace"},
					[]string{"X-Idempotency-Key", fmt.Sprintf("stall-%d", n)}, 201, srv},
				call{"list products, " + who, "GET", "/v1/products", nil, nil, 200, srv},
			)
		}
		return append(out, call{"merchant profile (auth route)", "GET", "/v1/auth/me", nil, nil, 200, all})
	}
	run := func(t *testing.T, cs []call, check func(t *testing.T, c call, r gatewaytest.Response, took time.Duration)) {
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				r := c.srv.Do(t, c.method, c.path, m.SandboxKey, c.body, c.headers...)
				check(t, c, r, time.Since(start))
			}()
		}
		wg.Wait()
	}
	healthy := func(t *testing.T, c call, r gatewaytest.Response, _ time.Duration) {
		if r.Status != c.ok {
			t.Errorf("%s: %s, want %d", c.name, r, c.ok)
		}
	}

	run(t, calls(), healthy)
	time.Sleep(200 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	all.Must(t, 201, "POST", "/v1/trading/sandbox/fund", m.SandboxKey, map[string]string{"asset": "NGN", "amount": "10000000"})
	time.Sleep(200 * time.Millisecond)
	baseline = runtime.NumGoroutine()

	proxy.Pause()
	// Order placement needs only the engine and its journal: it keeps working.
	order := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1500"}
	start := time.Now()
	if r := all.Do(t, "POST", "/v1/trading/orders", m.SandboxKey, order); r.Status != 201 {
		t.Errorf("placing an order while the database is stalled: %s", r)
	} else if took := time.Since(start); took > deadline {
		t.Errorf("placing an order while the database is stalled took %v", took)
	}
	// A create that failed with 503 under an idempotency key can be retried with that key.
	retry := map[string]any{"email": "retry@example.test", "first_name": "Re", "last_name": "Try"}
	if r := handlers.Do(t, "POST", "/v1/customers", m.SandboxKey, retry, "X-Idempotency-Key", "retry-me"); r.Status != 503 {
		t.Errorf("idempotent create while stalled: %s", r)
	}
	for round := 0; round < 2; round++ { // the second round finds the pool's connections busy or broken
		run(t, calls(), func(t *testing.T, c call, r gatewaytest.Response, took time.Duration) {
			if r.Status != 503 || (r.Message != api.CodeDatabaseUnavailable && r.Message != api.CodeServiceUnavailable) {
				t.Errorf("%s while the database is stalled: %s, want 503 DATABASE_UNAVAILABLE or SERVICE_UNAVAILABLE", c.name, r)
			}
			if r.Header["Retry-After"] == "" {
				t.Errorf("%s: 503 without Retry-After", c.name)
			}
			t.Logf("%s: %d %s in %v", c.name, r.Status, r.Message, took)
			// An upper bound generous for a loaded machine: the point is "not a hang".
			if took > deadline+3*time.Second {
				t.Errorf("%s answered after %v; the deadline is %v", c.name, took, deadline)
			}
		})
	}
	proxy.Resume()

	// Service resumes by itself.
	until := time.Now().Add(20 * time.Second)
	for {
		r := all.Do(t, "GET", "/v1/customers", m.SandboxKey, nil)
		if r.Status == 200 {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("no recovery after the database returned: %s", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	run(t, calls(), healthy)
	// The stalled create's transaction holds its key until pgx has closed that connection
	// (in the background, once the server answers again): until then a retry is told
	// 409 IDEMPOTENCY_KEY_IN_USE, as a client retrying a request still in flight would be.
	for inUse := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := handlers.Do(t, "POST", "/v1/customers", m.SandboxKey, retry, "X-Idempotency-Key", "retry-me")
		if r.Status == 409 && r.Message == api.CodeIdempotencyInUse && time.Now().Before(inUse) {
			continue
		}
		if r.Status != 201 {
			t.Errorf("retrying the stalled idempotent create after recovery: %s", r)
		}
		break
	}

	// The goroutines started for the stalled requests (pool acquires, connection cleanup)
	// are gone. pgx closes a connection cut off mid-query in the background (up to 15 s
	// when the server does not answer; at once now that it does).
	until = time.Now().Add(30 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= baseline+10 {
			break
		}
		if time.Now().After(until) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d after recovery, %d before the stall\n%s", g, baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(200 * time.Millisecond)
	}
}
