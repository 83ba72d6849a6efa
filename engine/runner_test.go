package engine

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newEngine(t testing.TB, j Journal, ring int) *Engine {
	t.Helper()
	e, err := New(Config{Journal: j, RingSize: ring, MaxBatch: 64, ClosedOrders: 256})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

// TestRunnersConcurrentProducers drives several producers over all symbols and credits
// at once (run it with -race), then checks the invariants and that the journal, in the
// order the runners appended it, rebuilds the same state.
func TestRunnersConcurrentProducers(t *testing.T) {
	j := &MemJournal{}
	e := newEngine(t, j, 256)
	producers, per := 6, 1500
	if raceEnabled {
		per = 500
	}
	var net [numAssets]int64
	var netMu sync.Mutex
	var wg sync.WaitGroup
	var busy atomic.Int64
	var missMu sync.Mutex
	var missed []OrderID
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			g := newGen(uint64(p+1), 4)
			g.next = uint64(p) << 40 // order ids unique across producers
			g.xfer = uint64(p) << 40
			w := NewWaiter()
			cmds := g.funding()
			for i := 0; i < per; i++ {
				cmds = append(cmds, g.cmd())
			}
			for i, c := range cmds {
				c.Time = int64(i)
				if err := e.SubmitAsync(&c, w); err != nil {
					if errors.Is(err, ErrBusy) {
						busy.Add(1)
						continue
					}
					t.Error(err)
					return
				}
				r, err := w.Wait()
				if err != nil {
					t.Error(err)
					return
				}
				if r.Code == OK && (c.Kind == CmdCredit || c.Kind == CmdDebit) {
					netMu.Lock()
					if c.Kind == CmdCredit {
						net[c.Asset] += c.Amount
					} else {
						net[c.Asset] -= c.Amount
					}
					netMu.Unlock()
				}
				if r.Code == OK && len(e.OpenOrders(c.Account, "", nil)) < 0 {
					t.Error("unreachable")
				}
				// An acknowledged order is visible at once, unless it has closed since and been
				// forgotten: the engine keeps the newest ClosedOrders (256 here) closed orders
				// per symbol, and the other producers (sharing accounts, so fills and
				// self-trade cancels) can close that many while this goroutine waits for a
				// core. Misses are checked against the journal at the end.
				if c.Kind == CmdPlace && r.Code == OK {
					if _, ok := e.Order(c.Account, c.OrderID); !ok {
						missMu.Lock()
						missed = append(missed, c.OrderID)
						missMu.Unlock()
					}
				}
			}
		}(p)
	}
	// readers run alongside
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range []string{"USDT-NGN", "USDC-NGN", "USD-NGN"} {
				d, err := e.Depth(s, 5)
				if err != nil {
					t.Error(err)
					return
				}
				if len(d.Bids) > 0 && len(d.Asks) > 0 && d.Bids[0].Price >= d.Asks[0].Price {
					t.Error("crossed depth")
				}
			}
			_ = e.Balances(acc(1))
			_ = e.OpenOrders(acc(2), "USDT-NGN", nil)
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	rwg.Wait()
	e.Stop()
	if err := checkCore(e.core, &net); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
	if err := rebuilt.Apply(j.Events()); err != nil {
		t.Fatal(err)
	}
	sameState(t, "journal replay", e.core, rebuilt.core)
	// Every order not found right after its answer had closed: traded or cancelled in
	// full. One the index lost while it rested would not be.
	left := map[OrderID]Qty{}
	for _, id := range missed {
		left[id] = -1
	}
	for _, ev := range j.Events() {
		switch ev.Kind {
		case EventAccepted:
			if _, ok := left[ev.OrderID]; ok {
				left[ev.OrderID] = ev.Qty
			}
		case EventTrade:
			for _, id := range []OrderID{ev.OrderID, ev.MakerOrderID} {
				if q, ok := left[id]; ok {
					left[id] = q - ev.Qty
				}
			}
		case EventCancelled:
			if q, ok := left[ev.OrderID]; ok {
				left[ev.OrderID] = q - ev.Qty
			}
		case EventDone:
			if _, ok := left[ev.OrderID]; ok {
				left[ev.OrderID] = 0
			}
		}
	}
	for id, q := range left {
		if q != 0 {
			t.Errorf("acknowledged order %x not visible, and not closed in the journal (%d left)", id, q)
		}
	}
	t.Logf("%d events, %d busy, %d acknowledged orders closed and forgotten before their producer looked", j.Len(), busy.Load(), len(missed))
}

