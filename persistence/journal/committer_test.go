package journal

import (
	"context"
	"testing"
	"time"
)

// TestEmptyEnqueueIsSyncPoint: the Ticket of an empty Enqueue is durable only once every
// record enqueued before it is, whether that record still waits in the queue or is being
// written; the engine uses it to answer a rejection only after the state it read is
// durable.
func TestEmptyEnqueueIsSyncPoint(t *testing.T) {
	gate := make(chan struct{})
	writing := make(chan struct{}, 4)
	c := &committer{
		encode:    func(dst []byte, _ uint64, p []byte) []byte { return append(dst, p...) },
		sizeOf:    func(p []byte) int { return len(p) },
		flush:     func(*group) error { writing <- struct{}{}; <-gate; return nil },
		maxRecord: 1 << 10, maxBytes: 1 << 10, maxRecs: 1, maxQueued: 4,
	}
	c.init(0)
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx := context.Background()
	if _, err := c.enqueue(ctx, [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	<-writing // record 1 is being written: out of the queue
	inFlight, err := c.enqueue(ctx, nil)
	if err != nil || inFlight.Last() != 1 {
		t.Fatal(inFlight.Last(), err)
	}
	if _, err := c.enqueue(ctx, [][]byte{[]byte("b")}); err != nil {
		t.Fatal(err)
	}
	queued, err := c.enqueue(ctx, nil)
	if err != nil || queued.Last() != 2 {
		t.Fatal(queued.Last(), err)
	}
	for name, tk := range map[string]Ticket{"behind a write in flight": inFlight, "behind a queued group": queued} {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		if _, err := tk.Wait(wctx); err == nil {
			t.Fatalf("sync point %s durable before the record", name)
		}
		cancel()
	}
	close(gate)
	for _, tk := range []Ticket{inFlight, queued} {
		if _, err := tk.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	idle, err := c.enqueue(ctx, nil)
	if err != nil || idle.Last() != 2 {
		t.Fatalf("idle sync point: %+v %v", idle, err)
	}
	if off, err := idle.Wait(ctx); err != nil || off != 2 {
		t.Fatal(off, err)
	}
}

// TestEnqueueLargerThanTheQueue: one Enqueue whose records fill more groups than the queue
// holds (an engine batch of a cancel-all on a deep book) is written, not left waiting for
// a writer nobody woke: the call must wake the writer before it waits for room.
func TestEnqueueLargerThanTheQueue(t *testing.T) {
	c := &committer{
		encode:    func(dst []byte, _ uint64, p []byte) []byte { return append(dst, p...) },
		sizeOf:    func(p []byte) int { return len(p) },
		flush:     func(*group) error { return nil },
		maxRecord: 1 << 10, maxBytes: 1 << 10, maxRecs: 2, maxQueued: 4,
	}
	c.init(0)
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	payloads := make([][]byte, 100) // 50 groups of 2 through a queue of 4
	for i := range payloads {
		payloads[i] = []byte("x")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tk, err := c.enqueue(ctx, payloads)
	if err != nil {
		t.Fatalf("enqueue: %v (the writer was never woken while the call waited for room)", err)
	}
	if off, err := tk.Wait(ctx); err != nil || off != 100 {
		t.Fatalf("wait: %d %v", off, err)
	}
}
