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
	l := eventlog.New(j)
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
