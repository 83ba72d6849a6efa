package ws_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/trading"
	"svc/gateway/ws"
	"svc/persistence/journal/journaltest"
)

// syncLog is a log buffer the server's goroutines may write while the test reads it.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *syncLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// waitFor is how long the log took to show want (the test fails past max).
func (l *syncLog) waitFor(t *testing.T, want string, max time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !strings.Contains(l.String(), want) {
		if time.Since(start) > max {
			t.Fatalf("no %q in the log after %s:\n%s", want, max, l.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// A session with cancel-on-disconnect drops while the engine is stalled (its journal
// held, or a remote engine's network frozen): its cleanup does not wait for the cancels
// for ever (it held a goroutine per dropped session and the server's Close behind it), it
// gives up by CancelWithin, says at Warn which orders are not confirmed cancelled and
// reports none done; the server's Close returns too. The cancels stay queued: once the
// engine answers, the orders end cancelled (DISCONNECT), logged as late.
func TestCancelOnDisconnectIsBoundedWhenTheEngineStalls(t *testing.T) {
	const within = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		reason string // the orders' cancel_reason ("": not checked)
		// stall builds the rig and answers the order entry the session uses, and how to
		// stall and revive its engine.
		stall func(t *testing.T, logs *syncLog) (e *entry, oe ws.OrderEntry, hold, release func())
	}{
		{"journal held", "DISCONNECT", func(t *testing.T, logs *syncLog) (*entry, ws.OrderEntry, func(), func()) {
			g := &journaltest.Held{}
			gcfg := gateway.DefaultConfig()
			gcfg.AccessLog = false
			e := newEntryGateway(t, ws.Config{Log: slog.New(slog.NewTextHandler(logs, nil))}, gcfg,
				func(j engine.Journal) engine.Journal { g.Inner = j; return g })
			t.Cleanup(g.Release) // before the rig's: the engine stops only once its journal answers
			return e, ws.OrderEntry{Handler: e.gw.Server.Handler(), CancelOrders: e.h.CancelOrders, Lease: e.h.Lease, CancelWithin: within}, g.Hold, g.Release
		}},
		{"remote engine silent", "DISCONNECT", func(t *testing.T, logs *syncLog) (*entry, ws.OrderEntry, func(), func()) {
			e := newEntry(t, ws.Config{Log: slog.New(slog.NewTextHandler(logs, nil))})
			// The session's cancels and lease go to the same engine over enginerpc, through
			// a proxy the test freezes (the client's own timeouts are 20 s).
			client, fr := enginerpctest.Remote(t, e.engines[api.Sandbox])
			t.Cleanup(fr.Resume)
			h := trading.New(map[api.Environment]trading.Exchange{api.Sandbox: client}, nil, nil)
			return e, ws.OrderEntry{Handler: e.gw.Server.Handler(), CancelOrders: h.CancelOrders, Lease: h.Lease, CancelWithin: within}, fr.Pause, fr.Resume
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncLog
			e, oe, hold, release := tc.stall(t, &logs)
			codStalled(t, e, &logs, oe, hold, release, tc.reason)
		})
	}
}

func codStalled(t *testing.T, e *entry, logs *syncLog, oe ws.OrderEntry, hold, release func(), wantReason string) {
	within := oe.CancelWithin
	e.srv.SetOrderEntry(oe)
	key := e.a.SandboxKey
	c, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := call(t, c, "session.cancel_on_disconnect", 1, map[string]any{"enabled": true}); r.Type != "result" {
		t.Fatalf("cancel_on_disconnect: %+v", r)
	}
	var ids []string
	for i, price := range []string{"1401", "1402"} {
		r := call(t, c, "order.place", 2+i, limit("buy", "1", price, ""))
		if r.Status != 201 {
			t.Fatalf("place: %+v", r)
		}
		ids = append(ids, r.order(t).ID)
	}

	hold()
	_ = c.Conn().UnderlyingConn().Close()
	// The bound plus the time to notice the reset; the slack is for a loaded machine under -race.
	took := logs.waitFor(t, "did not confirm the cancels in time", within+2*time.Second)
	if took < within {
		t.Fatalf("gave up after %s, before its %s bound", took, within)
	}
	warn := logs.String()
	for _, id := range ids {
		if !strings.Contains(warn, id) {
			t.Fatalf("the Warn does not name order %s:\n%s", id, warn)
		}
	}
	if !strings.Contains(warn, "level=WARN") || strings.Contains(warn, "cancelled=") {
		t.Fatalf("the timed-out cancels were reported done:\n%s", warn)
	}

	// Nor does the server's Close wait for them: it waits for the session's goroutines,
	// the lease's renewals included, each bounded the same way.
	start := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); e.srv.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's Close waited for the stalled engine")
	}
	if took := time.Since(start); took > 3*within+2*time.Second {
		t.Fatalf("Close took %s with a %s bound", took, within)
	}

	release()
	for _, id := range ids {
		if reason := e.waitStatus(t, key, id, "CANCELLED"); wantReason != "" && reason != wantReason {
			t.Fatalf("order %s was cancelled for %q, want %s", id, reason, wantReason)
		}
	}
	logs.waitFor(t, "cancelled=2 late=true", 5*time.Second)
	// The server closed before they were confirmed: the lease was left to run out, and
	// cleared once they were (a clear that failed would be logged).
	if l := logs.String(); !strings.Contains(l, "left to run out") || strings.Contains(l, "lease clear (late)") {
		t.Fatalf("the lease at the close:\n%s", l)
	}
}
