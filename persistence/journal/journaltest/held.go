// Package journaltest owns test doubles of a journal's behaviour in front of a real one:
// Held, a journal whose disk stops answering on demand, for the tests that prove a stalled
// journal is a prompt answer and never a hang (the engine answers a command only once its
// batch is journaled); and Recover, the restart from an image and the journal after it.
package journaltest

import (
	"sync"
	"testing"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// Held passes appends to Inner, except while held: then each append waits until Release
// (the journal's disk stopped answering). The zero value with Inner set is ready; it is
// safe for concurrent use.
type Held struct {
	Inner engine.Journal

	mu      sync.Mutex
	shut    chan struct{} // nil: appends pass
	waiting chan struct{} // made on first use; one signal per held append, buffered 1
}

var _ engine.Journal = (*Held)(nil)

// NewHeld returns a Held over inner.
func NewHeld(inner engine.Journal) *Held { return &Held{Inner: inner} }

// Append appends b to Inner once the journal is not held.
func (h *Held) Append(b []engine.Event) (uint64, error) {
	h.mu.Lock()
	shut, w := h.shut, h.waitingLocked()
	h.mu.Unlock()
	if shut != nil {
		select {
		case w <- struct{}{}:
		default:
		}
		<-shut
	}
	return h.Inner.Append(b)
}

// Hold makes appends wait from now on, until Release.
func (h *Held) Hold() {
	h.mu.Lock()
	if h.shut == nil {
		h.shut = make(chan struct{})
	}
	h.mu.Unlock()
}

// Release lets the held appends and the later ones through (a no-op when not held).
func (h *Held) Release() {
	h.mu.Lock()
	if h.shut != nil {
		close(h.shut)
		h.shut = nil
	}
	h.mu.Unlock()
}

// Waiting receives when an append is held (at most one signal is kept): a test waits on it
// to know a command reached the journal.
func (h *Held) Waiting() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waitingLocked()
}

func (h *Held) waitingLocked() chan struct{} {
	if h.waiting == nil {
		h.waiting = make(chan struct{}, 1)
	}
	return h.waiting
}

// StartEngine starts a real engine over an in-memory journal (through eventlog, which
// calls onDurable, if not nil, with each durable batch) behind a Held, and releases the
// journal and stops the engine when the test ends.
func StartEngine(t testing.TB, onDurable func([]engine.Event, uint64)) (*engine.Engine, *Held) {
	t.Helper()
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	h := NewHeld(eventlog.New(j, onDurable))
	eng, err := engine.New(engine.Config{Journal: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Release() // the engine stops only once its journal answers
		eng.Stop()
	})
	return eng, h
}
