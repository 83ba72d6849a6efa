package trading_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/cluster/enginerpc"
	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
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
	r0 := newRemoteRig(t)
	srv, key, client, fr, g, cfg := r0.srv, r0.key, r0.client, r0.net, r0.journal, r0.cfg
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

// remoteRig is a gateway over a remote engine (cluster/enginerpc, a real server over
// loopback) whose network the test can freeze (net) and whose journal it can hold.
type remoteRig struct {
	srv     *gatewaytest.Server
	key     string
	acct    engine.AccountID // the merchant key trades for
	client  *enginerpc.Client
	net     *pgtest.Proxy
	journal *journaltest.Held
	cfg     gateway.Config
}

func newRemoteRig(t *testing.T) remoteRig {
	t.Helper()
	pool, _ := pgtest.New(t)
	eng, g := journaltest.StartEngine(t, nil)
	// The network to the engine, which the test can freeze; timeouts far past the
	// request's: only the request's deadline can answer in time.
	client, fr := enginerpctest.Remote(t, eng)
	t.Cleanup(g.Release) // LIFO: before the client's, the proxy's and the engine's
	h := trading.New(map[api.Environment]trading.Exchange{api.Sandbox: client}, nil, nil)
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	cfg.RequestTimeout = 1500 * time.Millisecond
	srv := gatewaytest.NewWithConfig(t, pool, cfg, h)
	m := authtest.New(t, pool)
	key := m.SandboxKey
	return remoteRig{srv: srv, key: key, acct: engine.AccountID(m.ID), client: client, net: fr, journal: g, cfg: cfg}
}

// A read of a remote engine is bounded by the request's deadline too, not only by the
// client's ReadTimeout (here 20 s): with the network to the engine frozen, reading an
// order (by id or client order id, and before an amend) answers 503 SERVICE_UNAVAILABLE
// with Retry-After by the deadline, never a hang nor a "not found" or "closed" taken from
// the silence; and the client's Offset, Order, OrderByClientID and Depth return once their
// context ends (Offset with the highest offset it has seen, which a history read's settle
// then waits for).
func TestRemoteEngineReadsKeepTheDeadline(t *testing.T) {
	t.Parallel()
	rr := newRemoteRig(t)
	srv, key, client := rr.srv, rr.key, rr.client
	srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "NGN", "amount": "1000000"})
	placed := srv.Must(t, 201, "POST", "/v1/trading/orders", key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1401", "client_order_id": "read-1"})
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(placed.Data, &o); err != nil || o.ID == "" {
		t.Fatalf("placed: %s (%v)", placed, err)
	}
	seen := client.Offset()
	if seen == 0 {
		t.Fatal("the engine acknowledged nothing")
	}

	rr.net.Pause()
	defer rr.net.Resume()
	for _, c := range []struct {
		name, method, path string
		body               any
	}{
		{"get by id", "GET", "/v1/trading/orders/" + o.ID, nil},
		{"get by client order id", "GET", "/v1/trading/orders/by-client-id/read-1", nil},
		{"amend by id", "PATCH", "/v1/trading/orders/" + o.ID, map[string]any{"price": "1402"}},
		{"amend by client order id", "PATCH", "/v1/trading/orders/by-client-id/read-1", map[string]any{"price": "1402"}},
		{"balances", "GET", "/v1/trading/balances", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r := srv.Do(t, c.method, c.path, key, c.body)
			took := time.Since(start)
			if r.Status != 503 || r.Message != api.CodeServiceUnavailable || r.Header["Retry-After"] == "" {
				t.Fatalf("%s (Retry-After %q), want 503 %s", r, r.Header["Retry-After"], api.CodeServiceUnavailable)
			}
			if took > rr.cfg.RequestTimeout+250*time.Millisecond {
				t.Fatalf("answered after %s, past the %s deadline", took, rr.cfg.RequestTimeout)
			}
		})
	}

	const within = 300 * time.Millisecond
	bounded := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		start := time.Now()
		err := call(ctx)
		if took := time.Since(start); took > within+250*time.Millisecond {
			t.Fatalf("%s: returned after %s, its context ended after %s", what, took, within)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	bounded("OffsetContext", func(ctx context.Context) error {
		if off := client.OffsetContext(ctx); off != seen {
			return fmt.Errorf("offset %d, want the %d seen", off, seen)
		}
		return nil
	})
	bounded("OrderContext", func(ctx context.Context) error {
		_, found, err := client.OrderContext(ctx, rr.acct, engine.OrderID(uuid.MustParse(o.ID)))
		return wantTimeout(found, err)
	})
	bounded("OrderByClientIDContext", func(ctx context.Context) error {
		_, found, err := client.OrderByClientIDContext(ctx, rr.acct, "read-1")
		return wantTimeout(found, err)
	})
	bounded("DepthContext", func(ctx context.Context) error {
		_, err := client.DepthContext(ctx, "USDT-NGN", 10)
		return wantTimeout(false, err)
	})
}

// wantTimeout is nil for a read that said the engine did not answer in time.
func wantTimeout(found bool, err error) error {
	if found || !errors.Is(err, enginerpc.ErrTimeout) {
		return fmt.Errorf("found %t, %v: want ErrTimeout", found, err)
	}
	return nil
}
