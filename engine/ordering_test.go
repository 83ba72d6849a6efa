package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holdJournal journals batches in the order they reach it. While armed, the first batch
// holding a credit stops before it is journaled until release is closed: the runner that
// made the credit is descheduled between running its batch and handing it over. A crash
// at any moment leaves a prefix of what was journaled.
type holdJournal struct {
	mu      sync.Mutex
	events  []Event
	armed   bool
	once    sync.Once
	holding chan struct{} // closed when the credit batch waits
	release chan struct{}
}

func newHoldJournal() *holdJournal {
	return &holdJournal{armed: true, holding: make(chan struct{}), release: make(chan struct{})}
}

func (j *holdJournal) journal(batch []Event) uint64 {
	j.mu.Lock()
	armed := j.armed
	j.mu.Unlock()
	if armed {
		for i := range batch {
			if batch[i].Kind == EventCredit {
				j.once.Do(func() {
					j.mu.Lock()
					j.armed = false
					j.mu.Unlock()
					close(j.holding)
					<-j.release
				})
				break
			}
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, batch...)
	return uint64(len(j.events))
}

func (j *holdJournal) Append(batch []Event) (uint64, error) { return j.journal(batch), nil }

// holdOrdered is holdJournal as an OrderedJournal: the hold happens inside Enqueue.
type holdOrdered struct{ *holdJournal }

func (j holdOrdered) Enqueue(batch []Event) (Pending, error) {
	return newDurable(j.journal(batch)), nil
}

func (j *holdJournal) Events() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...)
}

// checkPrefixes replays events one by one into a fresh core and fails if any prefix
// leaves a balance negative: what a crash right after that event would recover.
func checkPrefixes(events []Event) error {
	c, err := newCore(DefaultPairs(), 1<<10)
	if err != nil {
		return err
	}
	for i := range events {
		e := &events[i]
		if err := c.apply(e); err != nil {
			return fmt.Errorf("event %d: %w", i+1, err)
		}
		for k := 0; k < int(e.NDeltas); k++ {
			d := &e.Deltas[k]
			b := c.accts.get(d.Account).bal[d.Asset]
			if b.Available < 0 || b.Locked < 0 {
				return fmt.Errorf("journal prefix of %d events (%v %q seq %d): account %x %v available %d locked %d",
					i+1, e.Kind, e.Symbol, e.Seq, d.Account[12:], d.Asset, b.Available, b.Locked)
			}
		}
	}
	return nil
}

// TestCauseJournaledBeforeEffect: a credit on the funds runner, then at once an order on
// a symbol runner that spends it. Whatever the runners' timing, the order must not be
// acknowledged before the credit is journaled, the credit must come first in the journal,
// and every prefix of the journal must replay to non-negative balances.
func TestCauseJournaledBeforeEffect(t *testing.T) {
	t.Run("plain Journal (Append)", func(t *testing.T) {
		j := newHoldJournal()
		causeBeforeEffect(t, j, j)
	})
	t.Run("OrderedJournal (Enqueue, Wait)", func(t *testing.T) {
		j := newHoldJournal()
		causeBeforeEffect(t, j, holdOrdered{j})
	})
}

func causeBeforeEffect(t *testing.T, j *holdJournal, as Journal) {
	e := newEngine(t, as, 64)
	a := acc(1)
	credit := Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1500 * ngn, TransferID: tid(1)}
	wc := NewWaiter()
	if err := e.SubmitAsync(&credit, wc); err != nil {
		t.Fatal(err)
	}
	<-j.holding // the credit is applied in memory, its batch not yet journaled
	order := Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(1), Side: Buy, Type: Limit, Price: 1500 * px, Qty: one}
	wo := NewWaiter()
	if err := e.SubmitAsync(&order, wo); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wo.ch:
		wo.ch <- struct{}{} // put it back for Wait below
		if wo.err == nil && wo.res.Code == OK {
			t.Errorf("order acknowledged at offset %d while the credit that funds it was not journaled; journal: %d events",
				wo.res.Offset, len(j.Events()))
			if err := checkPrefixes(j.Events()); err != nil {
				t.Errorf("a crash now recovers: %v", err)
			}
		}
	case <-time.After(100 * time.Millisecond):
	}
	close(j.release)
	if r, err := wc.Wait(); err != nil || r.Code != OK {
		t.Fatal(r.Code, err)
	}
	ro, err := wo.Wait()
	if err != nil || ro.Code != OK {
		t.Fatal(ro.Code, err)
	}
	if err := checkPrefixes(j.Events()); err != nil {
		t.Fatal(err)
	}
	ev := j.Events()
	if len(ev) != 2 || ev[0].Kind != EventCredit || ev[1].Kind != EventAccepted {
		t.Fatalf("journal order: %v", kinds(ev))
	}
}

func kinds(ev []Event) []EventKind {
	out := make([]EventKind, len(ev))
	for i := range ev {
		out[i] = ev[i].Kind
	}
	return out
}

