package eventlog_test

import (
	"context"
	"testing"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// A batch far larger than one journal record (say a cancel-all of 20,000 orders) is split
// into several records under the limit instead of failing the journal, and replays whole.
func TestOversizedBatchIsSplitNotFailed(t *testing.T) {
	j, err := journal.OpenFile(journal.FileOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	l := eventlog.New(j, nil)
	acct := engine.AccountID{1}
	batch := make([]engine.Event, 20000)
	for i := range batch {
		batch[i] = engine.Event{Seq: uint64(i + 1), Kind: engine.EventCancelled, Symbol: "USDT-NGN", Account: acct,
			OrderID: engine.OrderID{byte(i), byte(i >> 8)}, ClientOrderID: "client-order-id-of-some-length", Reason: engine.ReasonUser,
			Qty: 100, Price: 150000, NDeltas: 1, Deltas: [4]engine.BalanceDelta{{Account: acct, Asset: engine.USDT, Available: 1, Locked: -1}}}
	}
	last, err := l.Append(batch)
	if err != nil {
		t.Fatalf("a large batch failed the journal: %v", err)
	}
	if last < 2 {
		t.Fatalf("20,000 events in %d record(s): want several", last)
	}
	var got int
	var e engine.Event
	err = j.ReadFrom(context.Background(), 1, func(off uint64, payload []byte) error {
		if len(payload) > 1<<20 {
			t.Fatalf("record %d is %d bytes", off, len(payload))
		}
		return engine.DecodeRecord(payload, &e, func(e *engine.Event) error {
			got++
			if e.Seq != uint64(got) {
				t.Fatalf("event %d has seq %d", got, e.Seq)
			}
			return nil
		})
	})
	if err != nil || got != len(batch) {
		t.Fatalf("replayed %d events, err %v", got, err)
	}
}

type collector struct{ events []engine.Event }

// startedMemory is a started memory journal.
func startedMemory(t *testing.T) *journal.Memory {
	t.Helper()
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	return j
}

func (c *collector) Apply(ev []engine.Event) error { c.events = append(c.events, ev...); return nil }

// A crash between the records of one split batch leaves its first parts in the journal
// (and, after the restart, later batches behind them). Replay applies that batch not at
// all, never a prefix of its commands' events, and goes on with the batches after it.
func TestIncompleteSplitBatchIsDropped(t *testing.T) {
	src := startedMemory(t)
	l := eventlog.New(src, nil)
	acct := engine.AccountID{1}
	big := make([]engine.Event, 20000)
	for i := range big {
		big[i] = engine.Event{Seq: uint64(i + 1), Kind: engine.EventCancelled, Symbol: "USDT-NGN", Account: acct,
			OrderID: engine.OrderID{byte(i), byte(i >> 8)}, ClientOrderID: "client-order-id-of-some-length", Reason: engine.ReasonUser,
			Qty: 100, Price: 150000, NDeltas: 1, Deltas: [4]engine.BalanceDelta{{Account: acct, Asset: engine.USDT, Available: 1, Locked: -1}}}
	}
	parts, err := l.Append(big)
	if err != nil || parts < 3 {
		t.Fatalf("%d records, %v", parts, err)
	}
	after := []engine.Event{{Seq: 1, Kind: engine.EventCredit, Account: acct, Asset: engine.NGN, Amount: 5, NDeltas: 1,
		Deltas: [4]engine.BalanceDelta{{Account: acct, Asset: engine.NGN, Available: 5}}}}
	var records [][]byte
	if err := src.ReadFrom(context.Background(), 1, func(_ uint64, p []byte) error {
		records = append(records, append([]byte(nil), p...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		tail      bool // a batch written after the restart follows the torn one
		wantLast  uint64
		wantCount int
	}{
		{"torn batch at the end", false, 0, 0},
		{"torn batch followed by later batches", true, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := startedMemory(t)
			if _, err := j.Append(context.Background(), records[:2]); err != nil { // the crash lost the rest
				t.Fatal(err)
			}
			if tc.tail {
				if _, err := eventlog.New(j, nil).Append(after); err != nil {
					t.Fatal(err)
				}
			}
			var c collector
			last, n, err := eventlog.Replay(context.Background(), j, 0, &c, nil)
			if err != nil {
				t.Fatal(err)
			}
			if last != tc.wantLast || n != tc.wantCount || len(c.events) != tc.wantCount {
				t.Fatalf("replayed %d events up to offset %d; want %d up to %d", n, last, tc.wantCount, tc.wantLast)
			}
			if tc.tail && c.events[0].Kind != engine.EventCredit {
				t.Fatalf("applied %v", c.events[0].Kind)
			}
		})
	}
	// The whole split batch replays whole.
	var c collector
	if _, n, err := eventlog.Replay(context.Background(), src, 0, &c, nil); err != nil || n != len(big) {
		t.Fatalf("%d events, %v", n, err)
	}
}
