package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/persistence/postgres/pgtest"
	"svc/testport"
)

// safeBuffer collects svcd's log output from its goroutines.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeAddr is an address on a free port for an svcd the test runs in process. The port is
// testport.Free's, below the ephemeral range: svcd binds it only after its migrations and its
// pool's connections, and a port ":0" handed out can meanwhile become the local port of any
// outgoing connection of the box (svcd's own to PostgreSQL included), which makes the bind
// fail with address already in use.
func freeAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", testport.Free(t))
}

// TestServeAndShutdown starts the whole server in process (every route set, the exchanges,
// the job queue), checks its probes and OpenAPI document, and stops it with the context, as
// SIGTERM does. gateway.New refuses to start with an undocumented route, so this is also the
// check that every route of the product is in the OpenAPI document.
func TestServeAndShutdown(t *testing.T) {
	_, dbURL := pgtest.New(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out safeBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", addr, "--database-url", dbURL, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--webhook-allow-insecure"}, func(string) string { return "" }, &out, &out)
	}()
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("svcd stopped: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd did not answer /health:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Get(base + "/ready")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/ready: %v %v", err, resp)
	}
	resp.Body.Close()
	resp, err = http.Get(base + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, p := range []string{"/v1/trading/orders", "/v1/auth/login", "/v1/api-keys", "/v1/webhooks/endpoints"} {
		if doc.Paths[p] == nil {
			t.Errorf("OpenAPI document lacks %s", p)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("svcd did not stop")
	}
	if !strings.Contains(out.String(), `"stopped"`) {
		t.Fatalf("no orderly stop in the log:\n%s", out.String())
	}
}
