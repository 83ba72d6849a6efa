package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Causal order without a global lock.
//
// Runners of different symbols share accounts, so one runner's batch may depend on
// another's: an order spends a credit, trade proceeds or a release made by another
// runner, or a rejection reads an order or a balance another runner just changed. The
// journal must never hold such an effect before its cause. Each runner therefore numbers
// its batches (seqState.batch) and publishes the last one it has handed to the journal
// (enqueued) and the last one known durable (durable). Under an account's mutex a runner
// stamps the account with the number of the batch that changes it (touch: marks, one per
// runner). A command whose outcome depends on an account's state (an order's reserve or
// its rejection, a debit) first calls follow on that account: for every other runner
// whose stamp is not yet enqueued, the runner hands the commands it has run so far in
// this batch to the journal as a batch of their own, waits until that runner has
// enqueued the stamped batch, and only then runs the command. The command's batch is
// thus enqueued after its causes, and since an OrderedJournal makes batches durable in
// Enqueue order, it is durable only after them. If the command's batch ends without
// events (a rejection) while a cause is not yet durable, the runner enqueues the empty
// batch anyway: its Pending resolves once everything enqueued before it is durable, so
// the rejection is answered only then.
//
// Waiting cannot deadlock: a runner waits only at the start of a command, after it has
// handed on everything it ran before (so nothing another runner waits for is held by a
// waiting runner), and the batch it waits for is being run or enqueued by a runner that
// is not waiting for it in turn. Matching of different symbols runs in parallel; runners
// meet only when they touch the same account within one batch's time.

// seqState is one runner's part of the causal ordering.
type seqState struct {
	idx int         // this runner's index in all and in account.marks
	all []*seqState // every runner's state, by index

	batch uint64 // runner only: number of the batch being run (from 1)
	sync  bool   // runner only: the batch read a cause that may not be durable yet
	split func() // runner: hand on the commands run so far in this batch

	enqueued atomic.Uint64 // last batch handed to the journal (or given up after a failure)
	durable  atomic.Uint64 // last batch whose events are known durable

	waiters atomic.Int32
	mu      sync.Mutex
	cond    sync.Cond
}

func newSeqStates(n int) []*seqState {
	all := make([]*seqState, n)
	for i := range all {
		q := &seqState{idx: i, all: all, batch: 1}
		q.cond.L = &q.mu
		all[i] = q
	}
	return all
}

// published records that batch no was handed to the journal and wakes the runners
// waiting for it.
func (q *seqState) published(no uint64) {
	q.enqueued.Store(no)
	if q.waiters.Load() > 0 {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

// madeDurable records that every batch up to no is durable.
func (q *seqState) madeDurable(no uint64) {
	for {
		cur := q.durable.Load()
		if no <= cur || q.durable.CompareAndSwap(cur, no) {
			return
		}
	}
}

// await blocks until batch no of q was handed to the journal.
func (q *seqState) await(no uint64) {
	for i := 0; i < 64; i++ {
		if q.enqueued.Load() >= no {
			return
		}
		runtime.Gosched()
	}
	q.waiters.Add(1)
	q.mu.Lock()
	for q.enqueued.Load() < no {
		q.cond.Wait()
	}
	q.mu.Unlock()
	q.waiters.Add(-1)
}

// touch stamps a as changed by the batch the cache's runner is running. The caller
// holds a.mu. Without a runner (Apply, tests driving a core) it does nothing.
func (c *accountCache) touch(a *account) {
	q := c.sq
	if q == nil {
		return
	}
	if a.marks == nil {
		a.marks = make([]uint64, len(q.all))
	}
	a.marks[q.idx] = q.batch
}

// follow makes the command being run come after every change another runner made to a
// in the journal (see above), then stamps a. The caller holds a.mu; follow may release
// and retake it, so the caller must read a's state only after it returns. It must be
// called before the command emits any event.
func (c *accountCache) follow(a *account) {
	q := c.sq
	if q == nil {
		return
	}
	for {
		var dep *seqState
		var need uint64
		for i, m := range a.marks {
			if i == q.idx || m == 0 {
				continue
			}
			o := q.all[i]
			if m > o.enqueued.Load() {
				dep, need = o, m
				break
			}
			if m > o.durable.Load() {
				q.sync = true
			}
		}
		if dep == nil {
			break
		}
		a.mu.Unlock()
		q.split()
		dep.await(need)
		q.sync = true
		a.mu.Lock()
	}
	c.touch(a)
}
