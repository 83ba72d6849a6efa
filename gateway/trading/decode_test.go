package trading

import (
	"reflect"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// The hand-written decoder of the order body and api.Decode (encoding/json) agree on
// every body: the same request, or the same error from the fallback.
func TestDecodePlaceOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		fast bool // parsed without api.Decode
	}{
		{"usual limit order", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1.00","price":"1500.01"}`, true},
		{"all fields, spaces", ` { "symbol" : "USDT-NGN", "side":"sell", "type":"market", "quantity":null, "price":null,
			"quote_quantity":"5000", "time_in_force":"IOC", "post_only":false, "client_order_id":"bot-1",
			"self_trade_prevention":"cancel_both" } `, true},
		{"post_only true", `{"post_only":true,"symbol":"USDT-NGN"}`, true},
		{"empty object", `{}`, true},
		{"duplicate key: the last wins", `{"side":"buy","side":"sell"}`, true},
		{"null string field", `{"symbol":null}`, true},
		{"escape", `{"client_order_id":"a\"b"}`, false},
		{"non-ASCII", `{"client_order_id":"é"}`, false},
		{"number", `{"quantity":1}`, false},
		{"unknown key", `{"symbol":"USDT-NGN","note":"x"}`, false},
		{"other case", `{"Symbol":"USDT-NGN"}`, false},
		{"bool as string", `{"post_only":"yes"}`, false},
		{"nested", `{"symbol":{"a":1}}`, false},
		{"malformed", `{"symbol":`, false},
		{"trailing data", `{"symbol":"x"} {}`, false},
		{"array", `[]`, false},
		{"empty", ``, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fast placeOrderRequest
			if got := fastPlaceOrder([]byte(tc.body), &fast); got != tc.fast {
				t.Fatalf("fast path taken = %v, want %v", got, tc.fast)
			}
			var viaHandler, viaJSON placeOrderRequest
			errH := decodePlaceOrder(request(tc.body), &viaHandler)
			errJ := api.Decode(request(tc.body), &viaJSON)
			if !reflect.DeepEqual(viaHandler, viaJSON) || (errH == nil) != (errJ == nil) ||
				(errH != nil && errH.Error() != errJ.Error()) {
				t.Fatalf("decoder %+v (%v), encoding/json %+v (%v)", viaHandler, errH, viaJSON, errJ)
			}
		})
	}
}

func request(body string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.SetBodyString(body)
	return &ctx
}

func BenchmarkDecodePlaceOrder(b *testing.B) {
	body := `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1.00","price":"1500.01","client_order_id":"bot-1"}`
	ctx := request(body)
	for _, tc := range []struct {
		name string
		fn   func(*fasthttp.RequestCtx, *placeOrderRequest) error
	}{{"hand-written", decodePlaceOrder}, {"api.Decode", func(c *fasthttp.RequestCtx, r *placeOrderRequest) error { return api.Decode(c, r) }}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var req placeOrderRequest
				if err := tc.fn(ctx, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
