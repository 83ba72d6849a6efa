package ws

import (
	"crypto/sha256"
	"encoding/json"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"svc/gateway/api"
)

// conn is one WebSocket connection. No goroutine belongs to it: the server's poller reads
// it when the kernel says bytes arrived, and the server's writer pool drains its bounded
// queue of shared frames, coalescing whatever is pending into one writev. Whoever queues
// (the hub, the poller) never waits: a full queue closes the connection as a slow
// consumer.
type conn struct {
	id  uint64
	srv *Server
	nc  net.Conn // the server's own copy of the socket (see Server.adopt)
	rc  syscall.RawConn

	// Reader side: the poller, or an auth goroutine, under rmu.
	rmu       sync.Mutex
	rbuf      []byte // bytes of an incomplete frame
	msg       []byte // a fragmented message being assembled
	msgOp     byte
	principal api.Principal
	keyHash   [sha256.Size]byte // of the API key that authenticated it (zero for bearer tokens)
	apiKey    string            // the key itself, only when the Authenticator cannot Revalidate
	hub       *Hub
	chans     map[string]channel
	authing   bool
	held      [][]byte // messages that arrived while an auth message was being checked
	info      upgradeInfo
	sess      session // order entry and cancel-on-disconnect (orders.go, session.go)

	lastRead atomic.Int64 // server clock (unix ns) of the last bytes read
	opened   int64
	lastPing int64 // janitor only

	// Writer side, under mu.
	mu        sync.Mutex
	q         []*frame
	qBytes    int
	off       int   // bytes of q[0] already written
	since     int64 // server clock when q last went from empty to not empty
	scheduled bool  // in the writers' run queue, or waiting for the socket to drain
	writing   bool
	inflight  int   // frames at the head of q that the current writev carries
	closing   bool  // a close frame is queued: nothing more is accepted
	closeBy   int64 // when closing: the socket is closed by then even if the frame is stuck
	done      bool  // the socket is closed
	private   bool  // authenticated: counted in Server.openPrivate until done
}

// markPrivate counts the connection as authenticated (once, and not after it closed).
func (c *conn) markPrivate() {
	c.mu.Lock()
	if !c.done && !c.private {
		c.private = true
		c.srv.openPrivate.Add(1)
	}
	c.mu.Unlock()
}

// push queues f and reports whether the connection must be handed to the writers. A
// full queue (count or bytes) closes the connection with 1013.
func (c *conn) push(f *frame) bool {
	sched, _, _ := c.pushBook(f, nil)
	return sched
}

// pushBook is push for an order-book diff f when snap is not nil. On a connection already
// lagging (ConflateAt frames queued) the diffs and snapshots of f's book that no write has
// started are dropped and the snapshot snap returns (at f's last sequence) is queued in
// f's place: the reader gets the newest book, not the oldest diffs. It reports how many
// frames were dropped; lagging when there was none to drop (all in flight): f is not
// queued then, and the caller sends a snapshot once the queue is below the mark.
//
// snap encodes the whole book, so it runs without c.mu (the connection's writer and
// readers are not held up meanwhile); the queue is then looked at again, as it is now.
func (c *conn) pushBook(f *frame, snap func() *frame) (sched, lagging bool, dropped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.done {
		return false, false, 0
	}
	cfg := &c.srv.cfg
	var snapshot *frame
	for snap != nil && len(c.q) >= cfg.ConflateAt {
		keep := 0
		if c.off > 0 {
			keep = 1 // a frame half written must be finished, or the stream is corrupt
		}
		if c.writing {
			keep = max(keep, c.inflight) // frames a writev is carrying right now stay until it returns
		}
		if !slices.ContainsFunc(c.q[keep:], func(g *frame) bool { return g.book == f.book }) {
			return false, true, 0
		}
		if snapshot == nil {
			c.mu.Unlock()
			snapshot = snap()
			c.mu.Lock()
			if c.closing || c.done {
				return false, false, 0
			}
			continue // the writer may have sent frames meanwhile: decide again
		}
		n := keep
		for _, g := range c.q[keep:] {
			if g.book == f.book {
				c.qBytes -= len(g.b)
				continue
			}
			c.q[n] = g
			n++
		}
		dropped = len(c.q) - n
		clear(c.q[n:])
		c.q = c.q[:n]
		f = snapshot
		break
	}
	if len(c.q) >= cfg.QueueLen || c.qBytes+len(f.b) > cfg.QueueBytes {
		c.srv.slow.Add(1)
		c.closeLocked(CloseTryAgainLater, "slow consumer: outgoing queue full", true)
		return c.scheduleLocked(), false, dropped
	}
	if len(c.q) == 0 {
		c.since = c.srv.clock.Load()
	}
	c.q = append(c.q, f)
	c.qBytes += len(f.b)
	c.srv.queued.Add(1)
	return c.scheduleLocked(), false, dropped
}