type failJournal struct {
	MemJournal
	after int
	n     atomic.Int64
}

func (f *failJournal) Append(b []Event) (uint64, error) {
	if f.n.Add(1) > int64(f.after) {
		return 0, errors.New("disk on fire")
	}
	return f.MemJournal.Append(b)
}

func (f *failJournal) Enqueue(b []Event) (Pending, error) {
	off, err := f.Append(b)
	return failPending{off, err}, nil // fails in Wait, as a failed group commit does
}

type failPending struct {
	off uint64
	err error
}

func (p failPending) Wait() (uint64, error) { return p.off, p.err }

func TestJournalErrorFailStops(t *testing.T) {
	j := &failJournal{after: 1}
	e := newEngine(t, j, 64)
	ok := Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(1)}
	if r, err := e.Submit(&ok); err != nil || r.Code != OK || r.Offset != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	ok.TransferID = tid(2)
	if _, err := e.Submit(&ok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("failed append answered %v", err)
	}
	if !e.Failed() {
		t.Fatal("not failed")
	}
	ok.TransferID = tid(3)
	if _, err := e.Submit(&ok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after failure: %v", err)
	}
	if _, err := e.Submit(&Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: acc(1)}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("other runner after failure: %v", err)
	}
}

type blockJournal struct {
	MemJournal
	gate chan struct{}
}

func (b *blockJournal) Append(ev []Event) (uint64, error) {
	<-b.gate
	return b.MemJournal.Append(ev)
}

// Enqueue records at once; Wait blocks until the gate opens (a slow fsync).
func (b *blockJournal) Enqueue(ev []Event) (Pending, error) {
	off, _ := b.MemJournal.Append(ev)
	return blockPending{b.gate, off}, nil
}

type blockPending struct {
	gate chan struct{}
	off  uint64
}

func (p blockPending) Wait() (uint64, error) {
	<-p.gate
	return p.off, nil
}

func TestResultOnlyAfterJournalAndBusy(t *testing.T) {
	j := &blockJournal{gate: make(chan struct{})}
	e := newEngine(t, j, 4)
	w := NewWaiter()
	c := Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(1)}
	if err := e.SubmitAsync(&c, w); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.ch:
		t.Fatal("answered before the journal accepted")
	case <-time.After(20 * time.Millisecond):
	}
	// the first batch waits for durability; the runner takes on more batches until
	// pipelineDepth are in flight, then the ring fills.
	var ws []*Waiter
	var err error
	for i := 0; i < 4+pipelineDepth*4+4 && err == nil; i++ {
		wi := NewWaiter()
		c.TransferID = tid(uint64(10 + i))
		if err = e.SubmitAsync(&c, wi); err == nil {
			ws = append(ws, wi)
		}
	}
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("full ring answered %v", err)
	}
	close(j.gate)
	if r, err := w.Wait(); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
	for _, wi := range ws {
		if _, err := wi.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStopDrainsAndRefuses(t *testing.T) {
	j := &MemJournal{}
	e := newEngine(t, j, 1024)
	var ws []*Waiter
	for i := 0; i < 500; i++ {
		w := NewWaiter()
		c := Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(uint64(i))}
		if err := e.SubmitAsync(&c, w); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	e.Stop()
	for _, w := range ws {
		if _, err := w.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Submit(&Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1}); !errors.Is(err, ErrStopped) {
		t.Fatal(err)
	}
	if b := e.Balances(acc(1)); b[NGN].Available != 500 {
		t.Fatal(b)
	}
	e.Stop() // twice is fine
}

func TestSnapshotBarrierWhileRunning(t *testing.T) {
	j := &MemJournal{}
	e := newEngine(t, j, 1024)
	var wg sync.WaitGroup
	var stop atomic.Bool
	for p := 0; p < 3; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			g := newGen(uint64(50+p), 3)
			g.next, g.xfer = uint64(p)<<40, uint64(p)<<40
			w := NewWaiter()
			for _, c := range g.funding() {
				e.SubmitAsync(&c, w)
				w.Wait()
			}
			for !stop.Load() {
				c := g.cmd()
				if e.SubmitAsync(&c, w) == nil {
					w.Wait()
				}
			}
		}(p)
	}
	var snaps [][]byte
	var offs []uint64
	for i := 0; i < 5; i++ {
		time.Sleep(5 * time.Millisecond)
		s, off, err := e.Snapshot(nil)
		if err != nil {
			t.Fatal(err)
		}
		snaps, offs = append(snaps, s), append(offs, off)
	}
	stop.Store(true)
	wg.Wait()
	e.Stop()
	all := j.Events()
	for i, s := range snaps {
		// snapshot + the events after its offset == the state rebuilt from everything
		// up to that offset, and applying everything after reaches the final state.
		fromEvents, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
		if err := fromEvents.Apply(all[:offs[i]]); err != nil {
			t.Fatal(err)
		}
		restored, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
		if _, err := restored.Restore(s); err != nil {
			t.Fatal(err)
		}
		sameState(t, "snapshot at offset", fromEvents.core, restored.core)
		if err := restored.Apply(all[offs[i]:]); err != nil {
			t.Fatal(err)
		}
		sameState(t, "snapshot + tail", e.core, restored.core)
	}
	if offs[len(offs)-1] == 0 {
		t.Fatal("no progress")
	}
}

