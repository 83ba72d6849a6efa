package journaltest

import (
	"context"
	"testing"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// Recover is what a process taking over journal j does: a new engine over j, restored from
// the image snap, caught up with j's records from offset (eventlog.Replay), then started;
// it is stopped when the test ends. It returns the engine and the offset the image says it
// was taken at, for a test to compare with what it expects.
func Recover(t testing.TB, j *journal.Memory, snap []byte, offset uint64) (*engine.Engine, uint64) {
	t.Helper()
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	restored, err := eng.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	last, _, err := eventlog.Replay(context.Background(), j, offset, eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Replayed(last); err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return eng, restored
}
