package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	"svc/gateway/ws"
)

// TestCountdownSurvivesSIGKILL: a countdown-cancel-all armed just before svcd is killed
// (SIGKILL: no shutdown, no final snapshot) is in the journal; the restarted svcd's
// engine recovers it and its clock fires it, cancelling the orders with reason
// COUNTDOWN. Another merchant's order on the symbol stays. Then order entry on the
// restarted svcd's WebSocket (issue 28).
func TestCountdownSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs svcd")
	}
	p, pool := fileJournalSvcd(t, "--snapshot-every", "250ms")
	trader, other := authtest.New(t, pool).SandboxKey, authtest.New(t, pool).SandboxKey
	p.start()
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(key, method, path string, body any) (int, map[string]any) {
		t.Helper()
		st, _, data, err := p.call(client, key, method, path, body)
		if err != nil && st == 0 {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return st, data
	}
	place := func(key string) string {
		t.Helper()
		if st, _ := do(key, "POST", "/v1/trading/sandbox/fund", map[string]string{"asset": "NGN", "amount": "100000"}); st != 201 {
			t.Fatalf("fund: %d", st)
		}
		st, o := do(key, "POST", "/v1/trading/orders", map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1400"})
		if st != 201 {
			t.Fatalf("place: %d", st)
		}
		return o["id"].(string)
	}
	mine, theirs := place(trader), place(other)
	if st, cd := do(trader, "POST", "/v1/trading/orders/countdown-cancel-all", map[string]any{"symbol": "USDT-NGN", "countdown_ms": 3000}); st != 200 || cd["cancel_at"] == nil {
		t.Fatalf("countdown: %d %v", st, cd)
	}
	armed := time.Now()
	p.kill()
	p.start()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, o := do(trader, "GET", "/v1/trading/orders/"+mine, nil)
		if st == 200 && o["status"] == "CANCELLED" {
			if o["cancel_reason"] != "COUNTDOWN" {
				t.Fatalf("cancelled with %v", o["cancel_reason"])
			}
			if since := time.Since(armed); since < 3*time.Second {
				t.Fatalf("fired %s after arming, before its 3 s", since)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the countdown armed before the kill never fired: %d %v", st, o)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st, o := do(other, "GET", "/v1/trading/orders/"+theirs, nil); st != 200 || o["status"] != "OPEN" {
		t.Fatalf("another merchant's order: %d %v", st, o)
	}

	// svcd wires order entry into its stream: an order placed and cancelled over the
	// WebSocket is REST's order.
	base, _ := p.current()
	c, err := ws.Dial("ws"+strings.TrimPrefix(base, "http")+"/v1/ws", trader)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answer := func(op string, params any) map[string]any {
		t.Helper()
		if err := c.Send(map[string]any{"op": op, "id": op, "params": params}); err != nil {
			t.Fatal(err)
		}
		_ = c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, raw, err := c.Conn().ReadMessage()
			if err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			if m["id"] == op {
				return m
			}
		}
	}
	placed := answer("order.place", map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1390"})
	data, _ := placed["data"].(map[string]any)
	if placed["status"] != float64(201) || data == nil {
		t.Fatalf("order.place on svcd: %v", placed)
	}
	if st, o := do(trader, "GET", "/v1/trading/orders/"+data["id"].(string), nil); st != 200 || o["status"] != "OPEN" {
		t.Fatalf("the stream's order over REST: %d %v", st, o)
	}
	if m := answer("order.cancel", map[string]any{"order_id": data["id"]}); m["status"] != float64(200) {
		t.Fatalf("order.cancel on svcd: %v", m)
	}
}
