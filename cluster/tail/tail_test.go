package tail

import (
	"context"
	"testing"
	"time"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// memory is an in-memory journal that "refreshes" to what it holds.
type memory struct{ *journal.Memory }

func (m memory) Refresh(context.Context) (uint64, error) { return m.LastOffset(), nil }

func TestTailHandsOnWholeBatchesInOrder(t *testing.T) {
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	var durable [][]engine.Event
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, func(b []engine.Event, _ uint64) {
		durable = append(durable, append([]engine.Event(nil), b...))
	})})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	acct := engine.AccountID{7}
	submit := func(c *engine.Command) {
		t.Helper()
		if res, err := eng.Submit(c); err != nil || res.Code != engine.OK {
			t.Fatalf("%+v %v", res, err)
		}
	}
	submit(&engine.Command{Kind: engine.CmdCredit, Account: acct, Asset: engine.NGN, Amount: 1e12, TransferID: engine.TransferID{1}, Time: 1})
	var got [][]engine.Event
	var advanced []uint64
	tl, err := New(Config{Journal: memory{j}, OnAdvance: func(last uint64) { advanced = append(advanced, last) },
		OnBatch: func(b []engine.Event, _ uint64) { got = append(got, append([]engine.Event(nil), b...)) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tl.Step(ctx); err != nil {
		t.Fatal(err)
	}
	for i := byte(1); i <= 3; i++ {
		submit(&engine.Command{Kind: engine.CmdPlace, Account: acct, Symbol: "USDT-NGN", OrderID: engine.OrderID{i},
			Side: engine.Buy, Type: engine.Limit, Price: engine.Price(150000 + int(i)), Qty: 100, Time: int64(i)})
	}
	if err := tl.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(durable) {
		t.Fatalf("tail got %d batches, the engine made %d durable", len(got), len(durable))
	}
	for i := range got {
		if len(got[i]) != len(durable[i]) || got[i][0] != durable[i][0] {
			t.Fatalf("batch %d: %+v, want %+v", i, got[i], durable[i])
		}
	}
	if tl.Position() != j.LastOffset() || advanced[len(advanced)-1] != j.LastOffset() {
		t.Fatalf("position %d, advanced %v, journal %d", tl.Position(), advanced, j.LastOffset())
	}

	// Run stops with its context.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tl.Run(rctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
