package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// handler is the single-threaded state machine a runner drives: a market or funds.
type handler interface {
	exec(c *Command, r *Result)
	pending() *stream
}

func (m *market) pending() *stream { return &m.stream }
func (f *funds) pending() *stream  { return &f.stream }

// query is the payload of the internal depth and barrier commands.
type query struct {
	// depth
	n          int
	bids, asks []Level
	seq        uint64
	// barrier
	arrived *sync.WaitGroup
	resume  chan struct{}
}

type depthQuery = query

// runner is the goroutine that owns one handler: it drains its ring in batches; under the
// engine's sequencer lock it runs the commands and hands the batch's events to the
// journal; outside the lock it waits until they are durable, and only then completes them.
type runner struct {
	eng      *Engine
	h        handler
	mkt      *market // nil for the funds runner
	ring     *ring
	results  []Result
	maxBatch int

	sleeping atomic.Bool
	wake     chan struct{}
}

func newRunner(e *Engine, h handler, ringSize, maxBatch int) *runner {
	rn := &runner{
		eng: e, h: h, ring: newRing(ringSize), maxBatch: maxBatch,
		wake: make(chan struct{}, 1),
	}
	if rn.maxBatch > len(rn.ring.slots) {
		rn.maxBatch = len(rn.ring.slots)
	}
	rn.results = make([]Result, rn.maxBatch)
	if m, ok := h.(*market); ok {
		rn.mkt = m
	}
	return rn
}

// submit pushes cmd, waking the runner if it sleeps.
func (rn *runner) submit(cmd *Command, done Completer) error {
	if err := rn.eng.refusal(); err != nil {
		return err
	}
	if err := rn.ring.push(cmd, done); err != nil {
		return err
	}
	if rn.sleeping.Load() && rn.sleeping.CompareAndSwap(true, false) {
		select {
		case rn.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

func (rn *runner) kick() {
	rn.sleeping.Store(false)
	select {
	case rn.wake <- struct{}{}:
	default:
	}
}

const spinRounds = 64

func (rn *runner) run(wg *sync.WaitGroup) {
	defer wg.Done()
	idle := 0
	for {
		n := rn.collect()
		if n > 0 {
			idle = 0
			rn.process(n)
			continue
		}
		if rn.eng.stopping.Load() {
			if rn.ring.drained() {
				return
			}
			runtime.Gosched()
			continue
		}
		idle++
		if idle < spinRounds {
			runtime.Gosched()
			continue
		}
		rn.sleeping.Store(true)
		if rn.ring.at(0) != nil || rn.eng.stopping.Load() {
			rn.sleeping.Store(false)
			continue
		}
		<-rn.wake
		rn.sleeping.Store(false)
		idle = 0
	}
}

// collect counts the published slots to run as one batch; a barrier is always a batch
// of its own.
func (rn *runner) collect() int {
	n := 0
	for n < rn.maxBatch {
		s := rn.ring.at(n)
		if s == nil {
			break
		}
		if s.cmd.Kind == cmdBarrier {
			if n == 0 {
				return 1
			}
			break
		}
		n++
	}
	return n
}

func (rn *runner) process(n int) {
	r := rn.ring
	if first := r.at(0); first.cmd.Kind == cmdBarrier {
		q := first.cmd.query
		q.arrived.Done()
		<-q.resume
		first.done.Complete(Result{}, nil)
		r.release(1)
		return
	}
	e := rn.eng
	e.seq.Lock()
	if e.failed.Load() {
		e.seq.Unlock()
		rn.failAll(n)
		return
	}
	st := rn.h.pending()
	for i := 0; i < n; i++ {
		s := r.at(i)
		res := &rn.results[i]
		*res = Result{}
		if s.cmd.Kind == cmdQueryDepth {
			rn.depth(s.cmd.query)
			continue
		}
		rn.h.exec(&s.cmd, res)
	}
	var off uint64
	if len(st.ev) > 0 {
		var err error
		if e.ordered != nil {
			var p Pending
			p, err = e.ordered.Enqueue(st.ev)
			e.seq.Unlock()
			if err == nil {
				off, err = p.Wait()
			}
		} else {
			off, err = e.journal.Append(st.ev)
			e.seq.Unlock()
		}
		st.ev = st.ev[:0]
		if err != nil {
			e.fail()
			rn.failAll(n)
			return
		}
		e.noteOffset(off)
	} else {
		e.seq.Unlock()
		off = e.offset.Load()
	}
	for i := 0; i < n; i++ {
		res := &rn.results[i]
		res.Offset = off
		r.at(i).done.Complete(*res, nil)
	}
	r.release(n)
}

// failAll answers the first n commands with ErrUnavailable.
func (rn *runner) failAll(n int) {
	for i := 0; i < n; i++ {
		rn.ring.at(i).done.Complete(Result{}, ErrUnavailable)
	}
	rn.ring.release(n)
}

func (rn *runner) depth(q *query) {
	m := rn.mkt
	q.seq = m.seq
	q.bids = m.book.depth(Buy, q.n, q.bids[:0])
	q.asks = m.book.depth(Sell, q.n, q.asks[:0])
}