// lagging reports whether the connection's queue is past the point where order-book diffs
// are conflated into a later snapshot.
func (c *conn) lagging() bool {
	c.mu.Lock()
	n := len(c.q)
	c.mu.Unlock()
	return n >= c.srv.cfg.ConflateAt
}

func (c *conn) scheduleLocked() bool {
	if c.scheduled || c.writing || c.done {
		return false
	}
	c.scheduled = true
	return true
}

// send queues f and schedules the connection.
func (c *conn) send(f *frame) {
	if f != nil && c.push(f) {
		c.srv.writers.schedule(c)
	}
}

func (c *conn) sendBytes(msg []byte) { c.send(textFrame(msg)) }

func (c *conn) sendJSON(v any) {
	if b, err := json.Marshal(v); err == nil {
		c.sendBytes(b)
	}
}

// fail closes the connection with code and reason: the close frame goes out after the
// frames already queued, and the socket closes once it is written (or after the write
// timeout).
func (c *conn) fail(code int, why string) {
	c.mu.Lock()
	sched := false
	if !c.closing && !c.done {
		c.closeLocked(code, why, false)
		sched = c.scheduleLocked()
	}
	c.mu.Unlock()
	if sched {
		c.srv.writers.schedule(c)
	}
}

// closeLocked queues the close frame; drop first discards the frames not yet started (a
// slow consumer's backlog).
func (c *conn) closeLocked(code int, why string, drop bool) {
	if drop {
		keep := 0
		if c.off > 0 {
			keep = 1 // a frame half written must be finished, or the stream is corrupt
		}
		if c.writing {
			keep = max(keep, c.inflight) // frames a writev is carrying right now stay until it returns
		}
		clear(c.q[keep:])
		c.q = c.q[:keep]
		c.qBytes = 0
		for _, f := range c.q {
			c.qBytes += len(f.b)
		}
	}
	c.q = append(c.q, closeFrame(code, why))
	c.closing = true
	c.since = c.srv.clock.Load()
	c.closeBy = c.since + int64(c.srv.cfg.WriteTimeout)
}

// flush writes what is pending in one writev (run by a writer). It returns true when the
// connection has more to write and should be scheduled again.
func (c *conn) flush(w *writerScratch) (again bool) {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return false
	}
	w.bufs = w.bufs[:0]
	total := 0
	for i, f := range c.q {
		b := f.b
		if i == 0 {
			b = b[c.off:]
		}
		w.bufs = append(w.bufs, b)
		total += len(b)
		if len(w.bufs) == maxIovecs || total >= maxWrite {
			break
		}
	}
	c.scheduled, c.writing, c.inflight = false, true, len(w.bufs)
	c.mu.Unlock()

	n, wouldBlock, err := c.srv.writev(c, w)
	clear(w.bufs)

	c.mu.Lock()
	c.writing, c.inflight = false, 0
	if err != nil {
		c.mu.Unlock()
		c.srv.shutdown(c)
		return false
	}
	k := 0
	for k < len(c.q) {
		rest := len(c.q[k].b) - c.off
		if n < rest {
			c.off += n
			break
		}
		n -= rest
		c.qBytes -= len(c.q[k].b)
		c.off = 0
		k++
	}
	if k > 0 {
		m := copy(c.q, c.q[k:])
		clear(c.q[m:])
		c.q = c.q[:m]
		c.since = c.srv.clock.Load()
	}
	if len(c.q) == 0 {
		if c.closing {
			c.mu.Unlock()
			c.srv.shutdown(c)
			return false
		}
		c.mu.Unlock()
		return false
	}
	c.scheduled = true
	c.mu.Unlock()
	if wouldBlock {
		c.srv.waitWritable(c)
		return false
	}
	return true
}

// stalled reports whether the connection has had frames pending past the write timeout
// (the client stopped reading), or a close frame that could not be written in time.
func (c *conn) stalled(now int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	if c.closing {
		return now > c.closeBy
	}
	return len(c.q) > 0 && now-c.since > int64(c.srv.cfg.WriteTimeout)
}

// markDone marks the socket closed; it reports false if it already was.
func (c *conn) markDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	c.done = true
	if c.private {
		c.srv.openPrivate.Add(-1)
	}
	clear(c.q)
	c.q, c.qBytes = nil, 0
	return true
}

// setKey records the API key that authenticated c (under rmu, or before c is shared).
func (c *conn) setKey(key string) {
	c.keyHash = sha256.Sum256([]byte(key))
	if _, ok := c.srv.cfg.Auth.(Revalidator); !ok {
		c.apiKey = key
	}
}
