package journal

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// TestTornTailIsLogged: the truncation of a torn tail on open is logged with where and
// how much was dropped.
func TestTornTailIsLogged(t *testing.T) {
	dir := t.TempDir()
	j := openFile(t, FileOptions{Dir: dir})
	mustAppend(t, j, batchOf(1, 3))
	j.Close()
	seg := segmentFiles(t, dir)[0]
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{0xa5}, 100))
	f.Close()
	var logs bytes.Buffer
	j = openFile(t, FileOptions{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if j.LastOffset() != 3 {
		t.Fatalf("LastOffset %d", j.LastOffset())
	}
	out := logs.String()
	if !strings.Contains(out, "torn tail") || !strings.Contains(out, "dropped_bytes=100") || !strings.Contains(out, "next_offset=4") {
		t.Fatalf("log: %q", out)
	}
	// A clean open logs nothing.
	logs.Reset()
	reopen(t, j)
	if logs.Len() != 0 {
		t.Fatalf("clean open logged %q", logs.String())
	}
}

// TestPruneKeepsEverythingFromOffset: Prune removes only whole segments below the
// offset, never the segment being written, and the rest reads and appends as before.
func TestPruneKeepsEverythingFromOffset(t *testing.T) {
	dir := t.TempDir()
	j := openFile(t, FileOptions{Dir: dir, SegmentSize: 200})
	for i := uint64(0); i < 10; i++ {
		mustAppend(t, j, batchOf(1+3*i, 3))
	}
	segs := segmentFiles(t, dir)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	const before = 17
	n, err := j.Prune(before)
	if err != nil || n == 0 {
		t.Fatalf("Prune: %d %v", n, err)
	}
	if got := len(segmentFiles(t, dir)); got != len(segs)-n {
		t.Fatalf("%d files left, want %d", got, len(segs)-n)
	}
	first := j.firstOffset()
	if first > before {
		t.Fatalf("oldest kept segment starts at %d, after %d", first, before)
	}
	checkPayloads(t, readAll(t, j, before), before, 30-before+1)
	if err := j.ReadFrom(t.Context(), 1, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrOffsetNotFound) {
		t.Fatalf("read of a pruned offset: %v", err)
	}
	if n, err := j.Prune(1 << 40); err != nil || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("prune of everything: %d %v, %d files", n, err, len(segmentFiles(t, dir)))
	}
	mustAppend(t, j, batchOf(31, 2))
	j = reopen(t, j)
	if j.LastOffset() != 32 {
		t.Fatalf("LastOffset %d after reopen", j.LastOffset())
	}
	checkPayloads(t, readAll(t, j, j.firstOffset()), j.firstOffset(), int(32-j.firstOffset()+1))
}
