package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSaveLatestPruneAndSkipDamaged(t *testing.T) {
	s := &Store{Dir: t.TempDir(), Keep: 2}
	if _, _, ok, err := s.Latest(); ok || err != nil {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	for i, off := range []uint64{10, 20, 30} {
		if _, err := s.Save(off, bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	off, data, ok, err := s.Latest()
	if err != nil || !ok || off != 30 || data[0] != 2 {
		t.Fatalf("latest = %d %v %v", off, ok, err)
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 2 {
		t.Fatalf("kept %d snapshots, want 2", len(entries))
	}
	// Damage the newest: the one before it is used.
	name := filepath.Join(s.Dir, "snapshot-00000000000000000030.bin")
	b, _ := os.ReadFile(name)
	b[len(b)-1] ^= 0xff
	_ = os.WriteFile(name, b, 0o644)
	off, data, ok, _ = s.Latest()
	if !ok || off != 20 || data[0] != 1 {
		t.Fatalf("after damage: latest = %d %v", off, ok)
	}
}
