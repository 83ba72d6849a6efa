package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// handler is the single-threaded state machine a runner drives: a market or funds.
type handler interface {
	exec(c *Command, r *Result)
	lookahead(c1, c2, c3 *Command) // prefetches for the next three commands (lookahead.go)
	pending() *stream
	cache() *accountCache
}

func (m *market) pending() *stream     { return &m.stream }
func (f *funds) pending() *stream      { return &f.stream }
func (m *market) cache() *accountCache { return &m.accts }
func (f *funds) cache() *accountCache  { return &f.accts }

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

// runner is the goroutine that owns one handler: it drains its ring in batches, runs the
// commands and hands the batch's events to the journal, keeping the journal's causal
// order across runners without a shared lock (sequence.go). It then passes the batch to
// its completion stage and goes on to the next batch at once: up to pipelineDepth
// batches of one symbol are in flight. The completion stage (a second goroutine owned by
// the runner) waits for each batch to be durable, in FIFO order, and only then completes
// its commands.
type runner struct {
	eng      *Engine
	h        handler
	mkt      *market // nil for the funds runner
	ring     *ring
	maxBatch int
	q        *seqState

	sleeping atomic.Bool
	wake     chan struct{}

	// Metrics (stats.go), on cache lines of their own: counts is written by the runner
	// only, busy by producers only when the ring is full.
	_      [64]byte
	counts cmdCounters
	busy   atomic.Uint64
	_      [56]byte

	// bufs are the per-batch buffers of the pipeline: a buffer taken from free belongs
	// to the runner until it is sent on fifo, then to the completion stage until it is
	// back in free.
	bufs [pipelineDepth]batchBuf
	free chan *batchBuf
	fifo chan *batchBuf

	// The batch being run: its buffer, the ring commands of this drain already handed on
	// by a split, the index in cur of the command being run, and its result.
	cur   *batchBuf
	split int
	pos   int
	res   Result
}

// pipelineDepth bounds the batches of one runner between running and completion; the
// runner blocks when all are in flight.
const pipelineDepth = 4

// batchKind says how the completion stage learns a batch's fate.
type batchKind uint8

const (
	batchEmpty   batchKind = iota // no events: answered at the offset acknowledged so far
	batchPending                  // enqueued in an OrderedJournal: wait on p
	batchDurable                  // appended to a plain Journal: durable at off
	batchFailed                   // the engine had failed, or the journal refused it
)

// batchBuf is one batch in the pipeline: its events (handed to the journal, so unchanged
// until its Pending's Wait returns), its commands' results and completers.
type batchBuf struct {
	kind    batchKind
	no      uint64 // the runner's batch number (seqState.batch)
	n       int
	p       Pending
	off     uint64
	ev      []Event
	results []Result
	dones   []Completer
}

func newRunner(e *Engine, h handler, q *seqState, ringSize, maxBatch int) *runner {
	rn := &runner{
		eng: e, h: h, ring: newRing(ringSize), maxBatch: maxBatch,
		wake: make(chan struct{}, 1),
		free: make(chan *batchBuf, pipelineDepth),
		fifo: make(chan *batchBuf, pipelineDepth),
	}
	if rn.maxBatch > len(rn.ring.slots) {
		rn.maxBatch = len(rn.ring.slots)
	}
	for i := range rn.bufs {
		b := &rn.bufs[i]
		b.results = make([]Result, rn.maxBatch)
		b.dones = make([]Completer, rn.maxBatch)
		rn.free <- b
	}
	if m, ok := h.(*market); ok {
		rn.mkt = m
	}
	rn.q = q
	q.split = rn.splitBatch
	h.cache().sq = q
	return rn
}

// submit pushes cmd, waking the runner if it sleeps.
func (rn *runner) submit(cmd *Command, done Completer) error {
	if err := rn.eng.refusal(); err != nil {
		return err
	}
	if err := rn.ring.push(cmd, done); err != nil {
		if err == ErrBusy {
			rn.busy.Add(1)
		}
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
	completed := make(chan struct{})
	go rn.complete(completed)
	defer func() {
		close(rn.fifo) // the completion stage finishes what is in flight, then exits
		<-completed
	}()
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
		// Pause only with nothing in flight, so the offset the snapshot reads covers
		// every effect this runner has made.
		rn.drain()
		q := first.cmd.query
		q.arrived.Done()
		<-q.resume
		first.done.Complete(Result{}, nil)
		r.release(1)
		return
	}
	e := rn.eng
	rn.cur = <-rn.free // blocks while pipelineDepth batches are in flight
	if e.failed.Load() {
		rn.cur.kind = batchFailed
		rn.hand(rn.cur, n)
		rn.cur = nil
		return
	}
	st := rn.h.pending()
	st.ev = rn.cur.ev[:0]
	rn.split = 0
	for i := 0; i < n; i++ {
		rn.pos = i - rn.split
		s := r.at(rn.pos)
		rn.res = Result{}
		if s.cmd.Kind == cmdQueryDepth {
			rn.depth(s.cmd.query)
		} else {
			var c1, c2, c3 *Command
			if i+1 < n {
				c1 = &r.at(rn.pos + 1).cmd
			}
			if i+2 < n {
				c2 = &r.at(rn.pos + 2).cmd
			}
			if i+3 < n {
				c3 = &r.at(rn.pos + 3).cmd
			}
			rn.h.lookahead(c1, c2, c3)
			rn.h.exec(&s.cmd, &rn.res) // may split the batch (sequence.go)
			rn.counts.add(s.cmd.Kind, rn.res.Code)
		}
		rn.cur.results[i-rn.split] = rn.res
	}
	rn.seal(n - rn.split)
	rn.cur = nil
}