// gateJournal is an OrderedJournal whose durability the test controls: Enqueue records a
// batch at once, Wait returns when release has made its last offset durable (or at once
// in auto mode). A crash leaves the durable prefix.
type gateJournal struct {
	mu      sync.Mutex
	cond    sync.Cond
	events  []Event
	durable uint64
	auto    bool
	stall   func(batch []Event) // if set, runs before a batch is recorded
}

func newGateJournal(auto bool) *gateJournal {
	j := &gateJournal{auto: auto}
	j.cond.L = &j.mu
	return j
}

type gatePending struct {
	j   *gateJournal
	off uint64
}

func (j *gateJournal) Enqueue(batch []Event) (Pending, error) {
	if j.stall != nil {
		j.stall(batch)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, batch...)
	off := uint64(len(j.events))
	if j.auto {
		j.durable = off
	}
	return gatePending{j, off}, nil
}

func (p gatePending) Wait() (uint64, error) {
	p.j.mu.Lock()
	defer p.j.mu.Unlock()
	for p.j.durable < p.off {
		p.j.cond.Wait()
	}
	return p.off, nil
}

func (j *gateJournal) Append(batch []Event) (uint64, error) {
	p, _ := j.Enqueue(batch)
	return p.Wait()
}

func (j *gateJournal) release(upto uint64) {
	j.mu.Lock()
	j.durable = max(j.durable, upto)
	j.mu.Unlock()
	j.cond.Broadcast()
}

func (j *gateJournal) enqueued() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.events)
}

func (j *gateJournal) Events() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func answered(w *Waiter, d time.Duration) bool {
	select {
	case <-w.ch:
		w.ch <- struct{}{}
		return true
	case <-time.After(d):
		return false
	}
}

// TestDependentBatchesShareGroupCommit: the order that spends a credit is enqueued while
// the credit is not yet durable (so both can share one group commit), but it is answered
// only once its own batch, and so the credit before it, is durable.
func TestDependentBatchesShareGroupCommit(t *testing.T) {
	j := newGateJournal(false)
	e := newEngine(t, j, 64)
	a := acc(1)
	wc, wo := NewWaiter(), NewWaiter()
	if err := e.SubmitAsync(&Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1500 * ngn, TransferID: tid(1)}, wc); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the credit to be enqueued", func() bool { return j.enqueued() == 1 })
	if err := e.SubmitAsync(&Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(1), Side: Buy, Type: Limit, Price: 1500 * px, Qty: one}, wo); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the order to be enqueued behind the credit", func() bool { return j.enqueued() == 2 })
	if answered(wc, 20*time.Millisecond) || answered(wo, 0) {
		t.Fatal("answered before durable")
	}
	j.release(1)
	if r, err := wc.Wait(); err != nil || r.Code != OK || r.Offset != 1 {
		t.Fatal(r, err)
	}
	if answered(wo, 20*time.Millisecond) {
		t.Fatal("order answered before its batch was durable")
	}
	j.release(2)
	if r, err := wo.Wait(); err != nil || r.Code != OK || r.Offset != 2 {
		t.Fatal(r, err)
	}
	if ev := j.Events(); ev[0].Kind != EventCredit || ev[1].Kind != EventAccepted {
		t.Fatalf("journal order: %v", kinds(ev))
	}
}

// TestConcurrentJournalPrefixesReplay: producers on every symbol credit accounts shared by
// all symbols with exactly what an order needs and place that order at once, trade with
// each other, and debit what is left over so that no account keeps a cushion. Every
// prefix of the resulting journal must replay to non-negative balances, and the whole
// journal to the live state.
func TestConcurrentJournalPrefixesReplay(t *testing.T) {
	j := newGateJournal(true)
	// A runner handing over a batch that makes balance available is sometimes slow to
	// do so: the window in which another runner could spend that balance first.
	j.stall = func(batch []Event) {
		if len(batch) > 0 && batch[0].Symbol == "" && batch[0].Seq%3 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	e := newEngine(t, j, 256)
	const producers = 4
	per := 600
	if raceEnabled {
		per = 200
	}
	syms := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			r := newGen(uint64(100+p), 1).r
			wc, wo := NewWaiter(), NewWaiter()
			for i := 0; i < per; i++ {
				id := uint64(p)<<32 | uint64(i)
				a := acc(1 + r.IntN(3)) // shared by every producer and symbol
				sym := syms[(p+i)%len(syms)]
				pair, _ := e.Pair(sym)
				pc, _ := newPair(pair)
				side := Side(1 + r.IntN(2))
				price := Price(150000 + r.IntN(21) - 10)
				qty := Qty(100 + r.IntN(4)*100)
				credit := Command{Kind: CmdCredit, Account: a, TransferID: tid(id)}
				if side == Buy {
					credit.Asset, credit.Amount = pc.Quote, pc.notional(price, qty)
				} else {
					credit.Asset, credit.Amount = pc.Base, pc.baseUnits(qty)
				}
				order := Command{Kind: CmdPlace, Symbol: sym, Account: a, OrderID: oid(id), Side: side, Type: Limit, Price: price, Qty: qty}
				if r.IntN(3) == 0 {
					order.TIF = IOC
				}
				if e.SubmitAsync(&credit, wc) != nil || e.SubmitAsync(&order, wo) != nil {
					t.Error("busy")
					return
				}
				wc.Wait()
				wo.Wait()
				if r.IntN(4) == 0 { // take the cushion away
					b := e.Balances(a)
					for as := NGN; as < numAssets; as++ {
						if b[as].Available > 0 {
							e.Submit(&Command{Kind: CmdDebit, Account: a, Asset: as, Amount: b[as].Available, TransferID: tid(1<<62 | id<<3 | uint64(as))})
						}
					}
				}
				if r.IntN(16) == 0 {
					e.Submit(&Command{Kind: CmdCancelAll, Symbol: sym, Account: a})
				}
			}
		}(p)
	}
	wg.Wait()
	e.Stop()
	ev := j.Events()
	if err := checkPrefixes(ev); err != nil {
		t.Fatal(err)
	}
	if err := checkCore(e.core, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := New(Config{Journal: &MemJournal{}, ClosedOrders: 256})
	if err := rebuilt.Apply(ev); err != nil {
		t.Fatal(err)
	}
	sameState(t, "journal replay", e.core, rebuilt.core)
	t.Logf("%d events", len(ev))
}

