package trading_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
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

// freezer is a TCP relay to target that stops delivering while frozen (what a partition
// does to an established connection): bytes read are held until thawed.
type freezer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	thaw   chan struct{} // nil: delivering
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, u)
			f.mu.Unlock()
			go f.relay(u, c)
			go f.relay(c, u)
		}
	}()
	t.Cleanup(func() {
		f.unfreeze()
		_ = ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			_ = c.Close()
		}
		f.mu.Unlock()
	})
	return f
}

func (f *freezer) relay(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.mu.Lock()
			h := f.thaw
			f.mu.Unlock()
			if h != nil {
				<-h
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = dst.(*net.TCPConn).CloseWrite()
			}
			return
		}
	}
}

func (f *freezer) freeze() { f.mu.Lock(); f.thaw = make(chan struct{}); f.mu.Unlock() }
func (f *freezer) unfreeze() {
	f.mu.Lock()
	if f.thaw != nil {
		close(f.thaw)
		f.thaw = nil
	}
	f.mu.Unlock()
}

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
	fr := newFreezer(t, ln.Addr().String())
	// Timeouts far past the request's: only the request's deadline can answer in time.
	client, err := enginerpc.Dial(fr.ln.Addr().String(), enginerpc.Options{SubmitTimeout: 20 * time.Second, ReadTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // LIFO: after the freezer's (which thaws the relay), before the engine's
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
	check("the network to the engine frozen", "did not answer within the request's deadline", fr.freeze, fr.unfreeze)

	srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "NGN", "amount": "1000000"})
	check("the engine's journal stalled", "retrying with the same client_order_id", g.Hold, g.Release)

	r := srv.Do(t, "POST", "/v1/trading/orders", key, order)
	if r.Status != 200 || r.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("retrying the timed-out place: %s (replayed %q), want the order replayed", r, r.Header["Idempotent-Replayed"])
	}
}
