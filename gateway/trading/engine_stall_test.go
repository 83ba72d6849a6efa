package trading_test

import (
	"strings"
	"testing"
	"time"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/trading"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

// With the engine's journal stalled, a place and a cancel-all answer 503
// SERVICE_UNAVAILABLE with Retry-After before the request's deadline instead of hanging
// until the client gives up; once the journal answers again the service does too, the
// held commands took effect, and retrying the place with its client_order_id replays the
// order instead of placing a second one.
func TestEngineStallAnswers503(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	eng, g := journaltest.StartEngine(t, nil)
	h := trading.New(map[api.Environment]trading.Exchange{api.Sandbox: eng}, nil, nil)
	cfg := gateway.DefaultConfig()
	cfg.RequestTimeout = 1500 * time.Millisecond
	srv := gatewaytest.NewWithConfig(t, pool, cfg, h)
	key := authtest.New(t, pool).SandboxKey
	srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "NGN", "amount": "1000000"})
	srv.Must(t, 201, "POST", "/v1/trading/orders", key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1400"})

	g.Hold()
	held := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1401", "client_order_id": "held-1"}
	for _, c := range []struct {
		method, path string
		body         any
		says         string
	}{
		{"POST", "/v1/trading/orders", held, "client_order_id"},
		{"DELETE", "/v1/trading/orders?symbol=USDT-NGN", nil, "cancel"},
	} {
		start := time.Now()
		r := srv.Do(t, c.method, c.path, key, c.body)
		took := time.Since(start)
		if r.Status != 503 || r.Message != api.CodeServiceUnavailable || r.Header["Retry-After"] == "" || !strings.Contains(r.Detail, c.says) {
			t.Fatalf("%s %s with the journal stalled: %s (Retry-After %q)", c.method, c.path, r, r.Header["Retry-After"])
		}
		// The handler gives up a tenth of the deadline early; the slack is for the test
		// client's round trip on a loaded machine under -race. Before, this hung.
		if took > cfg.RequestTimeout+250*time.Millisecond {
			t.Fatalf("%s %s answered after %s, past the %s deadline", c.method, c.path, took, cfg.RequestTimeout)
		}
	}

	g.Release()
	// The held place and cancel-all complete now; the service answers again by itself.
	var all struct {
		Cancelled int `json:"cancelled"`
	}
	srv.Must(t, 200, "DELETE", "/v1/trading/orders?symbol=USDT-NGN", key, nil).Decode(t, &all)
	if all.Cancelled != 0 { // the held cancel-all already cancelled both orders
		t.Fatalf("a second cancel-all cancelled %d orders", all.Cancelled)
	}
	r := srv.Do(t, "POST", "/v1/trading/orders", key, held)
	if r.Status != 200 || r.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("retrying the held place: %s (replayed %q), want the held order replayed", r, r.Header["Idempotent-Replayed"])
	}
	var o struct {
		Status string `json:"status"`
	}
	srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/held-1", key, nil).Decode(t, &o)
	if o.Status != "CANCELLED" {
		t.Fatalf("the held order is %s after the held cancel-all", o.Status)
	}
}
