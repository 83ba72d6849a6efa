package engine

import (
	"errors"
	"testing"
	"time"
)

// TestNoSnapshotAfterJournalFailure: a snapshot is an image of the state the journal
// holds; once a batch failed, the in-memory state holds effects the journal lacks, so no
// snapshot may be taken, including one whose barrier was waiting for the failing batch.
func TestNoSnapshotAfterJournalFailure(t *testing.T) {
	t.Run("failure during the barrier", func(t *testing.T) {
		j := &errGateJournal{gate: make(chan struct{})}
		e := newEngine(t, j, 64)
		w := submit(t, e, Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(1)})
		waitFor(t, "the batch enqueued", func() bool { return j.n.Load() == 1 })
		type snap struct {
			data []byte
			err  error
		}
		got := make(chan snap, 1)
		go func() {
			data, _, err := e.Snapshot(nil)
			got <- snap{data, err}
		}()
		time.Sleep(20 * time.Millisecond) // the barrier waits for the batch in flight
		close(j.gate)                     // which fails
		if _, err := w.Wait(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("failed batch answered %v", err)
		}
		s := <-got
		if !errors.Is(s.err, ErrUnavailable) || len(s.data) != 0 {
			t.Fatalf("snapshot after a journal failure: %d bytes, %v", len(s.data), s.err)
		}
	})
	t.Run("after the failure", func(t *testing.T) {
		e := newEngine(t, &failJournal{after: 0}, 64)
		if _, err := e.Submit(&Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(1)}); !errors.Is(err, ErrUnavailable) {
			t.Fatal(err)
		}
		if data, _, err := e.Snapshot(nil); !errors.Is(err, ErrUnavailable) || len(data) != 0 {
			t.Fatalf("%d bytes, %v", len(data), err)
		}
		e.Stop()
		if data, _, err := e.Snapshot(nil); !errors.Is(err, ErrUnavailable) || len(data) != 0 {
			t.Fatalf("stopped: %d bytes, %v", len(data), err)
		}
	})
}

// TestReadsAfterFailStop: after a journal failure the engine's state may hold effects a
// restart removes; Err says so (the gateway answers 503 ENGINE_UNAVAILABLE) and the
// runner-served reads refuse.
func TestReadsAfterFailStop(t *testing.T) {
	j := &failJournal{after: 1}
	e := newEngine(t, j, 64)
	a := acc(1)
	fund(t, e, a, NGN, 1e6*ngn, 1)
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	c := placeCmd(a, "USDT-NGN", 1, "x")
	if _, err := e.Submit(&c); !errors.Is(err, ErrUnavailable) {
		t.Fatal(err)
	}
	// The order and its reserve are in memory, not in the journal.
	if err := e.Err(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Err after fail-stop: %v", err)
	}
	if _, err := e.Depth("USDT-NGN", 5); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Depth after fail-stop: %v", err)
	}
	if _, _, _, _, err := e.BestBidAsk("USDT-NGN"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("BestBidAsk after fail-stop: %v", err)
	}
}
