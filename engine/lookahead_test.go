package engine

import "testing"

// TestAddCancelPeek: the add/cancel harness's look-ahead names the commands that the
// next three ops then run (a wrong guess would only waste a prefetch, but the benchmark
// would then measure less than what the runner's look-ahead gives).
func TestAddCancelPeek(t *testing.T) {
	w := newAddCancel(t, 100)
	w.fifo = append(make([]OrderID, 0, 1<<14), w.fifo...)
	w.owner = append(make([]AccountID, 0, 1<<14), w.owner...)
	peeked := map[int][]Command{}
	for i := 0; i < 2000; i++ {
		for k := 1; k <= 3; k++ {
			var c Command
			w.peek(i, k, &c)
			peeked[i+k] = append(peeked[i+k], c)
		}
		w.op(i)
		ran := w.cmd // a cancel
		if i&3 >= 2 {
			ran = w.add1
		}
		for _, p := range peeked[i] {
			if p.Kind != ran.Kind || p.Account != ran.Account || p.OrderID != ran.OrderID {
				t.Fatalf("op %d: peeked %v %x %x, ran %v %x %x", i, p.Kind, p.Account, p.OrderID, ran.Kind, ran.Account, ran.OrderID)
			}
		}
		delete(peeked, i)
	}
}

// TestPrefetchOrder: the look-ahead's probe names the first order stored under k within
// the first four slots of k's run, by the key alone (it never reads the order's id),
// wrapping around the table's end; a run that ends first, or goes on past four slots,
// names nothing, though a full probe (get's) finds the order further on.
func TestPrefetchOrder(t *testing.T) {
	if (&orderIndex{}).prefetchOrder(1) != nil {
		t.Fatal("an empty index names an order")
	}
	keysHomedAt := func(ix *orderIndex, slot, n int) []uint64 { // n keys whose home is slot
		var ks []uint64
		for k := uint64(1); len(ks) < n; k++ {
			if ix.home(k) == slot {
				ks = append(ks, k)
			}
		}
		return ks
	}
	// Orders put under the same key share its run: the table's last slot, then 0, 1, ...
	build := func(keys ...uint64) (*orderIndex, []*order) {
		var ix orderIndex
		ix.grow()
		ix.grow() // 16 slots: room for 8
		var os []*order
		for i, k := range keys {
			o := &order{id: OrderID{byte(i + 1)}}
			ix.addKey(k, o)
			os = append(os, o)
		}
		return &ix, os
	}
	var probe orderIndex
	probe.grow()
	probe.grow()
	ks := keysHomedAt(&probe, 15, 3)
	a, b, c := ks[0], ks[1], ks[2]

	ix, os := build(a, a, a, b, b) // slots 15, 0, 1: a; 2, 3: b
	if o := ix.prefetchOrder(a); o != os[0] {
		t.Errorf("key a names %v, want its first order (the home slot)", o)
	}
	if o := ix.prefetchOrder(b); o != os[3] {
		t.Errorf("key b names %v, want its first order (the fourth slot, past the table's end)", o)
	}
	if o := ix.prefetchOrder(c); o != nil {
		t.Errorf("absent key c names %v", o)
	}

	ix, os = build(a, a, a, a, b, c) // b in the fifth slot of the run, c in the sixth
	if o := ix.prefetchOrder(b); o != nil {
		t.Errorf("key b, fifth in its run, names %v", o)
	}
	if o, _ := ix.probe(b, uint(len(ix.slots)), func(*order) bool { return true }); o != os[4] {
		t.Errorf("a full probe of key b finds %v, want its order", o)
	}
	if o := ix.prefetchOrder(keysHomedAt(ix, 7, 1)[0]); o != nil {
		t.Errorf("a key whose home slot is empty names %v", o)
	}
}
