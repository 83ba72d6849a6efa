package enginerpc

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"svc/engine"
)

// TestGuardRefusesEverything (issue 29): while the server's guard (the engine's lease)
// fails, nothing is answered from the engine: not a balance, not an order, and a command
// is not run. An engine that wakes after a pause longer than its lease holds a state a
// newer engine may have moved past.
func TestGuardRefusesEverything(t *testing.T) {
	r := newRig(t)
	fund(t, r.client, alice, engine.NGN, "10000000", 1)
	if _, err := r.client.Submit(place(alice, 1, engine.Buy, 150000, 500, "g-1")); err != nil {
		t.Fatal(err)
	}
	// A second server over the same engine with a guard the test flips.
	var lapsed atomic.Bool
	srv := NewServer(r.eng, ServerOptions{Guard: func() error {
		if lapsed.Load() {
			return errors.New("lease not renewed")
		}
		return nil
	}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.g.Stop()
	c, err := Dial(lis.Addr().String(), Options{SubmitTimeout: 2 * time.Second, ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.BalancesContext(t.Context(), alice); err != nil {
		t.Fatalf("balances with the guard passing: %v", err)
	}

	lapsed.Store(true)
	if b, err := c.BalancesContext(t.Context(), alice); err == nil || !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("balances with the guard failing: %v %v", b, err)
	}
	if _, ok := c.Order(alice, engine.OrderID{1}); ok {
		t.Fatal("order answered with the guard failing")
	}
	if _, err := c.Depth("USDT-NGN", 5); err == nil {
		t.Fatal("depth answered with the guard failing")
	}
	before := r.j.LastOffset()
	if _, err := c.Submit(place(alice, 2, engine.Buy, 150000, 500, "g-2")); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("submit with the guard failing: %v, want engine.ErrUnavailable", err)
	}
	if _, ok := r.eng.Order(alice, engine.OrderID{2}); ok || r.j.LastOffset() != before {
		t.Fatal("a command was run while the guard failed")
	}
	if err := c.Ping(t.Context()); err == nil {
		t.Fatal("status answered with the guard failing")
	}

	lapsed.Store(false)
	if _, ok := c.Order(alice, engine.OrderID{1}); !ok {
		t.Fatal("order not answered once the guard passes again")
	}
}

// failingEngine is an engine whose fail-stop the test sets.
type failingEngine struct {
	*engine.Engine
	failed atomic.Bool
}

func (f *failingEngine) Err() error {
	if f.failed.Load() {
		return engine.ErrUnavailable
	}
	return nil
}

// TestFailStopIsNotStickyAcrossEngines (issue 29): a client told by the engine it calls that
// it has fail-stopped asks again once Err is asked, so when that engine is replaced behind the
// same connection target (a failover: the old leader's journal failed, the standby took
// over), the client serves again without waiting for an unrelated call. Before, Err answered
// ErrUnavailable for ever, and the gateways' trading handlers, which check Err first, never
// called again: 503 after every failover until something probed /ready.
func TestFailStopIsNotStickyAcrossEngines(t *testing.T) {
	r := newRig(t)
	fe := &failingEngine{Engine: r.eng}
	srv := NewServer(fe, ServerOptions{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.g.Stop()
	c, err := Dial(lis.Addr().String(), Options{ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fe.failed.Store(true)
	if err := c.Ping(t.Context()); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("ping of a failed engine: %v", err)
	}
	if err := c.Err(); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("Err after the engine said it failed: %v", err)
	}
	fe.failed.Store(false) // the engine behind the address serves again
	deadline := time.Now().Add(3 * time.Second)
	for c.Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("Err still reports the old fail-stop 3 s after the engine serves again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
