package eventlog_test

import (
	"context"
	"errors"
	"testing"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// recorder applies chunks, noting each event's Seq, until its fail-th call (0: never),
// which fails; it counts every call.
type recorder struct {
	fail, calls int
	seqs        []uint64
}

var errApply = errors.New("apply refused")

func (r *recorder) Apply(ev []engine.Event) error {
	r.calls++
	if r.calls == r.fail {
		return errApply
	}
	for i := range ev {
		r.seqs = append(r.seqs, ev[i].Seq)
	}
	return nil
}

// appendCredits appends batches batches of per credits to j, with Seq 1, 2, 3... in order.
func appendCredits(t *testing.T, j *journal.Memory, batches, per int) {
	t.Helper()
	l := eventlog.New(j, nil)
	acct := engine.AccountID{1}
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
}

// Replay decodes the next chunk while a goroutine applies the last one. A chunk that fails
// to apply stops the replay with the applier's error (not the reader's stop), no chunk is
// applied after it, and the count and progress are those of the chunks applied before it;
// without a failure every chunk is applied in order, progress after each.
func TestReplayOverlapsAndStopsAtAFailedChunk(t *testing.T) {
	j := startedMemory(t)
	const batches, per = 6, 4096 // one replay chunk per batch
	appendCredits(t, j, batches, per)
	for _, tc := range []struct {
		name string
		fail int // the Apply call that fails, 0 for none
	}{
		{"every chunk applies", 0},
		{"the second chunk fails", 2},
		{"the last chunk fails", batches},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &recorder{fail: tc.fail}
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
			if n != applied*per || len(f.seqs) != n || len(progress) != applied || (applied > 0 && progress[applied-1] != n) {
				t.Fatalf("n %d, applied %d events, progress %v; want %d chunks of %d", n, len(f.seqs), progress, applied, per)
			}
		})
	}
}

// failingReader reads the journal but fails at its failAt-th record, before handing it over.
type failingReader struct {
	j      eventlog.Reader
	failAt int
}

var errRead = errors.New("read failed")

func (f failingReader) ReadFrom(ctx context.Context, from uint64, fn func(uint64, []byte) error) error {
	n := 0
	return f.j.ReadFrom(ctx, from, func(off uint64, p []byte) error {
		if n++; n == f.failAt {
			return errRead
		}
		return fn(off, p)
	})
}

// The offset Replay reports after an error is where a caller resumes: the last offset
// whose events were all applied. Resuming after it applies every event of the journal
// exactly once, whether an apply failed (chunks read ahead of the failed one are not
// applied) or the read did (the events read since the last chunk are not applied).
func TestReplayResumesAfterTheOffsetItReports(t *testing.T) {
	j := startedMemory(t)
	const batches, per = 12, 1500 // a replay chunk every three batches, a record or more each
	appendCredits(t, j, batches, per)
	records := 0
	if err := j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { records++; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		r       eventlog.Reader
		fail    int // the Apply call that fails, 0 for none
		wantErr error
	}{
		{"the second chunk fails to apply", j, 2, errApply},
		{"the first chunk fails to apply", j, 1, errApply},
		{"the last chunk fails to apply", j, 4, errApply},
		{"the read fails between chunks", failingReader{j, records*2/3 + 1}, 0, errRead},
		{"the read fails at the first record", failingReader{j, 1}, 0, errRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := &recorder{fail: tc.fail}
			off, n, err := eventlog.Replay(context.Background(), tc.r, 0, first, nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("replay error %v, want %v", err, tc.wantErr)
			}
			if n != len(first.seqs) {
				t.Fatalf("replay counts %d events, applied %d", n, len(first.seqs))
			}
			rest := &recorder{}
			if _, _, err := eventlog.Replay(context.Background(), j, off, rest, nil); err != nil {
				t.Fatal(err)
			}
			all := append(first.seqs, rest.seqs...)
			if len(all) != batches*per {
				t.Fatalf("resumed after offset %d: %d events applied before and %d after, want %d in all", off, len(first.seqs), len(rest.seqs), batches*per)
			}
			for i, s := range all {
				if s != uint64(i+1) {
					t.Fatalf("resumed after offset %d: event %d applied is seq %d (%d applied before the error)", off, i, s, len(first.seqs))
				}
			}
		})
	}
}
