package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

// A database whose order history was projected from another journal (here: the first
// svcd's journal folder, then a fresh one) is refused at start, instead of the new journal
// being projected over it with its first rows skipped.
func TestProjectionPastTheJournalIsRefused(t *testing.T) {
	pool, dbURL := pgtest.New(t)
	_, _, stop := startSvcd(t, dbURL, "--demo") // the demo funding is journaled and projected
	pos := projection.NewPosition(pool, "sandbox")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if p, err := pos.Applied(context.Background()); err == nil && p > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo funding was not projected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // another, empty journal folder on the same database
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out safeBuffer
	err := run(ctx, []string{"--addr", freeAddr(t), "--database-url", dbURL, "--journal-dir", dir + "/journal",
		"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--engine-lease-ttl", "2s"},
		func(string) string { return "" }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "past the end of the journal") {
		t.Fatalf("start on another journal: %v\n%s", err, out.String())
	}
}
