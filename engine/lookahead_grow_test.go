package engine

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// TestPrefetchOrderDuringGrow: the look-ahead reads another account's index without its
// mutex while that account's own market grows the index under it. A table read half
// before and half after a grow (the old array with the new length) made probe read past
// the old array and hand back whatever lay there as an order, which prefetchNeighbours
// then dereferenced. Here one goroutine (the other market) fills fresh indexes under a
// mutex, so they grow from 8 slots to 1024 again and again, while this one asks
// prefetchOrder for keys of the index being filled and dereferences what it returns, as
// the look-ahead does. Every round stores the same ids (so a stale table beside the live
// one holds the keys asked for) in orders of its own: whatever prefetchOrder returns must
// be one of the current round's orders, with the id asked for. Bounded by time (1.5 s).
func TestPrefetchOrderDuringGrow(t *testing.T) {
	const perRound = 512
	type round struct {
		ix     orderIndex
		orders []order
		keys   []uint64
	}
	newRound := func() *round {
		r := &round{orders: make([]order, perRound), keys: make([]uint64, perRound)}
		for i := range r.orders {
			r.orders[i].id = oid(uint64(i + 1))
			r.keys[i] = foldID((*[16]byte)(&r.orders[i].id))
		}
		return r
	}
	var (
		cur  atomic.Pointer[round]
		stop atomic.Bool
		wg   sync.WaitGroup
		mu   sync.Mutex // the account's mutex: the grower holds it, the reader never
		grew atomic.Int64
	)
	cur.Store(newRound())
	wg.Go(func() {
		for !stop.Load() {
			r := newRound()
			cur.Store(r)
			for i := range r.orders {
				mu.Lock()
				r.ix.add(&r.orders[i])
				mu.Unlock()
			}
			grew.Add(1)
		}
	})

	rng := rand.New(rand.NewPCG(1, 2))
	var asked, named int
	size := unsafe.Sizeof(order{})
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); {
		for range 4096 {
			r := cur.Load()
			i := rng.IntN(perRound)
			r.ix.prefetchSlot(r.keys[i])
			o := r.ix.prefetchOrder(r.keys[i])
			asked++
			if o == nil {
				continue
			}
			named++
			base := uintptr(unsafe.Pointer(unsafe.SliceData(r.orders)))
			if off := uintptr(unsafe.Pointer(o)) - base; off >= uintptr(perRound)*size || off%size != 0 {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("prefetchOrder named %p, not one of the round's orders (%#x + %d × %d)", o, base, perRound, size)
			}
			prefetchNeighbours(o)
			if o.id != r.orders[i].id {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("prefetchOrder for the key of %x named the order %x", r.orders[i].id, o.id)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if named == 0 {
		t.Fatalf("%d reads over %d rounds named no order: the test exercised nothing", asked, grew.Load())
	}
	t.Logf("%d reads over %d rounds of growth, %d named an order", asked, grew.Load(), named)
}
