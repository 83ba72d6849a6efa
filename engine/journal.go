package engine

import "sync"

// Journal makes batches of events durable. The engine declares it; persistence/journal
// (file, Kafka) and MemJournal satisfy it.
//
// Every runner calls Append from its own goroutine, so Append must be safe for concurrent
// use; an implementation may hold a caller until a group commit covering its batch is
// durable (fsync, acks=all) and share one commit among all runners. batch is valid only
// during the call: copy or encode it before returning. Within one symbol (one Event.Symbol)
// batches arrive in sequence order; across symbols in any order. lastOffset is the
// journal's position of the batch's last event (offsets grow with every append; the engine
// only compares them). A non-nil error is fatal: the engine stops accepting commands
// (ErrUnavailable) and the commands of the failed batch are answered with ErrUnavailable.
type Journal interface {
	Append(batch []Event) (lastOffset uint64, err error)
}

// MemJournal is an in-memory Journal, for tests and for running without persistence.
// Its offsets are 1-based positions in Events.
type MemJournal struct {
	mu     sync.Mutex
	events []Event
}

// Append copies batch.
func (j *MemJournal) Append(batch []Event) (uint64, error) {
	j.mu.Lock()
	j.events = append(j.events, batch...)
	n := uint64(len(j.events))
	j.mu.Unlock()
	return n, nil
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

// Append counts batch.
func (j *DiscardJournal) Append(batch []Event) (uint64, error) {
	j.mu.Lock()
	j.n += uint64(len(batch))
	n := j.n
	j.mu.Unlock()
	return n, nil
}
