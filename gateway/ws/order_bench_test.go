package ws_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/valyala/fasthttp"

	"svc/gateway/ws"
)

// BenchmarkOrderPlace is the per-order cost of placing over REST and over the WebSocket
// on the same gateway (identity, scopes, rate limit, trading routes) and engine, with a
// journal in memory: no fsync, so what is left is what each path adds around the engine.
// One order in flight (closed loop), so ns/op is a placement's round trip:
//
//   - handler: POST /v1/trading/orders run through the gateway's handler in process, no
//     socket (what REST costs besides TCP and HTTP parsing; allocs/op are the order route's);
//   - rest: the same over a keep-alive loopback connection (fasthttp client);
//   - ws: order.place on a WebSocket connection (gorilla client, as svcbench ws-orders).
//
// allocs/op of rest and ws include the client's, which runs in the same process.
// Buys and sells alternate at one price, so each order cancels the account's previous one
// by self-trade prevention and the account's funds never run out.
//
//	go test -run '^$' -bench BenchmarkOrderPlace -benchtime 3s ./gateway/ws
func BenchmarkOrderPlace(b *testing.B) {
	e := newEntry(b, ws.Config{})
	body := func(i int) string {
		side := "buy"
		if i%2 == 1 {
			side = "sell"
		}
		return `{"symbol":"USDT-NGN","side":"` + side + `","type":"limit","quantity":"1","price":"1450"}`
	}
	b.Run("handler", func(b *testing.B) {
		h := e.gw.Server.Handler()
		var rc fasthttp.RequestCtx
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var req fasthttp.Request
			req.Header.SetMethod("POST")
			req.SetRequestURI("/v1/trading/orders")
			req.Header.Set("X-Api-Key", e.a.SandboxKey)
			req.Header.SetContentType("application/json")
			req.SetBodyString(body(i))
			rc.Init(&req, nil, nil)
			h(&rc)
			if rc.Response.StatusCode() != 201 {
				b.Fatalf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
			}
		}
	})
	b.Run("rest", func(b *testing.B) {
		addr := strings.TrimSuffix(strings.TrimPrefix(e.url, "ws://"), "/v1/ws")
		client := &fasthttp.HostClient{Addr: addr, MaxConns: 1}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + addr + "/v1/trading/orders")
		req.Header.Set("X-Api-Key", e.a.SandboxKey)
		req.Header.SetContentType("application/json")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			req.SetBodyString(body(i))
			if err := client.Do(req, resp); err != nil || resp.StatusCode() != 201 {
				b.Fatalf("%v %d %s", err, resp.StatusCode(), resp.Body())
			}
		}
	})
	b.Run("ws", func(b *testing.B) {
		c, err := ws.Dial(e.url, e.a.SandboxKey)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conn := c.Conn()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			msg := `{"op":"order.place","id":` + strconv.Itoa(i) + `,"params":` + body(i) + `}`
			if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				b.Fatal(err)
			}
			for {
				_, data, err := conn.ReadMessage()
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(string(data), `{"type":"result","op":"order.place"`) {
					break
				}
				if strings.HasPrefix(string(data), `{"type":"error"`) {
					b.Fatalf("%s", data)
				}
			}
		}
	})
}
