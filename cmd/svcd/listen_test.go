package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/cmd/internal/devhooks"
	"svc/gateway/auth/authtest"
	"svc/payments/webhooks"
	"svc/persistence/postgres/pgtest"
)

// TestListenForwardsATriggeredDeposit (issue 30): against a whole svcd, `svc listen`
// (devhooks.Listen, with a merchant's sandbox key only) receives the merchant's events over
// the WebSocket events channel and forwards each to a local HTTP server, signed with the
// secret it printed; `svc trigger deposit` (devhooks.Trigger) makes a sandbox deposit that
// settles through the real flow. The local server verifies every signature and sees the
// deposit's events in their order, with the same data the events API serves.
func TestListenForwardsATriggeredDeposit(t *testing.T) {
	pool, dbURL := pgtest.New(t)
	dir := t.TempDir()
	node := startNode(t, "--database-url", dbURL, "--journal-dir", dir+"/journal", "--snapshot-dir", dir+"/snapshots")
	m := authtest.New(t, pool)

	type got struct {
		event, id string
		data      json.RawMessage
	}
	var (
		mu       sync.Mutex
		secret   string
		received []got
		bad      []string
	)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := webhooks.Verify(body, r.Header.Get(webhooks.HeaderSignature), secret, time.Minute, time.Now()); err != nil {
			bad = append(bad, err.Error())
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var env struct {
			ID    string          `json:"id"`
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		if env.ID != r.Header.Get(webhooks.HeaderEventID) {
			bad = append(bad, "event id header "+r.Header.Get(webhooks.HeaderEventID)+" != body "+env.ID)
		}
		received = append(received, got{env.Event, env.ID, env.Data})
		w.WriteHeader(http.StatusNoContent)
	}))
	defer local.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	var out safeBuffer
	listenErr := make(chan error, 1)
	go func() {
		listenErr <- devhooks.Listen(ctx, devhooks.ListenConfig{
			WSURL: "ws" + strings.TrimPrefix(node.base, "http") + "/v1/ws", APIKey: m.SandboxKey, ForwardTo: local.URL + "/webhook",
			Events: []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled"},
			Ready: func(s string) {
				mu.Lock()
				secret = s
				mu.Unlock()
				close(ready)
			},
		}, &out)
	}()
	select {
	case <-ready:
	case err := <-listenErr:
		t.Fatalf("listen: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("listen not ready:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "whsec_") || !strings.Contains(out.String(), "sandbox environment") {
		t.Fatalf("listen did not print its secret and environment:\n%s", out.String())
	}

	var trig safeBuffer
	if err := devhooks.Trigger(ctx, devhooks.TriggerConfig{BaseURL: node.base, APIKey: m.SandboxKey}, "deposit", &trig); err != nil {
		t.Fatalf("trigger: %v\n%s", err, trig.String())
	}
	// svcd converts and settles the sandbox deposit as it arrives (issue 27), and says so.
	if !strings.Contains(trig.String(), "(SETTLED): converted and credited as it arrived") {
		t.Fatalf("trigger:\n%s", trig.String())
	}
	// A customer is created too: --events leaves it out.
	if err := devhooks.Trigger(ctx, devhooks.TriggerConfig{BaseURL: node.base, APIKey: m.SandboxKey}, "customer", &trig); err != nil {
		t.Fatalf("trigger customer: %v", err)
	}
	want := []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n >= len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("forwarded %d events, want %d:\nlisten:\n%s\ntrigger:\n%s", n, len(want), out.String(), trig.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // nothing more (the customer is filtered out)
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("signature failures: %v", bad)
	}
	if len(received) != len(want) {
		t.Fatalf("forwarded %d events: %+v", len(received), received)
	}
	for i, g := range received {
		if g.event != want[i] {
			t.Fatalf("event %d is %s, want %s (%+v)", i, g.event, want[i], received)
		}
		// The same data as the events API serves.
		api := node.call(t, "GET", "/v1/events/"+g.id, m.SandboxKey, nil, 200)
		a, _ := json.Marshal(api["data"])
		var b any
		_ = json.Unmarshal(g.data, &b)
		bb, _ := json.Marshal(b)
		if string(a) != string(bb) {
			t.Fatalf("%s: forwarded data %s, events API %s", g.event, bb, a)
		}
	}
	lines := strings.Count(out.String(), "-> 204 No Content")
	if lines != len(want) {
		t.Fatalf("listen printed %d delivery lines, want %d:\n%s", lines, len(want), out.String())
	}
	cancel()
	select {
	case err := <-listenErr:
		if err != nil {
			t.Fatalf("listen ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listen did not stop with its context")
	}
}