func TestViews(t *testing.T) {
	e := newEngine(t, &MemJournal{}, 64)
	a := acc(1)
	e.Submit(&Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1e6 * ngn, TransferID: tid(1)})
	e.Submit(&Command{Kind: CmdCredit, Account: a, Asset: USDT, Amount: 100 * usdt, TransferID: tid(2)})
	for i, p := range []Price{1500 * px, 1501 * px, 1499 * px} {
		r, err := e.Submit(&Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(uint64(i + 1)), Side: Sell, Type: Limit, Price: p, Qty: one, Time: int64(i)})
		if err != nil || r.Code != OK {
			t.Fatal(r, err)
		}
	}
	e.Submit(&Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(9), Side: Buy, Type: Limit, Price: 1400 * px, Qty: 2 * one, ClientOrderID: "x"})
	d, err := e.Depth("USDT-NGN", 2)
	if err != nil || len(d.Asks) != 2 || d.Asks[0].Price != 1499*px || d.Asks[1].Price != 1500*px || len(d.Bids) != 1 || d.Seq != 4 {
		t.Fatalf("%+v %v", d, err)
	}
	bid, ask, bok, aok, err := e.BestBidAsk("USDT-NGN")
	if err != nil || !bok || !aok || bid.Price != 1400*px || ask.Price != 1499*px || bid.Qty != 2*one {
		t.Fatal(bid, ask, err)
	}
	open := e.OpenOrders(a, "USDT-NGN", nil)
	if len(open) != 4 || open[0].ID != oid(1) {
		t.Fatalf("%+v", open)
	}
	r, _ := e.Submit(&Command{Kind: CmdCancel, Account: a, OrderID: oid(2)})
	if r.Code != OK {
		t.Fatal(r)
	}
	v, ok := e.Order(a, oid(2))
	if !ok || v.State != Cancelled || v.Symbol != "USDT-NGN" {
		t.Fatalf("%+v", v)
	}
	if v, _ := e.Order(a, oid(9)); v.ClientOrderID != "x" || v.Qty != 2*one {
		t.Fatalf("%+v", v)
	}
	if b := e.Balances(a); b[USDT].Locked != 2*usdt || b[NGN].Locked != 2800*ngn {
		t.Fatalf("%+v", b)
	}
	if r, _ := e.Submit(&Command{Kind: CmdCancel, Account: a, OrderID: oid(77)}); r.Code != RejectUnknownOrder {
		t.Fatal(r.Code)
	}
	if _, err := e.Depth("XYZ", 1); err == nil {
		t.Fatal("unknown symbol depth")
	}
	if err := e.Apply(nil); !errors.Is(err, ErrRunning) {
		t.Fatal(err)
	}
	_ = rand.Int
}
