package engine

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// foldID folds a 16-byte id to 64 bits. For a UUIDv7 the last 8 bytes hold 62 random
// bits; the first 8 (time) are mixed in so ids that differ only there stay apart. The
// fold is only a filter: lookups compare the whole id, so equal folds are harmless.
func foldID(id *[16]byte) uint64 {
	return binary.LittleEndian.Uint64(id[8:]) ^ binary.LittleEndian.Uint64(id[:8])
}

// fib spreads a fold over the table (Fibonacci hashing). The fold is first xored with
// itself shifted right: the top bits of a product depend only on the bits below them, and
// ids whose randomness sits in the fold's high bits (sequential ids as tests and
// benchmarks write them: the counter's low byte lands in the fold's top byte) otherwise
// clustered into long probe runs (3.6 occupied slots per miss instead of about 0.9).
const fib = 0x9E3779B97F4A7C15

// orderIndex is one account's orders by id: open addressing with linear probing and
// backward-shift deletion, so a table with constant inserts and deletes never fills
// with tombstones (a Go map keyed by [16]byte cost 35-40% of the add/cancel path). The
// zero value is empty. Not safe for concurrent use: the account's mutex guards it,
// except the look-ahead's read of the table (table, in lookahead.go), which gen guards.
type orderIndex struct {
	slots []indexSlot // power-of-two length, at most half full; nil when never used
	n     int
	shift uint8  // 64 - log2(len(slots))
	gen   uint32 // odd while setSlots replaces slots and shift: a seqlock for table
}

type indexSlot struct {
	k uint64 // foldID(&o.id)
	o *order // nil: empty
}

func (ix *orderIndex) len() int { return ix.n }

func (ix *orderIndex) home(k uint64) int { return int(((k ^ k>>29) * fib) >> ix.shift) }

// probe is the one walk of a probe run (get, find, getClient and the look-ahead's
// prefetchOrder): from k's home slot it visits at most limit slots and returns the first
// order stored under k that is accepts, with its slot. A run that ends first returns nil
// and the empty slot that ended it (where an insert of k goes); a limit reached first
// returns nil, -1. The key is only a filter (a fold or a hash), so is compares the whole
// id, and only on a key match.
//
// It is written to fit the compiler's inlining budget, exactly (cost 80 of 80; the
// two tests as two ifs, or naming the slot, cost more, and the home slot computed in the
// loop costs up to 1% more instructions per add/cancel, per cachegrind). Inlined, each
// caller's func literal is inlined into the loop too, so the place and cancel paths make
// no indirect call, and prefetchOrder's unlocked reads stay outside the race detector
// (go:norace). The slot number is masked as a whole, so even a copy of ix pairing one
// table's slots with another's shift would stay in bounds (prefetchOrder's copy, read
// without the mutex, is consistent: table, lookahead.go). TestProbeIsInlined asks
// the compiler that every call of it, with its literal, is still inlined.
func (ix *orderIndex) probe(k uint64, limit uint, is func(*order) bool) (o *order, j int) {
	h := ix.home(k)
	for i := range limit {
		j = (h + int(i)) & (len(ix.slots) - 1)
		if o = ix.slots[j].o; o == nil || ix.slots[j].k == k && is(o) {
			return
		}
	}
	return nil, -1
}

// get returns the order with id, or nil.
func (ix *orderIndex) get(id *OrderID) *order {
	if ix.n == 0 {
		return nil
	}
	o, _ := ix.probe(foldID((*[16]byte)(id)), uint(len(ix.slots)), func(o *order) bool { return o.id == *id })
	return o
}

// find is get for a caller that inserts when the id is absent (the place's duplicate
// check): it also returns the id's fold and the empty slot that ended the probe, which is
// where add would put it, so addAt inserts without a second probe.
func (ix *orderIndex) find(id *OrderID) (o *order, k uint64, slot int) {
	k = foldID((*[16]byte)(id))
	if len(ix.slots) == 0 {
		return nil, k, -1
	}
	o, slot = ix.probe(k, uint(len(ix.slots)), func(o *order) bool { return o.id == *id })
	return o, k, slot
}

// addAt inserts o under the fold k and slot that find returned for its id (absent), with
// the index unchanged since; when the insert must grow the table it probes again.
func (ix *orderIndex) addAt(k uint64, o *order, slot int) {
	if slot < 0 || (ix.n+1)*2 > len(ix.slots) {
		ix.addKey(k, o)
		return
	}
	ix.slots[slot] = indexSlot{k: k, o: o}
	ix.n++
}

// add inserts o, whose id must not be in the index.
func (ix *orderIndex) add(o *order) { ix.addKey(foldID((*[16]byte)(&o.id)), o) }

// addKey inserts o under key k; o must not be in the index. An account's client id
// index (clientid.go) is an orderIndex keyed by the client order id's hash.
func (ix *orderIndex) addKey(k uint64, o *order) {
	if (ix.n+1)*2 > len(ix.slots) {
		ix.grow()
	}
	ix.put(indexSlot{k: k, o: o})
	ix.n++
}

func (ix *orderIndex) put(s indexSlot) {
	mask := len(ix.slots) - 1
	i := ix.home(s.k)
	for ix.slots[i].o != nil {
		i = (i + 1) & mask
	}
	ix.slots[i] = s
}

func (ix *orderIndex) grow() {
	old := ix.slots
	ix.setSlots(make([]indexSlot, max(8, 2*len(old))))
	for _, s := range old {
		if s.o != nil {
			ix.put(s)
		}
	}
}

// setSlots replaces the (empty) table with s. The look-ahead reads slots and shift
// without the mutex, from another market's runner (lookahead.go): a slice header is
// three words, and an old array read with a new, doubled length would make probe read
// past the array and return what lies there as an order. So the header's words are
// stored atomically between two increments of gen, and table takes them only when gen
// was even and unchanged around its (atomic) loads. Only this, once per doubling, pays;
// the locked paths read slots as before.
func (ix *orderIndex) setSlots(s []indexSlot) {
	h := (*sliceHeader)(unsafe.Pointer(&ix.slots))
	atomic.AddUint32(&ix.gen, 1)
	atomic.StorePointer(&h.data, unsafe.Pointer(unsafe.SliceData(s)))
	atomic.StoreUintptr(&h.len, uintptr(len(s)))
	atomic.StoreUintptr(&h.cap, uintptr(cap(s)))
	ix.shift = uint8(64 - log2(len(s)))
	atomic.AddUint32(&ix.gen, 1)
}

// sliceHeader is the layout of a slice, for setSlots and table's word-by-word access.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap uintptr
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// remove deletes o if it is in the index.
func (ix *orderIndex) remove(o *order) { ix.removeKey(foldID((*[16]byte)(&o.id)), o) }

// removeKey deletes o, added under key k, if it is in the index.
func (ix *orderIndex) removeKey(k uint64, o *order) {
	if ix.n == 0 {
		return
	}
	mask := len(ix.slots) - 1
	i := ix.home(k)
	for ix.slots[i].o != o {
		if ix.slots[i].o == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: pull later members of the probe run into the hole unless that
	// would move them before their home slot.
	for j := (i + 1) & mask; ix.slots[j].o != nil; j = (j + 1) & mask {
		h := ix.home(ix.slots[j].k)
		if (j-h)&mask >= (j-i)&mask { // the hole lies between home and j
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = indexSlot{}
	ix.n--
}

// all yields every order in the index, in no particular order. The index must not be
// changed while iterating.
func (ix *orderIndex) all(yield func(*order) bool) {
	for i := range ix.slots {
		if o := ix.slots[i].o; o != nil && !yield(o) {
			return
		}
	}
}