// orderedCompleter records the order in which commands are answered.
type orderedCompleter struct {
	id  int
	mu  *sync.Mutex
	log *[]int
	w   *Waiter
}

func (c orderedCompleter) Complete(r Result, err error) {
	c.mu.Lock()
	*c.log = append(*c.log, c.id)
	c.mu.Unlock()
	c.w.Complete(r, err)
}

// TestPipelinedBatchesOneSymbol: a runner enqueues its next batch while the previous one
// is not yet durable (two batches of one symbol in flight), yet answers each command only
// once its batch is durable, and in order.
func TestPipelinedBatchesOneSymbol(t *testing.T) {
	j := newGateJournal(false)
	e := newEngine(t, j, 64)
	var mu sync.Mutex
	var order []int
	const n = 3
	ws := make([]*Waiter, n)
	for i := range ws {
		ws[i] = NewWaiter()
		c := Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(uint64(i + 1))}
		if err := e.SubmitAsync(&c, orderedCompleter{i, &mu, &order, ws[i]}); err != nil {
			t.Fatal(err)
		}
		// each credit is its own batch: wait until it is enqueued before the next one.
		waitFor(t, "batch enqueued while earlier ones are not durable", func() bool { return j.enqueued() == i+1 })
	}
	for i := range ws {
		if answered(ws[i], 20*time.Millisecond) {
			t.Fatalf("command %d answered before anything was durable", i)
		}
	}
	// make the first two durable: they are answered, the third is not.
	j.release(2)
	for i := 0; i < 2; i++ {
		r, err := ws[i].Wait()
		if err != nil || r.Code != OK || r.Offset != uint64(i+1) {
			t.Fatalf("command %d: %+v %v", i, r, err)
		}
	}
	if answered(ws[2], 20*time.Millisecond) {
		t.Fatal("third command answered before its batch was durable")
	}
	j.release(3)
	if r, err := ws[2].Wait(); err != nil || r.Offset != 3 {
		t.Fatalf("third: %+v %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, []int{0, 1, 2}) {
		t.Fatalf("answered in order %v", order)
	}
}

// TestPipelinedJournalErrorFailsLaterBatches: when a batch's Wait fails, it and every
// batch of the runner behind it in the pipeline are answered ErrUnavailable, even if
// those were enqueued before the failure showed.
func TestPipelinedJournalErrorFailsLaterBatches(t *testing.T) {
	j := &errGateJournal{gate: make(chan struct{})}
	e := newEngine(t, j, 64)
	ws := make([]*Waiter, 3)
	for i := range ws {
		ws[i] = NewWaiter()
		c := Command{Kind: CmdCredit, Account: acc(1), Asset: NGN, Amount: 1, TransferID: tid(uint64(i + 1))}
		if err := e.SubmitAsync(&c, ws[i]); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "batch enqueued", func() bool { return int(j.n.Load()) == i+1 })
	}
	close(j.gate) // the first batch fails; the later ones would be durable
	for i, w := range ws {
		if _, err := w.Wait(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("command %d answered %v", i, err)
		}
	}
	if !e.Failed() {
		t.Fatal("not failed")
	}
}

// errGateJournal fails the first batch's Wait once gate opens; later ones succeed.
type errGateJournal struct {
	gate chan struct{}
	n    atomic.Int64
}

type errGatePending struct {
	j *errGateJournal
	i int64
}

func (j *errGateJournal) Enqueue(b []Event) (Pending, error) {
	return errGatePending{j, j.n.Add(1)}, nil
}

func (j *errGateJournal) Append(b []Event) (uint64, error) {
	p, _ := j.Enqueue(b)
	return p.Wait()
}

func (p errGatePending) Wait() (uint64, error) {
	<-p.j.gate
	if p.i == 1 {
		return 0, errors.New("disk on fire")
	}
	return uint64(p.i), nil
}
