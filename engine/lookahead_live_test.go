package engine

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// batchWaiter counts the commands a test queued with SubmitAsync and keeps the first one
// that was not OK.
type batchWaiter struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	bad error
}

func (w *batchWaiter) Complete(r Result, err error) {
	if err == nil && r.Code != OK {
		err = errors.New(r.Code.String())
	}
	if err != nil {
		w.mu.Lock()
		if w.bad == nil {
			w.bad = err
		}
		w.mu.Unlock()
	}
	w.wg.Done()
}

// queue submits cmds without waiting between them, so the runner takes them in batches
// and looks ahead within each (lookahead.go); it retries a full ring.
func (w *batchWaiter) queue(t *testing.T, e *Engine, cmds []Command) {
	t.Helper()
	for i := range cmds {
		w.wg.Add(1)
		for {
			err := e.SubmitAsync(&cmds[i], w)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrBusy) {
				t.Fatal(err)
			}
			runtime.Gosched()
		}
	}
	w.wg.Wait()
	if w.bad != nil {
		t.Fatal(w.bad)
	}
}

// TestLookaheadOnDeepBook runs the runner's look-ahead for real (issue 33): a book deeper
// than lookaheadMin, placed and then cancelled in batches by two accounts, so the market
// prefetches from unlocked reads of the accounts' indexes while the runner works (under
// -race too: those reads are go:norace). The prefetches are hints, so the book ends empty,
// every order cancelled, and the journal replays to the live engine's state.
func TestLookaheadOnDeepBook(t *testing.T) {
	j, e, submit := startFundedPair(t)
	defer e.Stop()
	a, b := acc(1), acc(2)
	const perSide = lookaheadMin/2 + 512
	var places, cancels []Command
	for i := 0; i < perSide; i++ {
		buy, sell := oid(uint64(1000+2*i)), oid(uint64(1001+2*i))
		places = append(places,
			Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: buy, Side: Buy, Type: Limit,
				Price: 1000*px + Price(i%400)*px, Qty: one},
			Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: sell, Side: Sell, Type: Limit,
				Price: 1600*px + Price(i%400)*px, Qty: one})
		cancels = append(cancels,
			Command{Kind: CmdCancel, Symbol: "USDT-NGN", Account: a, OrderID: buy},
			Command{Kind: CmdCancel, Symbol: "USDT-NGN", Account: b, OrderID: sell})
	}
	for i := range places {
		places[i].Time = 1_700_000_001_000_000_000 + int64(i)
		cancels[i].Time = 1_700_000_002_000_000_000 + int64(i)
	}
	var w batchWaiter
	w.queue(t, e, places)
	if d, err := e.Depth("USDT-NGN", 1); err != nil || len(d.Bids) == 0 || len(d.Asks) == 0 {
		t.Fatalf("depth after the places: %+v %v", d, err)
	}
	w.queue(t, e, cancels)
	if d, err := e.Depth("USDT-NGN", 1); err != nil || len(d.Bids)+len(d.Asks) != 0 {
		t.Fatalf("depth after the cancels: %+v %v", d, err)
	}
	submit(Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: ngn, TransferID: tid(99)}) // a last batch, journaled
	e.Stop()
	replayed, err := New(Config{Journal: &MemJournal{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := replayed.Apply(j.Events()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.core.snapshot(nil, 0), replayed.core.snapshot(nil, 0)) {
		t.Fatal("the journal replays to another state than the live engine's")
	}
}
