package engine

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

func placeCmd(a AccountID, sym string, id uint64, client string) Command {
	return Command{Kind: CmdPlace, Symbol: sym, Account: a, OrderID: oid(id), Side: Buy, Type: Limit,
		Price: 1500 * px, Qty: one, ClientOrderID: client}
}

// TestClientOrderIDUnique: a client order id is unique per account among open and
// retained closed orders, across symbols; it is free again once its order is forgotten.
func TestClientOrderIDUnique(t *testing.T) {
	x := newTC(t, 2) // two closed orders retained per symbol
	a, b := acc(1), acc(2)
	x.credit(a, NGN, 1e6*ngn)
	x.credit(b, NGN, 1e6*ngn)

	if r := x.exec(placeCmd(a, "USDT-NGN", 1, "k1")); r.Code != OK {
		t.Fatal(r.Code)
	}
	for _, tc := range []struct {
		name string
		cmd  Command
		want ResultCode
	}{
		{"same symbol", placeCmd(a, "USDT-NGN", 2, "k1"), RejectDuplicateClientOrderID},
		{"other symbol", placeCmd(a, "USDC-NGN", 3, "k1"), RejectDuplicateClientOrderID},
		{"other account", placeCmd(b, "USDT-NGN", 4, "k1"), OK},
		{"other id", placeCmd(a, "USDT-NGN", 5, "k2"), OK},
		{"no id twice (1)", placeCmd(a, "USDT-NGN", 6, ""), OK},
		{"no id twice (2)", placeCmd(a, "USDT-NGN", 7, ""), OK},
		{"too long", placeCmd(a, "USDT-NGN", 8, string(make([]byte, 256))), RejectInvalidCommand},
	} {
		r := x.exec(tc.cmd)
		if r.Code != tc.want {
			t.Fatalf("%s: %v, want %v", tc.name, r.Code, tc.want)
		}
		if tc.want == RejectDuplicateClientOrderID && (r.OrderID != oid(1) || r.State != Open) {
			t.Fatalf("%s: result %+v does not name the existing order", tc.name, r)
		}
	}
	x.check()

	// Closed but retained: still taken, and the answer carries the closed state.
	if r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(1)}); r.Code != OK {
		t.Fatal(r.Code)
	}
	r := x.exec(placeCmd(a, "USD-NGN", 9, "k1"))
	if r.Code != RejectDuplicateClientOrderID || r.OrderID != oid(1) || r.State != Cancelled || r.Reason != ReasonUser {
		t.Fatalf("retained closed order: %+v", r)
	}
	// Two more closed orders on USDT-NGN evict order 1: the id is free again.
	for _, id := range []uint64{5, 6} {
		if r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(id)}); r.Code != OK {
			t.Fatal(r.Code)
		}
	}
	if r := x.exec(placeCmd(a, "USD-NGN", 10, "k1")); r.Code != OK {
		t.Fatalf("after eviction: %v", r.Code)
	}
	// Replay of the journal, in any interleaving of its streams, rebuilds the same map:
	// the id is taken by order 10 now (some interleavings accept order 10 before the
	// events that evicted order 1).
	for seed := uint64(1); seed <= 32; seed++ {
		c := replay(t, x.events, 2, rand.New(rand.NewPCG(seed, 2)))
		if id, ok := c.orderIDByClientID(a, "k1"); !ok || id != oid(10) || len(c.accts.get(a).clientDups) != 0 {
			t.Fatalf("seed %d: replayed index: %x %v, %d extra holders", seed, id, ok, len(c.accts.get(a).clientDups))
		}
	}
	x.check()
}

