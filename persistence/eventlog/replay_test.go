package eventlog_test

import (
	"context"
	"errors"
	"testing"

	"svc/engine"
	"svc/persistence/eventlog"
)

// failOn applies chunks until its fail-th call, which fails; it counts every call.
type failOn struct {
	fail, calls, events int
}

var errApply = errors.New("apply refused")

func (f *failOn) Apply(ev []engine.Event) error {
	f.calls++
	if f.calls == f.fail {
		return errApply
	}
	f.events += len(ev)
	return nil
}

// Replay decodes the next chunk while a goroutine applies the last one. A chunk that fails
// to apply stops the replay with the applier's error (not the reader's stop), no chunk is
// applied after it, and the count and progress are those of the chunks applied before it;
// without a failure every chunk is applied in order, progress after each.
func TestReplayOverlapsAndStopsAtAFailedChunk(t *testing.T) {
	j := startedMemory(t)
	l := eventlog.New(j, nil)
	acct := engine.AccountID{1}
	const batches, per = 6, 4096 // one replay chunk per batch
	seq := uint64(0)
	for b := 0; b < batches; b++ {
		batch := make([]engine.Event, per)
		for i := range batch {
			seq++
			batch[i] = engine.Event{Seq: seq, Kind: engine.EventCredit, Account: acct, Asset: engine.NGN, Amount: 1, NDeltas: 1,
				Deltas: [4]engine.BalanceDelta{{Account: acct, Asset: engine.NGN, Available: 1}}}
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		fail int // the Apply call that fails, 0 for none
	}{
		{"every chunk applies", 0},
		{"the second chunk fails", 2},
		{"the last chunk fails", batches},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failOn{fail: tc.fail}
			var progress []int
			var lastOff uint64
			_, n, err := eventlog.Replay(context.Background(), j, 0, f, func(off uint64, n int) {
				if off <= lastOff && len(progress) > 0 {
					t.Errorf("progress went from offset %d to %d", lastOff, off)
				}
				lastOff = off
				progress = append(progress, n)
			})
			applied := batches
			if tc.fail != 0 {
				if !errors.Is(err, errApply) {
					t.Fatalf("replay error %v, want the applier's", err)
				}
				if f.calls != tc.fail {
					t.Fatalf("Apply called %d times, want it to stop at the failed call %d", f.calls, tc.fail)
				}
				applied = tc.fail - 1
			} else if err != nil {
				t.Fatal(err)
			}
			if n != applied*per || f.events != n || len(progress) != applied || (applied > 0 && progress[applied-1] != n) {
				t.Fatalf("n %d, applied %d events, progress %v; want %d chunks of %d", n, f.events, progress, applied, per)
			}
		})
	}
}
