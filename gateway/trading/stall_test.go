package trading_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/trading"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

// With the projection's PostgreSQL stalled (a proxy that stops forwarding), placing
// orders keeps working, an order the engine holds is still read from memory, and a read
// that needs the projection answers 503 with a code and Retry-After before the request's
// deadline: never a 500 or a hang. Once PostgreSQL answers again the read succeeds.
func TestHistoryReadsWhenPostgresStalls(t *testing.T) {
	t.Parallel()
	pool, dbURL := pgtest.New(t)
	proxy, viaProxy := pgtest.NewProxy(t, dbURL)
	ctx, cancel := context.WithCancel(context.Background())
	history, err := postgres.Open(ctx, viaProxy, 4)
	if err != nil {
		t.Fatal(err)
	}
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	pr := projection.New(history, string(api.Sandbox), j, nil)
	el := eventlog.New(j, func([]engine.Event, uint64) { pr.Wake() })
	eng, err := engine.New(engine.Config{Journal: el})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = pr.Run(ctx) }()
	t.Cleanup(func() {
		proxy.Resume()
		cancel()
		wg.Wait()
		eng.Stop()
		history.Close()
	})
	h := trading.New(map[api.Environment]trading.Exchange{api.Sandbox: eng},
		trading.Projections{Store: projection.NewStore(history), Projectors: map[api.Environment]*projection.Projector{api.Sandbox: pr}}, nil)
	cfg := gateway.DefaultConfig()
	cfg.RequestTimeout = 1500 * time.Millisecond
	srv := gatewaytest.NewWithConfig(t, pool, cfg, h) // identity on the direct pool: only the history stalls
	key := authtest.New(t, pool).SandboxKey
	srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "NGN", "amount": "1000000"})
	body := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1400"}
	srv.Must(t, 201, "POST", "/v1/trading/orders", key, body)
	srv.Must(t, 200, "GET", "/v1/trading/orders?symbol=USDT-NGN", key, nil)

	proxy.Pause()
	var o order
	srv.Must(t, 201, "POST", "/v1/trading/orders", key, body).Decode(t, &o) // placement does not need PostgreSQL
	srv.Must(t, 200, "GET", "/v1/trading/orders/"+o.ID, key, nil)           // the engine holds it
	for _, path := range []string{"/v1/trading/orders?symbol=USDT-NGN", "/v1/trading/trades?symbol=USDT-NGN"} {
		start := time.Now()
		r := srv.Do(t, "GET", path, key, nil)
		took := time.Since(start)
		if r.Status != 503 || r.Message != api.CodeServiceUnavailable || r.Header["Retry-After"] == "" {
			t.Fatalf("GET %s with PostgreSQL stalled: %s (Retry-After %q)", path, r, r.Header["Retry-After"])
		}
		// The handler gives up a tenth of the deadline early; the slack is for the test
		// client's own round trip on a loaded machine under -race. Before, this waited 5 s.
		if took > cfg.RequestTimeout+250*time.Millisecond {
			t.Fatalf("GET %s answered after %s, past the %s deadline", path, took, cfg.RequestTimeout)
		}
	}

	proxy.Resume()
	var page struct {
		Items []order `json:"items"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := srv.Do(t, "GET", "/v1/trading/orders?symbol=USDT-NGN", key, nil)
		if r.Status == 200 {
			r.Decode(t, &page)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history did not come back after PostgreSQL resumed: %s", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(page.Items) != 2 || page.Items[0].ID != o.ID {
		t.Fatalf("after recovery the list holds %+v", page.Items)
	}
}
