package journal

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// group is a set of consecutive records made durable together. Appenders
// fill the last queued group under committer.mu; once the committer goroutine
// pops it, nobody else touches it until done is closed.
type group struct {
	first, last uint64  // offsets of its first and last record
	buf         []byte  // records as encoded by committer.encode
	ends        []int32 // end of each record in buf
	bytes       int     // committer.sizeOf summed over the records
	done        chan struct{}
	err         error // set before done is closed
}

func (g *group) records() int { return len(g.ends) }

// committer is the group-commit machinery shared by the file and Kafka
// journals: it assigns offsets, queues groups, runs the one goroutine that
// flushes them in order, and keeps the sticky error.
type committer struct {
	// Set before Start.
	encode    func(dst []byte, offset uint64, payload []byte) []byte
	sizeOf    func(payload []byte) int // cost of a record against maxBytes
	flush     func(g *group) error     // write and make durable; committer goroutine only
	maxRecord int                      // longest payload
	maxBytes  int                      // a group holds at most this much (sizeOf), at least one record
	maxRecs   int                      // and at most this many records
	maxQueued int                      // Append waits while this many groups are queued
	guard     func() error             // nil, or checked before and after each flush (the lease)

	durable atomic.Uint64
	stats   commitStats // group-commit latency and size (stats.go)

	mu       sync.Mutex
	next     uint64 // next offset to assign
	queue    []*group
	flushing *group   // the group being written, out of queue until it is done
	spare    []*group // flushed groups whose buffers can be reused
	err      error    // sticky
	started  bool
	closed   bool
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

func (c *committer) init(last uint64) {
	c.next = last + 1
	c.durable.Store(last)
	c.wake = make(chan struct{}, 1)
	c.stop = make(chan struct{})
	c.done = make(chan struct{})
}

func (c *committer) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.started {
		return nil
	}
	c.started = true
	go c.run()
	return nil
}

// close stops accepting appends, lets the goroutine flush the queue and
// waits for it. It reports whether the goroutine had been started.
func (c *committer) close() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return true
	}
	c.closed = true
	started := c.started
	c.mu.Unlock()
	if !started {
		close(c.done)
		return false
	}
	close(c.stop)
	<-c.done
	return true
}

func (c *committer) stickyErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *committer) append(ctx context.Context, payloads [][]byte) (uint64, error) {
	t, err := c.enqueue(ctx, payloads)
	if err != nil {
		return 0, err
	}
	return t.Wait(ctx)
}

// enqueue assigns offsets to payloads, copies them into the queued groups and
// returns without waiting for the write. Concurrent calls are ordered by mu:
// a call's records all come after those of every call that returned before it
// started.
func (c *committer) enqueue(ctx context.Context, payloads [][]byte) (Ticket, error) {
	if len(payloads) == 0 {
		// A sync point: durable once every record enqueued before it is.
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil {
			return Ticket{}, c.err
		}
		if n := len(c.queue); n > 0 {
			return Ticket{g: c.queue[n-1], last: c.next - 1}, nil
		}
		if c.flushing != nil {
			return Ticket{g: c.flushing, last: c.next - 1}, nil
		}
		return Ticket{last: c.next - 1}, nil
	}
	for _, p := range payloads {
		if len(p) > c.maxRecord {
			return Ticket{}, ErrTooLarge
		}
	}
	if err := ctx.Err(); err != nil {
		return Ticket{}, err
	}
	c.mu.Lock()
	var g *group
	for i := 0; i < len(payloads); i++ {
		for {
			if c.err != nil {
				err := c.err
				c.mu.Unlock()
				return Ticket{}, err
			}
			if c.closed {
				c.mu.Unlock()
				return Ticket{}, ErrClosed
			}
			if !c.started {
				c.mu.Unlock()
				return Ticket{}, ErrNotStarted
			}
			size := c.sizeOf(payloads[i])
			if n := len(c.queue); n > 0 {
				if last := c.queue[n-1]; last.records() < c.maxRecs && last.bytes+size <= c.maxBytes {
					g = last
					break
				}
			}
			if len(c.queue) < c.maxQueued {
				g = c.newGroup()
				c.queue = append(c.queue, g)
				break
			}
			// Back pressure: wait for the oldest queued group, then retry. Wake the
			// writer first: the groups this call filled are not announced until it
			// returns, and a batch larger than the whole queue (a cancel-all of a
			// deep book) would otherwise wait for a writer that sleeps.
			wait := c.queue[0].done
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
			select {
			case <-wait:
			case <-ctx.Done():
				// Records already queued (i > 0) will still be written.
				return Ticket{}, ctx.Err()
			}
			c.mu.Lock()
		}
		if g.records() == 0 {
			g.first = c.next
		}
		g.buf = c.encode(g.buf, c.next, payloads[i])
		g.ends = append(g.ends, int32(len(g.buf)))
		g.bytes += c.sizeOf(payloads[i])
		g.last = c.next
		c.next++
	}
	last := g.last
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	// Groups are flushed in order and a failure fails every later group, so
	// the last group touched answers for the whole batch.
	return Ticket{g: g, last: last}, nil
}

