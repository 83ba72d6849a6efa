package trading_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"svc/cluster/enginerpc"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/trading"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

// A gateway over a remote engine (cluster/enginerpc) that stops answering answers 503
// SERVICE_UNAVAILABLE with Retry-After before the request's deadline, saying it timed
// out rather than that the engine is "not accepting commands": whether the network to the
// engine stopped delivering while the gateway checks the engine (Client.ErrContext, bounded
// by the request's deadline; before, its status call waited the client's ReadTimeout), or
// the engine's journal stalled under a place (enginerpc.ErrTimeout; before, 503
// ENGINE_UNAVAILABLE "not accepting commands"). Once the engine answers again, so does the
// service, and the timed-out place retried with its client_order_id replays.
func TestRemoteEngineStallAnswers503(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	eng, g := journaltest.StartEngine(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rpc := enginerpc.NewServer(eng, enginerpc.ServerOptions{})
	go func() { _ = rpc.Serve(ln) }()
	// The network to the engine, which the test can freeze (pgtest's proxy relays any TCP
	// stream; it takes its upstream in a URL).
	fr, via := pgtest.NewProxy(t, "tcp://"+ln.Addr().String())
	viaURL, err := url.Parse(via)
	if err != nil {
		t.Fatal(err)
	}
	// Timeouts far past the request's: only the request's deadline can answer in time.
	client, err := enginerpc.Dial(viaURL.Host, enginerpc.Options{SubmitTimeout: 20 * time.Second, ReadTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // LIFO: before the proxy's and the engine's
		g.Release()
		_ = client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		rpc.Stop(ctx)
		cancel()
	})
	h := trading.New(map[api.Environment]trading.Exchange{api.Sandbox: client}, nil, nil)
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	cfg.RequestTimeout = 1500 * time.Millisecond
	srv := gatewaytest.NewWithConfig(t, pool, cfg, h)
	key := authtest.New(t, pool).SandboxKey
	order := map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1401", "client_order_id": "remote-1"}

	check := func(what string, says string, hold func(), release func()) {
		t.Helper()
		hold()
		start := time.Now()
		r := srv.Do(t, "POST", "/v1/trading/orders", key, order)
		took := time.Since(start)
		release()
		if r.Status != 503 || r.Message != api.CodeServiceUnavailable || r.Header["Retry-After"] == "" || !strings.Contains(r.Detail, says) {
			t.Fatalf("%s: %s (Retry-After %q)", what, r, r.Header["Retry-After"])
		}
		if took > cfg.RequestTimeout+250*time.Millisecond {
			t.Fatalf("%s: answered after %s, past the %s deadline", what, took, cfg.RequestTimeout)
		}
	}
	// The connection is up (Ping asked the engine) but the client has not read the
	// engine's pairs yet: the gateway's check of the engine has to ask for them.
	if err := client.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("the network to the engine frozen", "did not answer within the request's deadline", fr.Pause, fr.Resume)

	srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "NGN", "amount": "1000000"})
	check("the engine's journal stalled", "retrying with the same client_order_id", g.Hold, g.Release)

	r := srv.Do(t, "POST", "/v1/trading/orders", key, order)
	if r.Status != 200 || r.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("retrying the timed-out place: %s (replayed %q), want the order replayed", r, r.Header["Idempotent-Replayed"])
	}
}