// TestClientOrderIDEngineAPI: OrderByClientID, cancel by client order id, and uniqueness
// surviving a crash between the journal write and the answer (recovery from the journal
// alone, and from a snapshot plus the journal's tail).
func TestClientOrderIDEngineAPI(t *testing.T) {
	j := &MemJournal{}
	e := newEngine(t, j, 64)
	a := acc(1)
	if r, err := e.Submit(&Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1e6 * ngn, TransferID: tid(1)}); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
	c1 := placeCmd(a, "USDT-NGN", 1, "retry-me")
	if r, err := e.Submit(&c1); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
	v, ok := e.OrderByClientID(a, "retry-me")
	if !ok || v.ID != oid(1) || v.State != Open || v.Symbol != "USDT-NGN" {
		t.Fatalf("%+v %v", v, ok)
	}
	if _, ok := e.OrderByClientID(a, "nope"); ok {
		t.Fatal("unknown client id found")
	}
	if _, ok := e.OrderByClientID(acc(2), "retry-me"); ok {
		t.Fatal("another account's client id found")
	}
	snap, snapOff, err := e.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	c2 := placeCmd(a, "USDC-NGN", 2, "after-snapshot")
	if r, err := e.Submit(&c2); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}

	// "Kill" now: the journal holds both placements, whatever the callers received.
	events := j.Events()
	recoveries := map[string]func() *Engine{
		"journal": func() *Engine {
			r, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
			if err := r.Apply(events); err != nil {
				t.Fatal(err)
			}
			return r
		},
		"snapshot+tail": func() *Engine {
			r, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
			if _, err := r.Restore(snap); err != nil {
				t.Fatal(err)
			}
			if err := r.Apply(events[snapOff:]); err != nil {
				t.Fatal(err)
			}
			return r
		},
	}
	for name, recover := range recoveries {
		t.Run(name, func(t *testing.T) {
			r := recover()
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			for _, c := range []Command{c1, c2} {
				retry := c
				retry.OrderID = oid(99) // a retry with a fresh order id
				res, err := r.Submit(&retry)
				if err != nil || res.Code != RejectDuplicateClientOrderID || res.OrderID != c.OrderID {
					t.Fatalf("retry of %q after recovery: %+v %v", c.ClientOrderID, res, err)
				}
				if v, ok := r.OrderByClientID(a, c.ClientOrderID); !ok || v.ID != c.OrderID {
					t.Fatalf("%+v %v", v, ok)
				}
			}
		})
	}

	// Cancel by client order id.
	res, err := e.Submit(&Command{Kind: CmdCancel, Account: a, ClientOrderID: "after-snapshot"})
	if err != nil || res.Code != OK || res.OrderID != oid(2) || res.State != Cancelled {
		t.Fatalf("cancel by client id: %+v %v", res, err)
	}
	res, err = e.Submit(&Command{Kind: CmdCancel, Account: a, ClientOrderID: "after-snapshot"})
	if err != nil || res.Code != RejectNotCancellable || res.OrderID != oid(2) {
		t.Fatalf("second cancel by client id: %+v %v", res, err)
	}
	res, err = e.Submit(&Command{Kind: CmdCancel, Account: a, ClientOrderID: "never-used"})
	if err != nil || res.Code != RejectUnknownOrder {
		t.Fatalf("cancel of an unknown client id: %+v %v", res, err)
	}
}

// TestClientOrderIDConcurrentSymbols: runners of two symbols place the same client order
// ids for one account at once; each id is accepted exactly once, and the duplicate names
// the accepted order. Run with -race.
func TestClientOrderIDConcurrentSymbols(t *testing.T) {
	e := newEngine(t, &MemJournal{}, 1024)
	a := acc(1)
	if r, err := e.Submit(&Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1e9 * ngn, TransferID: tid(1)}); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
	const n = 300
	symbols := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}
	results := make([][]Result, len(symbols))
	var wg sync.WaitGroup
	for s, sym := range symbols {
		results[s] = make([]Result, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := NewWaiter()
			for i := 0; i < n; i++ {
				c := placeCmd(a, sym, uint64(s*n+i+1), "same-"+strconv.Itoa(i))
				for {
					if err := e.SubmitAsync(&c, w); err == nil {
						break
					}
				}
				results[s][i], _ = w.Wait()
			}
		}()
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		var winner OrderID
		wins := 0
		for s := range symbols {
			if r := results[s][i]; r.Code == OK {
				wins++
				winner = r.OrderID
			}
		}
		if wins != 1 {
			t.Fatalf("client id %d accepted %d times", i, wins)
		}
		for s := range symbols {
			if r := results[s][i]; r.Code != OK && (r.Code != RejectDuplicateClientOrderID || r.OrderID != winner) {
				t.Fatalf("client id %d on %s: %+v (winner %x)", i, symbols[s], r, winner)
			}
		}
		if v, ok := e.OrderByClientID(a, "same-"+strconv.Itoa(i)); !ok || v.ID != winner {
			t.Fatalf("client id %d: view %+v", i, v)
		}
	}
}
