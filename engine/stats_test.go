package engine

import "testing"

func TestCommandCountsAndRings(t *testing.T) {
	e, err := New(Config{Journal: &DiscardJournal{}, RingSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	a := acc(1)
	cmds := []Command{
		{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1 << 40, TransferID: tid(1)},
		{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1 << 40, TransferID: tid(1)}, // ALREADY_APPLIED
		{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(1), Side: Buy, Type: Limit, Price: 150000, Qty: 100},
		{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(2), Side: Buy, Type: Limit, Price: 0, Qty: 100},      // INVALID_PRICE
		{Kind: CmdPlace, Symbol: "NOPE-NGN", Account: a, OrderID: oid(3), Side: Buy, Type: Limit, Price: 150000, Qty: 100}, // before a runner
		{Kind: CmdCancel, Symbol: "USDT-NGN", Account: a, OrderID: oid(1)},
	}
	for i := range cmds {
		if _, err := e.Submit(&cmds[i]); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]uint64{}
	for _, c := range e.CommandCounts(nil) {
		got[c.Kind.String()+"/"+c.Code.String()] = c.N
	}
	for key, want := range map[string]uint64{
		"credit/OK": 1, "credit/ALREADY_APPLIED": 1, "place/OK": 1, "place/INVALID_PRICE": 1,
		"place/UNKNOWN_SYMBOL": 1, "cancel/OK": 1,
	} {
		if got[key] != want {
			t.Errorf("%s = %d, want %d (all %v)", key, got[key], want, got)
		}
	}
	rings := e.Rings(nil)
	if len(rings) != len(e.Pairs())+1 {
		t.Fatalf("%d rings for %d pairs", len(rings), len(e.Pairs()))
	}
	for _, r := range rings {
		if r.Capacity != 8 || r.Depth != 0 || r.Busy != 0 {
			t.Errorf("ring %+v, want capacity 8, empty, never busy", r)
		}
	}
}

// TestRingsBusy fills a ring whose runner does not run: the depth reaches the capacity
// and the next submission is an ErrBusy the ring counts.
func TestRingsBusy(t *testing.T) {
	e, err := New(Config{Journal: &DiscardJournal{}, RingSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	e.state.Store(stateRunning) // accept commands without starting the runners
	defer e.state.Store(stateNew)
	w := NewWaiter()
	cmd := Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: acc(1), OrderID: oid(1), Side: Buy, Type: Limit, Price: 150000, Qty: 100}
	for i := 0; i < 4; i++ {
		if err := e.SubmitAsync(&cmd, w); err != nil {
			t.Fatal(i, err)
		}
	}
	if err := e.SubmitAsync(&cmd, w); err != ErrBusy {
		t.Fatalf("fifth submission: %v, want ErrBusy", err)
	}
	for _, r := range e.Rings(nil) {
		want := RingStats{Symbol: r.Symbol, Capacity: 4}
		if r.Symbol == "USDT-NGN" {
			want.Depth, want.Busy = 4, 1
		}
		if r != want {
			t.Errorf("ring %+v, want %+v", r, want)
		}
	}
}