// splitBatch hands the commands run so far in this batch on as a batch of their own and
// goes on with a fresh buffer; the command being run becomes the first of the next
// batch. It is seqState.split, called from follow before that command emits an event.
func (rn *runner) splitBatch() {
	k := rn.pos
	if k == 0 {
		return
	}
	rn.seal(k)
	rn.split += k
	rn.pos = 0
	rn.cur = <-rn.free
	rn.h.pending().ev = rn.cur.ev[:0]
}

// seal hands the first k commands of the ring (the commands of rn.cur) and the events
// the handler produced for them to the journal and to the completion stage.
func (rn *runner) seal(k int) {
	e, q, b := rn.eng, rn.q, rn.cur
	st := rn.h.pending()
	// The batch keeps its events until its completion is done; the stream gets the next
	// batch's buffer then.
	b.ev, st.ev = st.ev, nil
	b.no = q.batch
	sync := q.sync
	q.batch++
	q.sync = false
	switch {
	case e.failed.Load():
		b.kind = batchFailed
	case len(b.ev) == 0 && (!sync || e.ordered == nil):
		// Nothing to journal; with a plain Journal every enqueued batch is durable.
		b.kind = batchEmpty
	case e.ordered != nil:
		// An empty batch that read a cause not yet durable is enqueued too: its Pending
		// resolves once everything enqueued before it is durable.
		p, err := e.ordered.Enqueue(b.ev)
		if err != nil {
			e.fail()
		}
		switch d, ok := p.(*durable); {
		case err != nil:
			b.kind = batchFailed
		case ok: // durable at once (MemJournal, DiscardJournal)
			b.kind = batchDurable
			b.off, _ = d.Wait()
		default:
			b.kind, b.p = batchPending, p
		}
	default:
		off, err := e.journal.Append(b.ev)
		if err != nil {
			e.fail()
			b.kind = batchFailed
		} else {
			b.kind, b.off = batchDurable, off
		}
	}
	q.published(b.no)
	rn.hand(b, k)
}

// hand takes the completers of the first n commands into b, frees their ring slots and
// queues b for the completion stage.
func (rn *runner) hand(b *batchBuf, n int) {
	for i := 0; i < n; i++ {
		b.dones[i] = rn.ring.at(i).done
	}
	b.n = n
	rn.ring.release(n)
	// With nothing in flight, a batch that needs no wait is completed here: a handoff
	// to the completion stage would only add latency and CPU (in-memory journals,
	// rejections). Every other buffer being free means every earlier batch is answered.
	if b.kind != batchPending && b.kind != batchFailed && len(rn.free) == pipelineDepth-1 && !rn.eng.failed.Load() {
		rn.finish(b, false)
		rn.free <- b
		return
	}
	rn.fifo <- b
}

// drain waits until every batch the runner handed on has been completed.
func (rn *runner) drain() {
	var held [pipelineDepth]*batchBuf
	for i := range held {
		held[i] = <-rn.free
	}
	for _, b := range held {
		rn.free <- b
	}
}

// complete is the completion stage: for each batch, in the order the runner handed them
// on, it waits until the batch is durable and then completes its commands. After a
// journal error it answers that batch and every later one with ErrUnavailable.
func (rn *runner) complete(exited chan<- struct{}) {
	defer close(exited)
	failed := false
	for b := range rn.fifo {
		var err error
		switch b.kind {
		case batchPending:
			var off uint64
			off, err = b.p.Wait()
			b.kind, b.p, b.off = batchDurable, nil, off
		case batchFailed:
			err = ErrUnavailable
		}
		if err != nil {
			rn.eng.fail()
			failed = true
		}
		rn.finish(b, failed)
		rn.free <- b
	}
}

// finish completes b's commands: with ErrUnavailable if failed, else at the offset of
// its last event (the offset acknowledged so far for a batch without events).
func (rn *runner) finish(b *batchBuf, failed bool) {
	e := rn.eng
	if failed {
		for i := 0; i < b.n; i++ {
			b.dones[i].Complete(Result{}, ErrUnavailable)
		}
	} else {
		off := b.off
		if b.kind == batchEmpty {
			off = e.offset.Load()
		} else {
			e.noteOffset(off)
		}
		rn.q.madeDurable(b.no)
		for i := 0; i < b.n; i++ {
			res := &b.results[i]
			res.Offset = off
			b.dones[i].Complete(*res, nil)
		}
	}
	clear(b.dones[:b.n])
	b.n = 0
}

func (rn *runner) depth(q *query) {
	m := rn.mkt
	q.seq = m.seq
	q.bids = m.book.depth(Buy, q.n, q.bids[:0])
	q.asks = m.book.depth(Sell, q.n, q.asks[:0])
}