// Ticket is a batch that Enqueue has placed in the journal: its offsets are
// fixed and every batch enqueued later comes after it, but it may not be
// durable yet. The zero Ticket (and the Ticket of an empty batch) is durable.
type Ticket struct {
	g    *group
	last uint64
}

// Last is the offset of the batch's last record.
func (t Ticket) Last() uint64 { return t.last }

// Wait blocks until the batch is durable and returns the offset of its last
// record, or the journal's sticky error if it never will be. If ctx ends
// first it returns ctx's error; the records may still become durable.
func (t Ticket) Wait(ctx context.Context) (uint64, error) {
	if t.g == nil {
		return t.last, nil
	}
	select {
	case <-t.g.done:
		if t.g.err != nil {
			return 0, t.g.err
		}
		return t.last, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// newGroup reuses a flushed group's buffers. Called with mu held.
func (c *committer) newGroup() *group {
	g := &group{done: make(chan struct{})}
	if n := len(c.spare); n > 0 {
		old := c.spare[n-1]
		c.spare = c.spare[:n-1]
		g.buf, g.ends = old.buf[:0], old.ends[:0]
	}
	return g
}

func (c *committer) run() {
	defer close(c.done)
	for {
		stopping := false
		select {
		case <-c.wake:
		case <-c.stop:
			stopping = true
		}
		for {
			c.mu.Lock()
			if len(c.queue) == 0 {
				c.mu.Unlock()
				break
			}
			g := c.queue[0]
			n := copy(c.queue, c.queue[1:])
			c.queue[n] = nil
			c.queue = c.queue[:n]
			c.flushing = g
			c.mu.Unlock()

			t0 := time.Now()
			if err := c.checkGuard(); err != nil {
				c.fail(g, err)
				return
			}
			if err := c.flush(g); err != nil {
				c.fail(g, err)
				return
			}
			// Checked again before acknowledging: a writer whose lease ran out
			// while the group was in flight must not answer for it (a new
			// leader may already have fenced the journal; see package lease).
			if err := c.checkGuard(); err != nil {
				c.fail(g, err)
				return
			}
			c.stats.observe(time.Since(t0), g.records())
			c.durable.Store(g.last)
			close(g.done)

			c.mu.Lock()
			c.flushing = nil
			if len(c.spare) < 2 && cap(g.buf) <= 4*c.maxBytes {
				c.spare = append(c.spare, &group{buf: g.buf, ends: g.ends})
			}
			c.mu.Unlock()
		}
		if stopping {
			return
		}
	}
}

func (c *committer) checkGuard() error {
	if c.guard == nil {
		return nil
	}
	if err := c.guard(); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrFailed, ErrFenced, err)
	}
	return nil
}

// failNow makes the journal fail from outside the write path (the lease was
// lost): the sticky error is set unless one is, and queued groups fail with
// it. A group being written finishes and is acknowledged only if the guard
// still passes.
func (c *committer) failNow(cause error) {
	err := failed("stopped", cause)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	queued := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, q := range queued {
		q.err = err
		close(q.done)
	}
}

// fail records the sticky error and fails g and every queued group.
func (c *committer) fail(g *group, err error) {
	c.mu.Lock()
	c.err = err
	queued := c.queue
	c.queue = nil
	c.flushing = nil
	c.mu.Unlock()
	g.err = err
	close(g.done)
	for _, q := range queued {
		q.err = err
		close(q.done)
	}
}
