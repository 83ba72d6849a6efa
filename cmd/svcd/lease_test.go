package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"svc/persistence/postgres/pgtest"
)

// startSvcd runs svcd in process with its own address and folders and waits for /health.
func startSvcd(t *testing.T, dbURL string, extra ...string) (base string, out *safeBuffer, stop func() error) {
	t.Helper()
	addr := freeAddr(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	out = &safeBuffer{}
	done := make(chan error, 1)
	args := append([]string{"--addr", addr, "--database-url", dbURL, "--journal-dir", dir + "/journal",
		"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--webhook-allow-insecure", "--engine-lease-ttl", "2s"}, extra...)
	go func() { done <- run(ctx, args, func(string) string { return "" }, out, out) }()
	base = "http://" + addr
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			t.Fatal("svcd did not stop")
			return nil
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base, out, stop
			}
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("svcd stopped: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("svcd did not answer /health:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readyStatus(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestOneEnginePerDatabase: a second svcd on the same database refuses to start, naming the
// holder, and starts once the first has stopped; an engine whose lease connection dies stops
// being ready at once.
func TestOneEnginePerDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("two servers")
	}
	pool, dbURL := pgtest.New(t)
	// A and B are one deployment restarted: one journal and snapshot folder (A writes to its
	// journal: the sandbox market maker's orders, at least; a database whose history is past
	// B's journal would rightly be refused).
	shared := t.TempDir()
	same := []string{"--journal-dir", shared + "/journal", "--snapshot-dir", shared + "/snapshots"}
	_, _, stopA := startSvcd(t, dbURL, same...)

	var out safeBuffer
	start := time.Now()
	err := run(context.Background(), []string{"--addr", freeAddr(t), "--database-url", dbURL,
		"--journal-dir", t.TempDir(), "--snapshot-dir", t.TempDir(), "--access-log=false", "--engine-lease-ttl", "2s"},
		func(string) string { return "" }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "engine lease is held by svcd pid") || !strings.Contains(err.Error(), "another svcd runs the sandbox engine") {
		t.Fatalf("second svcd: %v\n%s", err, out.String())
	}
	t.Logf("second svcd refused after %v: %v", time.Since(start).Round(time.Millisecond), err)

	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	var released int
	if err := pool.QueryRow(context.Background(), `select count(*) from engine_leases where released_at is not null`).Scan(&released); err != nil || released != 2 {
		t.Fatalf("clean releases %d, err %v", released, err)
	}

	baseB, outB, stopB := startSvcd(t, dbURL, append(same, "--demo")...)
	defer stopB()
	m := demoKeyLine.FindStringSubmatch(outB.String())
	if m == nil {
		t.Fatalf("no demo key:\n%s", outB.String())
	}
	order := func() (int, string) {
		req, _ := http.NewRequest("POST", baseB+"/v1/trading/orders",
			strings.NewReader(`{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"10","price":"1500"}`))
		req.Header.Set("X-Api-Key", m[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := order(); code != 201 {
		t.Fatalf("order before the loss: %d %s", code, body)
	}
	var epoch int64
	if err := pool.QueryRow(context.Background(), `select epoch from engine_leases where environment = 'sandbox'`).Scan(&epoch); err != nil || epoch != 2 {
		t.Fatalf("epoch after takeover %d, err %v", epoch, err)
	}
	if s := readyStatus(t, baseB); s != 200 {
		t.Fatalf("/ready %d", s)
	}
	// Another engine takes the lease over (as after this one was partitioned from the
	// database for longer than the lease): the engine's next renewal finds its epoch gone.
	if _, err := pool.Exec(context.Background(), `update engine_leases set epoch = epoch + 1, holder = 'usurper'
		where environment = 'sandbox'`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for readyStatus(t, baseB) == 200 {
		if time.Now().After(deadline) {
			t.Fatalf("still ready after losing the lease:\n%s", outB.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(outB.String(), "engine lease lost") {
		t.Fatalf("no log of the lost lease:\n%s", outB.String())
	}
	// Fail-stop: the engine takes no more orders (503, as after a journal error) once its own
	// lease is found lost (each environment's keepalive notices within a TTL/3 tick; until
	// then its lease is still valid and an order may still be acknowledged).
	deadline = time.Now().Add(5 * time.Second)
	for {
		code, body := order()
		if code == 503 && strings.Contains(body, "ENGINE_UNAVAILABLE") {
			break
		}
		if code != 201 || time.Now().After(deadline) {
			t.Fatalf("order after the loss: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestJournalNewerThanTheDatabase: a journal written under a higher epoch than the database
// knows (a database restored from a backup, or another deployment's journal) is refused with
// what to do; after the operator sets the epoch, svcd starts on it.
func TestJournalNewerThanTheDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("three servers")
	}
	poolA, dbA := pgtest.New(t)
	poolB, dbB := pgtest.New(t)
	// Database A has seen a few takeovers already.
	if _, err := poolA.Exec(context.Background(), `insert into engine_leases (environment, epoch, holder) values ('sandbox', 5, 'earlier')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := func(db string, extra ...string) []string {
		return append([]string{"--addr", freeAddr(t), "--database-url", db, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--engine-lease-ttl", "2s"}, extra...)
	}
	start := func(db string, extra ...string) error {
		ctx, cancel := context.WithCancel(context.Background())
		var out safeBuffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, args(db, extra...), func(string) string { return "" }, &out, &out) }()
		for !strings.Contains(out.String(), "svcd listening") {
			select {
			case err := <-done:
				cancel()
				return err
			case <-time.After(50 * time.Millisecond):
			}
		}
		cancel()
		return <-done
	}
	if err := start(dbA, "--demo"); err != nil { // the demo funding is journaled under epoch 6
		t.Fatal(err)
	}
	err := start(dbB)
	if err == nil || !strings.Contains(err.Error(), "journal writer fenced") || !strings.Contains(err.Error(), "epoch 6, newer than this engine's 1") ||
		!strings.Contains(err.Error(), "insert into engine_leases") {
		t.Fatalf("database B on A's journal: %v", err)
	}
	if _, err := poolB.Exec(context.Background(), `insert into engine_leases (environment, epoch, holder) values ('sandbox', 6, 'restored')
		on conflict (environment) do update set epoch = excluded.epoch`); err != nil {
		t.Fatal(err)
	}
	if err := start(dbB); err != nil {
		t.Fatalf("after setting the epoch: %v", err)
	}
}
