package engine

import "sync"

// Journal makes batches of events durable. The engine declares it; persistence/eventlog
// (over the file or Kafka journal of persistence/journal) and MemJournal satisfy it.
//
// Runners of different symbols share accounts, so one batch may depend on another
// runner's batch (a credit, or trade proceeds, spent by an order on another symbol). The
// runners call the journal concurrently, each for its own batches, but a runner hands a
// batch over only after every batch of another runner that it depends on was handed
// over (sequence.go): the journal receives the batches in an order that is a valid
// serial order of the state changes, and a cause is never journaled after its effect.
//
// A Journal that is only a Journal has Append called by each runner in turn for its own
// batches, which are then durable; it suits tests and tools. A journal that also
// implements OrderedJournal gets Enqueue, then Wait on the runner's completion stage,
// so a runner overlaps its waits with running and one group commit covers many batches.
//
// Append makes batch durable and returns the journal's position of its last event
// (offsets grow with every append; the engine only compares them). batch is valid only
// during the call: copy or encode it before returning. Within one symbol (one
// Event.Symbol) batches arrive in sequence order. Calls from different runners may be
// concurrent. A non-nil error is fatal: the engine stops accepting commands
// (ErrUnavailable) and the commands of the failed batch are answered with ErrUnavailable.
type Journal interface {
	Append(batch []Event) (lastOffset uint64, err error)
}

// OrderedJournal is a Journal that separates fixing a batch's place in the journal from
// waiting for it to be durable. Enqueue assigns the batch its offsets and returns without
// waiting for durability; it must be safe for concurrent use, and a batch enqueued after
// another Enqueue returned must come after it (the engine relies on that for causal
// order). The runner then goes on with its next batch; its completion goroutine calls
// Wait on the Pending exactly once, one symbol's Pendings in Enqueue order, and answers
// the batch's commands only when Wait returns nil (a runner has at most a few batches
// between Enqueue and the end of Wait). Batches must become durable in Enqueue order: if
// one fails, every batch enqueued after it must fail too.
//
// An empty batch is a sync point: its Wait returns once every batch enqueued before it
// is durable. The engine enqueues one to answer a rejection that read another runner's
// change only once that change is durable.
//
// batch stays valid and unchanged from Enqueue until Wait returns (an implementation may
// keep it until then, e.g. to publish it once durable). An error from Enqueue or Wait is
// fatal, as for Append.
type OrderedJournal interface {
	Journal
	Enqueue(batch []Event) (Pending, error)
}

// Pending is a batch an OrderedJournal has ordered but not necessarily made durable.
type Pending interface {
	// Wait blocks until the batch is durable and returns the offset of its last event,
	// or the error that keeps it from being durable. It is called exactly once.
	Wait() (lastOffset uint64, err error)
}

// durable is the Pending of a batch that was durable as soon as it was enqueued.
type durable struct{ off uint64 }

var durables = sync.Pool{New: func() any { return new(durable) }}

func newDurable(off uint64) *durable {
	d := durables.Get().(*durable)
	d.off = off
	return d
}

func (d *durable) Wait() (uint64, error) {
	off := d.off
	durables.Put(d)
	return off, nil
}

// MemJournal is an in-memory Journal, for tests and for running without persistence.
// Its offsets are 1-based positions in Events.
type MemJournal struct {
	mu     sync.Mutex
	events []Event
}

var _ OrderedJournal = (*MemJournal)(nil)

// Append copies batch.
func (j *MemJournal) Append(batch []Event) (uint64, error) {
	j.mu.Lock()
	j.events = append(j.events, batch...)
	n := uint64(len(j.events))
	j.mu.Unlock()
	return n, nil
}

// Enqueue copies batch; it is durable at once.
func (j *MemJournal) Enqueue(batch []Event) (Pending, error) {
	n, _ := j.Append(batch)
	return newDurable(n), nil
}

// Events returns a copy of every event appended so far, in append order.
func (j *MemJournal) Events() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...)
}

// Len returns the number of events appended.
func (j *MemJournal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.events)
}

// Reset drops the stored events (benchmarks use it to bound memory).
func (j *MemJournal) Reset() {
	j.mu.Lock()
	j.events = j.events[:0]
	j.mu.Unlock()
}

// DiscardJournal accepts and drops every batch; offsets count events. For benchmarks.
type DiscardJournal struct {
	mu sync.Mutex
	n  uint64
}

var _ OrderedJournal = (*DiscardJournal)(nil)

// Append counts batch.
func (j *DiscardJournal) Append(batch []Event) (uint64, error) {
	j.mu.Lock()
	j.n += uint64(len(batch))
	n := j.n
	j.mu.Unlock()
	return n, nil
}

// Enqueue counts batch; it is "durable" at once.
func (j *DiscardJournal) Enqueue(batch []Event) (Pending, error) {
	n, _ := j.Append(batch)
	return newDurable(n), nil
}
