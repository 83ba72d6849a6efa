package trading_test

import (
	"net/url"
	"strings"
	"testing"

	"svc/gateway/api"
)

// A trader whose POST timed out retries it: the same client_order_id (or
// X-Idempotency-Key) and the same order answer the existing order, never a second one.
func TestRetriesByClientOrderID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, other := e.a.SandboxKey, e.b.SandboxKey
	e.fund(t, key, "NGN", "10000000")
	e.fund(t, other, "NGN", "10000000")
	body := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "10", "price": "1400", "client_order_id": "bot-7"}

	first := e.place(t, key, body)
	if first.ClientOrderID == nil || *first.ClientOrderID != "bot-7" {
		t.Fatalf("placed: %+v", first)
	}
	t.Run("the same body again is the same order, 200 and a replay header", func(t *testing.T) {
		// "10.00" and "1400.00" are the same request as "10" and "1400".
		same := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "10.00", "price": "1400.00", "client_order_id": "bot-7"}
		r := e.srv.Must(t, 200, "POST", "/v1/trading/orders", key, same)
		var o order
		r.Decode(t, &o)
		if o.ID != first.ID || r.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("replay: %s (header %q)", r, r.Header["Idempotent-Replayed"])
		}
		if b := e.balances(t, key)["NGN"]; b.Locked != "14000.00" {
			t.Fatalf("the retry locked funds again: %+v", b)
		}
	})
	t.Run("a different body is 409 and places nothing", func(t *testing.T) {
		diff := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "10", "price": "1401", "client_order_id": "bot-7"}
		r := e.srv.Do(t, "POST", "/v1/trading/orders", key, diff)
		if r.Status != 409 || r.Message != api.CodeClientOrderIDInUse {
			t.Fatalf("got %s", r)
		}
	})
	t.Run("another merchant may use the same client order id", func(t *testing.T) {
		o := e.place(t, other, body)
		if o.ID == first.ID {
			t.Fatal("two merchants share an order")
		}
	})
	t.Run("GET by client order id", func(t *testing.T) {
		var o order
		e.srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/bot-7", key, nil).Decode(t, &o)
		if o.ID != first.ID {
			t.Fatalf("got %+v", o)
		}
		e.srv.Must(t, 404, "GET", "/v1/trading/orders/by-client-id/nope", key, nil)
	})
	t.Run("X-Idempotency-Key becomes the client order id", func(t *testing.T) {
		b := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "2", "price": "1300"}
		var o order
		e.srv.Must(t, 201, "POST", "/v1/trading/orders", key, b, "X-Idempotency-Key", "idem-1").Decode(t, &o)
		if o.ClientOrderID == nil || *o.ClientOrderID != "idem-1" {
			t.Fatalf("placed with a key: %+v", o)
		}
		r := e.srv.Must(t, 200, "POST", "/v1/trading/orders", key, b, "X-Idempotency-Key", "idem-1")
		var again order
		r.Decode(t, &again)
		if again.ID != o.ID || r.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("replay with a key: %s", r)
		}
		b["price"] = "1299"
		if r := e.srv.Do(t, "POST", "/v1/trading/orders", key, b, "X-Idempotency-Key", "idem-1"); r.Status != 422 || r.Message != api.CodeIdempotencyKeyReused {
			t.Fatalf("key reused for another order: %s", r)
		}
		b["client_order_id"] = "something-else"
		if r := e.srv.Do(t, "POST", "/v1/trading/orders", key, b, "X-Idempotency-Key", "idem-2"); r.Status != 400 {
			t.Fatalf("key and a different client_order_id: %s", r)
		}
	})
	t.Run("DELETE by client order id", func(t *testing.T) {
		var o order
		e.srv.Must(t, 200, "DELETE", "/v1/trading/orders/by-client-id/bot-7", key, nil).Decode(t, &o)
		if o.ID != first.ID || o.Status != "CANCELLED" {
			t.Fatalf("cancelled: %+v", o)
		}
		if r := e.srv.Do(t, "DELETE", "/v1/trading/orders/by-client-id/bot-7", key, nil); r.Status != 422 || r.Message != api.CodeOrderNotCancellable {
			t.Fatalf("second cancel: %s", r)
		}
		e.srv.Must(t, 404, "DELETE", "/v1/trading/orders/by-client-id/nope", key, nil)
		// The other merchant's bot-7 is untouched.
		var theirs order
		e.srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/bot-7", other, nil).Decode(t, &theirs)
		if theirs.Status != "OPEN" {
			t.Fatalf("the other merchant's order: %+v", theirs)
		}
	})
}

// client_order_id is measured in bytes everywhere: an id the body accepts can always be found
// and cancelled by client order id (path and X-Idempotency-Key count bytes too), and one the
// path could not name is refused at placement, changing nothing.
func TestClientOrderIDLengthInBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.a.SandboxKey
	e.fund(t, key, "NGN", "10000000")
	body := func(cid string) map[string]any {
		return map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1400", "client_order_id": cid}
	}
	fits := strings.Repeat("₦", 21)    // 21 characters, 63 bytes
	tooLong := strings.Repeat("₦", 22) // 22 characters, 66 bytes
	o := e.place(t, key, body(fits))
	var got order
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/"+url.PathEscape(fits), key, nil).Decode(t, &got)
	if got.ID != o.ID {
		t.Fatalf("by client id: %+v, placed %+v", got, o)
	}
	// A space must be percent-encoded in the path: the id is unescaped before the lookup.
	spaced := e.place(t, key, body("bot 7"))
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/bot%207", key, nil).Decode(t, &got)
	if got.ID != spaced.ID {
		t.Fatalf("by client id with a space: %+v, placed %+v", got, spaced)
	}
	r := e.srv.Do(t, "POST", "/v1/trading/orders", key, body(tooLong))
	if r.Status != 400 || len(r.Errors) != 1 || r.Errors[0].Field != "client_order_id" {
		t.Fatalf("66-byte id: %s", r)
	}
	if b := e.balances(t, key)["NGN"]; b.Locked != "2800.00" {
		t.Fatalf("the refused order locked funds: %+v", b)
	}
}
