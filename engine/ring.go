package engine

import "sync/atomic"

// Completer receives a command's result once its batch is journaled (or err is one of
// ErrUnavailable, ErrStopped). Complete runs on the runner's completion goroutine, or on
// the runner itself when nothing is in flight (one symbol's commands in order either way):
// it must be quick and must not call the engine.
type Completer interface {
	Complete(r Result, err error)
}

type slot struct {
	seq  atomic.Uint64
	cmd  Command
	done Completer
}

// ring is a bounded multi-producer single-consumer queue (Vyukov's sequence-numbered
// slots): producers claim a position with one CAS on tail and publish by storing the
// slot's sequence; the consumer reads published slots in order and frees them in batches.
type ring struct {
	_     [64]byte
	tail  atomic.Uint64 // next position producers claim
	_     [56]byte
	head  uint64        // next position the consumer reads (consumer only)
	done  atomic.Uint64 // head as last published by release, for depth readers
	mask  uint64
	slots []slot
}

func newRing(size int) *ring {
	n := 1
	for n < size {
		n <<= 1
	}
	r := &ring{mask: uint64(n - 1), slots: make([]slot, n)}
	for i := range r.slots {
		r.slots[i].seq.Store(uint64(i))
	}
	return r
}

// closedBit in tail marks a closed ring: no claim succeeds after it is set.
const closedBit = 1 << 63

// push copies cmd into the ring; it fails at once with ErrBusy if the ring is full and
// with ErrStopped if it is closed.
func (r *ring) push(cmd *Command, done Completer) error {
	for {
		pos := r.tail.Load()
		if pos&closedBit != 0 {
			return ErrStopped
		}
		s := &r.slots[pos&r.mask]
		seq := s.seq.Load()
		switch {
		case seq == pos:
			if r.tail.CompareAndSwap(pos, pos+1) {
				s.cmd = *cmd
				s.done = done
				s.seq.Store(pos + 1)
				return nil
			}
		case seq < pos:
			return ErrBusy
		}
	}
}

// close makes every later push fail; claims made before it still get published.
func (r *ring) close() { r.tail.Or(closedBit) }

// drained reports whether the ring is closed and every claimed slot was consumed.
func (r *ring) drained() bool {
	t := r.tail.Load()
	return t&closedBit != 0 && t&^closedBit == r.head
}

// at returns the i-th slot after head if it is published, else nil.
func (r *ring) at(i int) *slot {
	pos := r.head + uint64(i)
	s := &r.slots[pos&r.mask]
	if s.seq.Load() != pos+1 {
		return nil
	}
	return s
}

// release frees the first n slots after head for producers.
func (r *ring) release(n int) {
	for i := 0; i < n; i++ {
		pos := r.head + uint64(i)
		s := &r.slots[pos&r.mask]
		s.done = nil
		s.cmd.ClientOrderID = ""
		s.cmd.query = nil
		s.seq.Store(pos + r.mask + 1)
	}
	r.head += uint64(n)
	r.done.Store(r.head)
}

// depth is how many claimed slots the consumer has not released yet (any goroutine).
func (r *ring) depth() int {
	t := r.tail.Load() &^ closedBit
	h := r.done.Load()
	if t <= h {
		return 0
	}
	return int(t - h)
}
