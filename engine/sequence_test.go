package engine

import (
	"sync"
	"testing"
	"time"
)

// stallJournal is a gateJournal whose Enqueue of the first batch matching hold blocks
// until release is closed: a runner descheduled while handing a batch to the journal.
type stallJournal struct {
	*gateJournal
	once    sync.Once
	holding chan struct{}
	release chan struct{}
	arm     func() // start holding (the set-up's batches pass)
	freed   sync.Once
}

// free lets the held batch through (once); tests also register it as a cleanup so a
// failing test does not leave a runner stuck.
func (j *stallJournal) free() { j.freed.Do(func() { close(j.release) }) }

func newStallJournal(auto bool, hold func(batch []Event) bool) *stallJournal {
	j := &stallJournal{gateJournal: newGateJournal(auto), holding: make(chan struct{}), release: make(chan struct{})}
	var armed sync.Mutex
	on := false
	j.stall = func(batch []Event) {
		armed.Lock()
		ok := on
		armed.Unlock()
		if ok && hold(batch) {
			j.once.Do(func() {
				close(j.holding)
				<-j.release
			})
		}
	}
	j.arm = func() { armed.Lock(); on = true; armed.Unlock() }
	return j
}

func fund(t *testing.T, e *Engine, a AccountID, asset Asset, amount int64, xfer uint64) {
	t.Helper()
	if r, err := e.Submit(&Command{Kind: CmdCredit, Account: a, Asset: asset, Amount: amount, TransferID: tid(xfer)}); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
}

func submit(t *testing.T, e *Engine, c Command) *Waiter {
	t.Helper()
	w := NewWaiter()
	if err := e.SubmitAsync(&c, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func isSymbol(sym string) func([]Event) bool {
	return func(b []Event) bool { return len(b) > 0 && b[0].Symbol == sym }
}

// TestRunnersMatchInParallel: while one symbol's runner is stuck handing a batch to the
// journal, the other symbols' runners go on running and journaling commands of other
// accounts. Under a global sequencer lock they waited.
func TestRunnersMatchInParallel(t *testing.T) {
	j := newStallJournal(true, isSymbol("USDT-NGN"))
	e := newEngine(t, j, 64)
	t.Cleanup(j.free)
	a, b := acc(1), acc(2)
	fund(t, e, a, NGN, 1e6*ngn, 1)
	fund(t, e, b, NGN, 1e6*ngn, 2)
	j.arm()
	wa := submit(t, e, placeCmd(a, "USDT-NGN", 1, ""))
	<-j.holding
	for i, sym := range []string{"USDC-NGN", "USD-NGN"} {
		w := submit(t, e, placeCmd(b, sym, uint64(10+i), ""))
		if !answered(w, 2*time.Second) {
			t.Fatalf("%s waited for USDT-NGN's journal hand-off", sym)
		}
		if r, err := w.Wait(); err != nil || r.Code != OK {
			t.Fatal(r, err)
		}
	}
	if answered(wa, 0) {
		t.Fatal("the stalled batch was answered")
	}
	j.free()
	if r, err := wa.Wait(); err != nil || r.Code != OK {
		t.Fatal(r, err)
	}
}

// TestDependentCommandSplitsBatch: a runner's batch holds an order of an independent
// account and then an order spending a credit whose batch the funds runner has not
// handed to the journal yet. The runner hands the first order on at once (it is
// answered), waits for the credit, and journals the dependent order after it.
func TestDependentCommandSplitsBatch(t *testing.T) {
	j := newStallJournal(true, func(b []Event) bool { return len(b) > 0 && b[0].Kind == EventCredit })
	e := newEngine(t, j, 64)
	t.Cleanup(j.free)
	a, b := acc(1), acc(2)
	fund(t, e, b, NGN, 1e6*ngn, 1)
	j.arm()
	wc := submit(t, e, Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1500 * ngn, TransferID: tid(2)})
	<-j.holding // the credit is applied in memory, its batch not handed over
	wb := submit(t, e, placeCmd(b, "USDT-NGN", 1, ""))
	wa := submit(t, e, placeCmd(a, "USDT-NGN", 2, ""))
	if !answered(wb, 2*time.Second) {
		t.Fatal("the independent order waited for the credit")
	}
	if answered(wa, 20*time.Millisecond) {
		t.Fatal("the order spending the credit was answered before the credit was journaled")
	}
	j.free()
	for _, w := range []*Waiter{wc, wa, wb} {
		if r, err := w.Wait(); err != nil || r.Code != OK {
			t.Fatal(r, err)
		}
	}
	ev := j.Events()
	credit, spend := -1, -1
	for i := range ev {
		switch {
		case ev[i].Kind == EventCredit && ev[i].Account == a:
			credit = i
		case ev[i].Kind == EventAccepted && ev[i].Account == a:
			spend = i
		}
	}
	if credit < 0 || spend < credit {
		t.Fatalf("journal order: %v (credit %d, spend %d)", kinds(ev), credit, spend)
	}
	if err := checkPrefixes(ev); err != nil {
		t.Fatal(err)
	}
}

// TestRejectionWaitsForDurableCause: a rejection that reads another symbol's change (an
// order holding the client order id, a reserve that took the balance) is answered only
// once that change is durable: a crash before that would recover a state in which the
// rejected command would have succeeded.
func TestRejectionWaitsForDurableCause(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second Command
		want   ResultCode
	}{
		{"duplicate client order id", placeCmd(acc(1), "USDC-NGN", 2, "k"), RejectDuplicateClientOrderID},
		{"insufficient funds", placeCmd(acc(1), "USDC-NGN", 2, ""), RejectInsufficientFunds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newGateJournal(false)
			e := newEngine(t, j, 64)
			t.Cleanup(func() { j.release(1 << 62) })
			a := acc(1)
			wf := submit(t, e, Command{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1500 * ngn, TransferID: tid(1)})
			waitFor(t, "the credit enqueued", func() bool { return j.enqueued() == 1 })
			j.release(1)
			if r, err := wf.Wait(); err != nil || r.Code != OK {
				t.Fatal(r, err)
			}
			first := submit(t, e, placeCmd(a, "USDT-NGN", 1, "k")) // takes all the NGN and the id
			waitFor(t, "the first order enqueued", func() bool { return j.enqueued() == 2 })
			second := submit(t, e, tc.second)
			if answered(second, 50*time.Millisecond) {
				r, _ := second.Wait()
				t.Fatalf("%v answered while the order it depends on is not durable", r.Code)
			}
			j.release(2)
			for _, w := range []*Waiter{first, second} {
				if !answered(w, 2*time.Second) {
					t.Fatal("not answered once durable")
				}
			}
			if r, err := second.Wait(); err != nil || r.Code != tc.want {
				t.Fatalf("%+v %v, want %v", r, err, tc.want)
			}
		})
	}
}
