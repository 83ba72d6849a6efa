package trading_test

import (
	"testing"
	"time"

	"svc/gateway/api"
)

func TestAmendOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, other := e.a.SandboxKey, e.b.SandboxKey
	e.fund(t, key, "NGN", "1000000")
	e.fund(t, other, "USDT", "100")
	bid := e.place(t, key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "10", "price": "1500", "client_order_id": "amend-1"})
	if b := e.balances(t, key)["NGN"]; b.Locked != "15000.00" {
		t.Fatalf("locked %+v", b)
	}
	// reduce: same price, smaller quantity; the lock follows
	var o order
	e.srv.Must(t, 200, "PATCH", "/v1/trading/orders/"+bid.ID, key, map[string]any{"quantity": "6"}).Decode(t, &o)
	if o.Quantity != "6.00" || *o.Price != "1500.00" || o.Status != "OPEN" {
		t.Fatalf("reduced: %+v", o)
	}
	if b := e.balances(t, key)["NGN"]; b.Locked != "9000.00" || b.Available != "991000.00" {
		t.Fatalf("after reduce: %+v", b)
	}
	// by client order id: a new price that crosses a resting ask trades at once
	e.place(t, other, map[string]any{"symbol": "USDT-NGN", "side": "sell", "type": "limit", "quantity": "2", "price": "1510"})
	e.srv.Must(t, 200, "PATCH", "/v1/trading/orders/by-client-id/amend-1", key, map[string]any{"price": "1520"}).Decode(t, &o)
	if o.Status != "PARTIALLY_FILLED" || o.FilledQuantity != "2.00" || *o.Price != "1520.00" || o.Quantity != "6.00" {
		t.Fatalf("crossed: %+v", o)
	}
	// 4 open at 1520 locked; 2 bought at 1510
	if b := e.balances(t, key)["NGN"]; b.Locked != "6080.00" || b.Available != "990900.00" {
		t.Fatalf("after cross: %+v", b)
	}
	// the history (projection) and the private GET agree
	var got order
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+bid.ID, key, nil).Decode(t, &got)
	if got.Quantity != "6.00" || *got.Price != "1520.00" {
		t.Fatalf("GET: %+v", got)
	}
	// validation, and nothing changes
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "quantity"},
		{map[string]any{"quantity": "1.001"}, "quantity"},
		{map[string]any{"price": "-5"}, "price"},
	} {
		r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+bid.ID, key, tc.body)
		if r.Status != 400 || r.Message != api.CodeValidation || r.Fields()[0] != tc.field {
			t.Fatalf("%v: %s", tc.body, r)
		}
	}
	if r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+bid.ID, key, map[string]any{"quantity": "10000"}); r.Status != 422 || r.Message != api.CodeInsufficientBalance {
		t.Fatalf("too large: %s", r)
	}
	// another merchant's order is 404; a sandbox key never sees the live engine
	if r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+bid.ID, other, map[string]any{"quantity": "3"}); r.Status != 404 {
		t.Fatalf("someone else's order: %s", r)
	}
	if r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+bid.ID, e.a.LiveKey, map[string]any{"quantity": "3"}); r.Status != 404 {
		t.Fatalf("live key on a sandbox order: %s", r)
	}
	// at or below the filled quantity: the rest is cancelled and released
	e.srv.Must(t, 200, "PATCH", "/v1/trading/orders/"+bid.ID, key, map[string]any{"quantity": "2"}).Decode(t, &o)
	if o.Status != "CANCELLED" || o.FilledQuantity != "2.00" {
		t.Fatalf("amend to filled: %+v", o)
	}
	if b := e.balances(t, key)["NGN"]; b.Locked != "0.00" {
		t.Fatalf("after cancel: %+v", b)
	}
	if r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+bid.ID, key, map[string]any{"quantity": "3"}); r.Status != 422 || r.Message != api.CodeInvalidState {
		t.Fatalf("amend of a cancelled order: %s", r)
	}
}

func TestCountdownCancelAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.a.SandboxKey
	e.fund(t, key, "NGN", "1000000")
	bid := e.place(t, key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1500"})
	for _, body := range []any{map[string]any{"symbol": "USDT-NGN"}, map[string]any{"symbol": "X", "countdown_ms": 5000},
		map[string]any{"symbol": "USDT-NGN", "countdown_ms": 10}} {
		if r := e.srv.Do(t, "POST", "/v1/trading/orders/countdown-cancel-all", key, body); r.Status != 400 {
			t.Fatalf("%v: %s", body, r)
		}
	}
	var cd struct {
		Symbol      string  `json:"symbol"`
		CountdownMS int64   `json:"countdown_ms"`
		CancelAt    *string `json:"cancel_at"`
	}
	e.srv.Must(t, 200, "POST", "/v1/trading/orders/countdown-cancel-all", key, map[string]any{"symbol": "USDT-NGN", "countdown_ms": 1000}).Decode(t, &cd)
	if cd.CountdownMS != 1000 || cd.CancelAt == nil {
		t.Fatalf("armed: %+v", cd)
	}
	// the engine's clock ticks; nothing fires before the deadline
	e.tick()
	var o order
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+bid.ID, key, nil).Decode(t, &o)
	if o.Status != "OPEN" {
		t.Fatalf("fired early: %+v", o)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(100 * time.Millisecond)
		e.tick()
		e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+bid.ID, key, nil).Decode(t, &o)
		if o.Status == "CANCELLED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("countdown never fired: %+v", o)
		}
	}
	if o.CancelReason == nil || *o.CancelReason != "COUNTDOWN" {
		t.Fatalf("reason %+v", o.CancelReason)
	}
	// turned off: a new order survives the ticks
	e.srv.Must(t, 200, "POST", "/v1/trading/orders/countdown-cancel-all", key, map[string]any{"symbol": "USDT-NGN", "countdown_ms": 1000})
	e.srv.Must(t, 200, "POST", "/v1/trading/orders/countdown-cancel-all", key, map[string]any{"symbol": "USDT-NGN", "countdown_ms": 0}).Decode(t, &cd)
	if cd.CancelAt != nil {
		t.Fatalf("off: %+v", cd)
	}
	bid = e.place(t, key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1500"})
	time.Sleep(1100 * time.Millisecond)
	e.tick()
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+bid.ID, key, nil).Decode(t, &o)
	if o.Status != "OPEN" {
		t.Fatalf("a countdown turned off fired: %+v", o)
	}
}
