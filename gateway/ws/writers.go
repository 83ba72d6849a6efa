package ws

import (
	"net"
	"sync"
)

const (
	maxIovecs = 256     // frames per writev
	maxWrite  = 1 << 20 // bytes per writev
)

// writers is the pool that drains connections' queues: a FIFO of connections with
// frames pending (each at most once) and a few goroutines, about one per core. A
// connection's pending frames go out in one writev, so a lagging reader costs fewer
// system calls per message, not more.
type writers struct {
	mu   sync.Mutex
	cond sync.Cond
	q    []*conn
	head int
	stop bool
	wg   sync.WaitGroup
}

// writerScratch is one writer's reusable iovec list.
type writerScratch struct {
	bufs net.Buffers
	iov  []iovec
}

func (w *writers) start(n int) {
	w.cond.L = &w.mu
	for i := 0; i < n; i++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.run()
		}()
	}
}

// schedule queues connections that have frames to write.
func (w *writers) schedule(cs ...*conn) {
	if len(cs) == 0 {
		return
	}
	w.mu.Lock()
	w.q = append(w.q, cs...)
	w.mu.Unlock()
	if len(cs) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
}

func (w *writers) run() {
	s := &writerScratch{}
	for {
		w.mu.Lock()
		for w.head == len(w.q) && !w.stop {
			w.cond.Wait()
		}
		if w.stop {
			w.mu.Unlock()
			return
		}
		c := w.q[w.head]
		w.q[w.head] = nil
		w.head++
		if w.head == len(w.q) {
			w.q, w.head = w.q[:0], 0
		} else if w.head > 4096 && w.head > len(w.q)/2 {
			n := copy(w.q, w.q[w.head:])
			clear(w.q[n:])
			w.q, w.head = w.q[:n], 0
		}
		w.mu.Unlock()
		if c.flush(s) {
			w.schedule(c)
		}
	}
}

func (w *writers) close() {
	w.mu.Lock()
	w.stop = true
	w.mu.Unlock()
	w.cond.Broadcast()
	w.wg.Wait()
}
