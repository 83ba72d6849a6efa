package engine

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestOrderIndexMatchesMap drives the open-addressing index and a Go map with the same
// random inserts, lookups and deletes, with many ids sharing one fold, and compares.
func TestOrderIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t, 3), 1))
	var ix orderIndex
	ref := map[OrderID]*order{}
	var live []*order
	mkID := func() OrderID {
		var id OrderID
		if r.IntN(4) == 0 { // same fold as others: hi ^ lo == 7
			hi := uint64(r.IntN(64))
			binary.LittleEndian.PutUint64(id[:8], hi)
			binary.LittleEndian.PutUint64(id[8:], hi^7)
		} else {
			binary.LittleEndian.PutUint64(id[:8], r.Uint64()&0xff)
			binary.LittleEndian.PutUint64(id[8:], uint64(r.IntN(5000)))
		}
		return id
	}
	for step := 0; step < 200_000; step++ {
		switch k := r.IntN(10); {
		case k < 5:
			id := mkID()
			if ref[id] != nil {
				if found, _, _ := ix.find(&id); ix.get(&id) != ref[id] || found != ref[id] {
					t.Fatalf("step %d: lookup of present id", step)
				}
				continue
			}
			o := &order{id: id}
			if r.IntN(2) == 0 { // the place's path: find, then insert where it ended
				found, k, slot := ix.find(&id)
				if found != nil || k != foldID((*[16]byte)(&id)) {
					t.Fatalf("step %d: find of absent id", step)
				}
				ix.addAt(k, o, slot)
			} else {
				ix.add(o)
			}
			ref[id] = o
			live = append(live, o)
		case k < 8 && len(live) > 0:
			i := r.IntN(len(live))
			o := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			ix.remove(o)
			delete(ref, o.id)
			if ix.get(&o.id) != nil {
				t.Fatalf("step %d: removed id still found", step)
			}
		default:
			id := mkID()
			if ix.get(&id) != ref[id] {
				t.Fatalf("step %d: get differs from map", step)
			}
		}
		if ix.len() != len(ref) {
			t.Fatalf("step %d: len %d, map %d", step, ix.len(), len(ref))
		}
	}
	n := 0
	for o := range ix.all {
		if ref[o.id] != o {
			t.Fatal("iteration yields an order the map does not hold")
		}
		n++
	}
	if n != len(ref) {
		t.Fatalf("iteration yields %d, map holds %d", n, len(ref))
	}
}
