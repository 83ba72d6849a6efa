package deposits

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The batcher runs every step exactly once, gives each its own outcome, combines steps
// that wait at the same time, never runs two batches of one batcher at once, and stops
// leading when nothing is queued (a later step runs at once).
func TestStepBatcher(t *testing.T) {
	var (
		b       stepBatcher
		ran     sync.Map // id -> runs
		running atomic.Int32
		batches atomic.Int32
		biggest atomic.Int32
	)
	bad := uuid.New()
	run := func(_ context.Context, batch []*stepReq) {
		if running.Add(1) != 1 {
			t.Error("two batches at once")
		}
		defer running.Add(-1)
		batches.Add(1)
		if n := int32(len(batch)); n > biggest.Load() {
			biggest.Store(n)
		}
		time.Sleep(2 * time.Millisecond) // a transaction's worth
		for _, r := range batch {
			v, _ := ran.LoadOrStore(r.id, new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
			if r.id == bad {
				r.err = errors.New("bad step")
			}
		}
	}
	const n = 500
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.New()
	}
	ids[n/2] = bad
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := b.do(context.Background(), id, PendingFX, run)
			if (id == bad) != (err != nil) {
				t.Errorf("step %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		v, ok := ran.Load(id)
		if !ok || v.(*atomic.Int32).Load() != 1 {
			t.Fatalf("step %s ran %v times", id, v)
		}
	}
	if biggest.Load() < 2 || biggest.Load() > MaxStepBatch {
		t.Fatalf("biggest batch %d", biggest.Load())
	}
	t.Logf("%d steps in %d batches, the biggest %d", n, batches.Load(), biggest.Load())
	b.mu.Lock()
	idle := !b.running && len(b.queue) == 0
	b.mu.Unlock()
	if !idle {
		t.Fatal("batcher still leading with nothing queued")
	}
	if err := b.do(context.Background(), uuid.New(), PendingFX, run); err != nil {
		t.Fatal(err)
	}
}
