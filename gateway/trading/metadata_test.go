package trading_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"svc/gateway/api"
)

// metaOrder is an order with its metadata.
type metaOrder struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata"`
}

// TestOrderMetadata: metadata given at placement is returned on the order (placed, read
// back, listed, cancelled), filters the list (the merchant's own orders only), takes part in
// a retry's comparison, and anything beyond the limits is a 400 naming the field with
// nothing placed.
func TestOrderMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, other := e.a.SandboxKey, e.b.SandboxKey
	e.fund(t, key, "NGN", "1000000")
	e.fund(t, other, "NGN", "1000000")
	bid := func(price string, extra map[string]any) map[string]any {
		b := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": price}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	md := map[string]any{"order": "1001", "user": "ada"}
	var placed, plain, got metaOrder
	e.srv.Must(t, 201, "POST", "/v1/trading/orders", key, bid("1500", map[string]any{"metadata": md, "client_order_id": "m-1"})).Decode(t, &placed)
	if placed.Metadata["order"] != "1001" || placed.Metadata["user"] != "ada" || len(placed.Metadata) != 2 {
		t.Fatalf("placed: %+v", placed)
	}
	r := e.srv.Must(t, 201, "POST", "/v1/trading/orders", key, bid("1400", nil))
	r.Decode(t, &plain)
	if plain.Metadata == nil || len(plain.Metadata) != 0 || !strings.Contains(string(r.Data), `"metadata":{}`) {
		t.Fatalf("an order without metadata: %s", r.Data)
	}
	e.srv.Must(t, 201, "POST", "/v1/trading/orders", other, bid("1450", map[string]any{"metadata": md}))

	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+placed.ID, key, nil).Decode(t, &got)
	if got.Metadata["order"] != "1001" {
		t.Fatalf("get: %+v", got)
	}
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/m-1", key, nil).Decode(t, &got)
	if got.Metadata["user"] != "ada" {
		t.Fatalf("get by client id: %+v", got)
	}

	list := func(key, query string) []metaOrder {
		t.Helper()
		var out struct{ Items []metaOrder }
		e.srv.Must(t, 200, "GET", "/v1/trading/orders?"+query, key, nil).Decode(t, &out)
		return out.Items
	}
	if l := list(key, "metadata[order]=1001"); len(l) != 1 || l[0].ID != placed.ID || l[0].Metadata["user"] != "ada" {
		t.Fatalf("filter: %+v", l)
	}
	if l := list(key, "metadata[order]=1001&metadata[user]=bola"); len(l) != 0 {
		t.Fatalf("filter with a pair no order has: %+v", l)
	}
	if l := list(key, "metadata[order]=1001&status=FILLED"); len(l) != 0 {
		t.Fatalf("filter with the status: %+v", l)
	}
	if l := list(key, ""); len(l) != 2 {
		t.Fatalf("unfiltered: %d orders", len(l))
	}
	if r := e.srv.Do(t, "GET", "/v1/trading/orders?metadata[]=x", key, nil); r.Status != 400 || strings.Join(r.Fields(), ",") != "metadata[]" {
		t.Fatalf("malformed filter: %s", r)
	}

	// A retry with the same client order id: the same metadata is the same order, other
	// metadata is another request.
	if r := e.srv.Do(t, "POST", "/v1/trading/orders", key, bid("1500", map[string]any{"metadata": map[string]any{"user": "ada", "order": "1001"}, "client_order_id": "m-1"})); r.Status != 200 || r.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("retry with the same metadata: %s", r)
	}
	if r := e.srv.Do(t, "POST", "/v1/trading/orders", key, bid("1500", map[string]any{"metadata": map[string]any{"order": "1002"}, "client_order_id": "m-1"})); r.Status != 409 || r.Message != api.CodeClientOrderIDInUse {
		t.Fatalf("retry with other metadata: %s", r)
	}

	// An amend cannot change it: a 400, and the order is as it was.
	if r := e.srv.Do(t, "PATCH", "/v1/trading/orders/"+placed.ID, key, `{"quantity":"2","metadata":{"order":"1003"}}`); r.Status != 400 || strings.Join(r.Fields(), ",") != "metadata" {
		t.Fatalf("amend with metadata: %s", r)
	}
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+placed.ID, key, nil).Decode(t, &got)
	if got.Metadata["order"] != "1001" {
		t.Fatalf("after a refused amend: %+v", got)
	}

	var cancelled metaOrder
	e.srv.Must(t, 200, "DELETE", "/v1/trading/orders/"+placed.ID, key, nil).Decode(t, &cancelled)
	if cancelled.Status != "CANCELLED" || cancelled.Metadata["order"] != "1001" {
		t.Fatalf("cancelled: %+v", cancelled)
	}

	many := map[string]any{}
	for i := range 51 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	wide := map[string]any{}
	for i := range 50 { // within the character limits, but 2 bytes a character: past 32 KiB of JSON
		wide[fmt.Sprintf("k%02d", i)] = strings.Repeat("é", 500)
	}
	long := strings.Repeat("k", 41)
	for _, tc := range []struct {
		name   string
		md     any
		fields string
	}{
		{"not an object", []string{"a"}, "metadata"},
		{"a number value", map[string]any{"n": 1}, "metadata.n"},
		{"51 keys", many, "metadata"},
		{"a long key", map[string]any{long: "v"}, "metadata." + long},
		{"a long value", map[string]any{"k": strings.Repeat("v", 501)}, "metadata.k"},
		{"an empty value", map[string]any{"k": ""}, "metadata.k"},
		{"a NUL in a value", map[string]any{"k": "a\u0000b"}, "metadata.k"},
		{"past the order's bytes", wide, "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(bid("1500", map[string]any{"metadata": tc.md}))
			r := e.srv.Do(t, "POST", "/v1/trading/orders", key, string(raw))
			if r.Status != 400 || r.Message != api.CodeValidation || strings.Join(r.Fields(), ",") != tc.fields {
				t.Fatalf("got %s, want fields %s", r, tc.fields)
			}
		})
	}
	if l := list(key, ""); len(l) != 2 {
		t.Fatalf("a refused order was placed: %d orders", len(l))
	}
}
