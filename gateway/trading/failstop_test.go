package trading_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"svc/gateway/api"
)

// After the journal fails the engine fail-stops: its memory may hold effects a restart
// removes, so every trading route that would read or change it answers 503
// ENGINE_UNAVAILABLE with Retry-After, while the other environment's engine serves on.
func TestFailStoppedEngineAnswers503(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.a.SandboxKey
	e.fund(t, key, "NGN", "1000000")
	o := e.place(t, key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "price": "1500", "quantity": "10"})

	e.journals[api.Sandbox].Fail(errors.New("disk gone"))
	// the next command's batch fails to journal and fail-stops the engine
	r := e.srv.Do(t, "POST", "/v1/trading/orders", key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "price": "1500", "quantity": "1"})
	if r.Status != 503 {
		t.Fatalf("placement while the journal fails: %s", r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.engines[api.Sandbox].Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("engine did not fail-stop")
		}
		time.Sleep(10 * time.Millisecond)
	}

	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/trading/orders"},
		{"GET", "/v1/trading/orders/" + o.ID},
		{"GET", "/v1/trading/orders?symbol=USDT-NGN&status=open"},
		{"GET", "/v1/trading/balances"},
		{"DELETE", "/v1/trading/orders/" + o.ID},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "price": "1500", "quantity": "1"}
		}
		r := e.srv.Do(t, c.method, c.path, key, body)
		if r.Status != 503 || !strings.Contains(string(r.Body), "ENGINE_UNAVAILABLE") || r.Header["Retry-After"] == "" {
			t.Errorf("%s %s after fail-stop: %s (Retry-After %q)", c.method, c.path, r, r.Header["Retry-After"])
		}
	}
	// the live engine has its own journal and keeps serving
	e.srv.Must(t, 200, "GET", "/v1/trading/balances", e.a.LiveKey, nil)
}
