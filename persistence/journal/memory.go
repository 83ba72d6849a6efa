package journal

import (
	"context"
	"slices"
	"sync"
)

// Memory is an in-process journal for tests of other packages. Append copies
// the payloads and is durable at once; there is no committer goroutine, so
// Start and Close only switch state. Fail makes it behave like a journal whose
// disk failed.
type Memory struct {
	mu      sync.Mutex
	records [][]byte // records[i] has offset i+1
	err     error
	started bool
	closed  bool
}

var _ Journal = (*Memory)(nil)

// NewMemory returns an empty, unstarted in-memory journal.
func NewMemory() *Memory { return &Memory{} }

// Start allows Append.
func (m *Memory) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.started = true
	return nil
}

// Fail makes every later Append return a sticky error wrapping ErrFailed and
// cause, as after a write error.
func (m *Memory) Fail(cause error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = failed("injected", cause)
	}
}

// Append stores copies of payloads.
func (m *Memory) Append(ctx context.Context, payloads [][]byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.err != nil:
		return 0, m.err
	case m.closed:
		return 0, ErrClosed
	case !m.started:
		return 0, ErrNotStarted
	}
	for _, p := range payloads {
		m.records = append(m.records, slices.Clone(p))
	}
	return uint64(len(m.records)), nil
}

// Enqueue stores copies of payloads; they are durable at once.
func (m *Memory) Enqueue(ctx context.Context, payloads [][]byte) (Ticket, error) {
	last, err := m.Append(ctx, payloads)
	if err != nil {
		return Ticket{}, err
	}
	return Ticket{last: last}, nil
}

// ReadFrom calls fn for records with offset >= from, up to the last offset at
// the time of the call.
func (m *Memory) ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error {
	m.mu.Lock()
	recs := m.records[:len(m.records):len(m.records)]
	m.mu.Unlock()
	if from == 0 {
		from = 1
	}
	for i := from - 1; i < uint64(len(recs)); i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(i+1, recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// LastOffset is the offset of the last record.
func (m *Memory) LastOffset() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.records))
}

// Err is the sticky failure set by Fail, or nil.
func (m *Memory) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Close stops Append. Records stay readable.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
