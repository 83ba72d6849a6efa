package ws_test

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/gateway/ws"
)

// TestLeaseClearNeverOvertakesARenewal: the engine keeps the countdown command that arrives
// last, so a session's lease clear must reach it after a renewal still on its way (the
// engine slow to answer it), never before: overtaken, the renewal would re-arm the lease
// and the engine would cancel the account's orders LeaseFor later. Here the session's first
// renewal is held past the session's bound while cancel-on-disconnect is turned off (which
// clears the lease); the clear is submitted only once the renewal has been.
func TestLeaseClearNeverOvertakesARenewal(t *testing.T) {
	var logs syncLog
	e := newEntry(t, ws.Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	gate := make(chan struct{}) // holds renewals until closed
	var mu sync.Mutex
	var applied []string // the lease calls, in the order the engine answered them
	lease := func(p api.Principal, owner uuid.UUID, syms []string, d time.Duration) error {
		what := "clear"
		if d > 0 {
			what = "renewal"
			<-gate
		}
		err := e.h.Lease(p, owner, syms, d)
		mu.Lock()
		applied = append(applied, what)
		mu.Unlock()
		return err
	}
	const within = 200 * time.Millisecond
	e.srv.SetOrderEntry(ws.OrderEntry{Handler: e.gw.Server.Handler(), CancelOrders: e.h.CancelOrders, Lease: lease, CancelWithin: within})
	c, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := call(t, c, "session.cancel_on_disconnect", 1, map[string]any{"enabled": true}); r.Type != "result" {
		t.Fatalf("enable: %+v", r)
	}
	if r := call(t, c, "session.cancel_on_disconnect", 2, map[string]any{"enabled": false}); r.Type != "result" {
		t.Fatalf("disable: %+v", r)
	}
	logs.waitFor(t, "the engine did not answer in time", 5*time.Second) // the renewal, past its bound
	time.Sleep(2 * within)                                              // room for a clear to overtake it
	close(gate)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(applied)
		mu.Unlock()
		if len(got) >= 2 {
			if !slices.Equal(got[:2], []string{"renewal", "clear"}) {
				t.Fatalf("lease calls answered in the order %v; want the renewal, then the clear", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease calls answered: %v; want a renewal and a clear", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
