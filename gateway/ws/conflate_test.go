package ws

import (
	"fmt"
	"testing"
)

// TestPushBookConflatesOldest checks that a lagging connection's unsent diffs and
// snapshots of one book give way to the newest snapshot, while other channels' frames and
// frames a write has started stay, in order.
func TestPushBookConflatesOldest(t *testing.T) {
	a, b := &bookFeed{}, &bookFeed{}
	diff := func(s *bookFeed, name string) *frame { f := textFrame([]byte(name)); f.book = s; return f }
	tests := []struct {
		name     string
		inflight int // frames at the head of the queue a writev is carrying
		queue    []string
		want     []string
		dropped  int
		lagging  bool
	}{
		{name: "below the mark", queue: []string{"a1", "t1"}, want: []string{"a1", "t1", "a9"}},
		{name: "book diffs replaced", queue: []string{"a1", "t1", "a2", "b1"}, want: []string{"t1", "b1", "snap"}, dropped: 2},
		{name: "in flight kept", inflight: 2, queue: []string{"a1", "t1", "a2", "a3"}, want: []string{"a1", "t1", "snap"}, dropped: 2},
		{name: "nothing to drop", inflight: 4, queue: []string{"a1", "t1", "a2", "a3"}, want: []string{"a1", "t1", "a2", "a3"}, lagging: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(Config{ConflateAt: 4, QueueLen: 16})
			c := &conn{srv: srv, scheduled: true}
			for _, n := range tt.queue {
				var f *frame
				switch n[0] {
				case 'a':
					f = diff(a, n)
				case 'b':
					f = diff(b, n)
				default:
					f = textFrame([]byte(n))
				}
				c.q = append(c.q, f)
				c.qBytes += len(f.b)
			}
			c.writing, c.inflight = tt.inflight > 0, tt.inflight
			snapped := 0
			_, lagging, dropped := c.pushBook(diff(a, "a9"), func() *frame { snapped++; return diff(a, "snap") })
			if lagging != tt.lagging || dropped != tt.dropped {
				t.Fatalf("lagging %v dropped %d, want %v %d", lagging, dropped, tt.lagging, tt.dropped)
			}
			var got []string
			bytes := 0
			for _, f := range c.q {
				got = append(got, string(f.b[2:]))
				bytes += len(f.b)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("queue %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("queue %q, want %q", got, tt.want)
				}
			}
			if bytes != c.qBytes {
				t.Fatalf("qBytes %d, frames hold %d", c.qBytes, bytes)
			}
			if wantSnap := tt.dropped > 0; (snapped == 1) != wantSnap || snapped > 1 {
				t.Fatalf("snapshot built %d times", snapped)
			}
		})
	}
}

// TestPushBookBuildsTheSnapshotUnlocked: the snapshot (which encodes the whole book) is
// built without the connection's lock, so its writer and readers go on meanwhile; what
// happened to the queue during the build decides what is queued.
func TestPushBookBuildsTheSnapshotUnlocked(t *testing.T) {
	a := &bookFeed{}
	diff := func(name string) *frame { f := textFrame([]byte(name)); f.book = a; return f }
	setup := func() *conn {
		c := &conn{srv: NewServer(Config{ConflateAt: 2, QueueLen: 16}), scheduled: true}
		for _, n := range []string{"a1", "a2", "a3"} {
			f := diff(n)
			c.q = append(c.q, f)
			c.qBytes += len(f.b)
		}
		return c
	}
	names := func(c *conn) (out []string) {
		for _, f := range c.q {
			out = append(out, string(f.b[2:]))
		}
		return out
	}

	t.Run("the lock is free while the snapshot is built", func(t *testing.T) {
		c := setup()
		_, lagging, dropped := c.pushBook(diff("a9"), func() *frame {
			if !c.mu.TryLock() {
				t.Error("snapshot built under the connection's lock")
			} else {
				c.mu.Unlock()
			}
			return diff("snap")
		})
		if lagging || dropped != 3 || fmt.Sprint(names(c)) != "[snap]" {
			t.Fatalf("lagging %v dropped %d queue %v", lagging, dropped, names(c))
		}
	})

	t.Run("the writer drained the queue meanwhile: the diff is queued", func(t *testing.T) {
		c := setup()
		_, lagging, dropped := c.pushBook(diff("a9"), func() *frame {
			c.mu.Lock() // as flush does once a writev returned
			clear(c.q)
			c.q, c.qBytes = c.q[:0], 0
			c.mu.Unlock()
			return diff("snap")
		})
		if lagging || dropped != 0 || fmt.Sprint(names(c)) != "[a9]" {
			t.Fatalf("lagging %v dropped %d queue %v", lagging, dropped, names(c))
		}
	})

	t.Run("a writev took the frames in flight meanwhile: only the others are dropped", func(t *testing.T) {
		c := setup()
		_, lagging, dropped := c.pushBook(diff("a9"), func() *frame {
			c.mu.Lock()
			c.writing, c.inflight = true, 2
			c.mu.Unlock()
			return diff("snap")
		})
		if lagging || dropped != 1 || fmt.Sprint(names(c)) != "[a1 a2 snap]" {
			t.Fatalf("lagging %v dropped %d queue %v", lagging, dropped, names(c))
		}
	})

	t.Run("closed meanwhile: nothing queued", func(t *testing.T) {
		c := setup()
		sched, lagging, dropped := c.pushBook(diff("a9"), func() *frame {
			c.mu.Lock()
			c.closing = true
			c.mu.Unlock()
			return diff("snap")
		})
		if sched || lagging || dropped != 0 || len(c.q) != 3 {
			t.Fatalf("sched %v lagging %v dropped %d queue %v", sched, lagging, dropped, names(c))
		}
	})
}
