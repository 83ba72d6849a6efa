package engine

import (
	"sync/atomic"
	"unsafe"
)

// Look-ahead. On a deep book a command's cost is its cache misses, one after the other:
// a cancel finds its account's index slot, then the order (placed tens of thousands of
// commands ago), then its queue neighbour; a place misses on the slot that checks its id
// is new; evicting the oldest retained closed order misses on that order and its slot.
// Each account mutex is a locked instruction, which waits for every earlier load, so
// these misses cannot overlap by themselves. The runner knows the next commands of its
// batch, so it asks for their lines ahead (prefetch, which locked instructions do not
// wait for): the slots of the command after next, and the order of the next command's
// cancel, found in the slot asked for one command earlier. A miss then costs the
// latency left after one or two commands of work instead of all of it.
//
// The reads below touch account indexes without the account's mutex (another runner may
// be changing them) and only to compute addresses to prefetch: a stale slot or order
// prefetches a useless line, never a wrong result. They are invisible to the race
// detector (go:norace) for that reason. The one value they must not see torn is the
// table itself (its array and length), which a grow replaces: table reads it under the
// index's seqlock (setSlots, index.go) where it names an order.

// lookaheadMin is the number of resting orders from which a market looks ahead: below
// it the book, the index and the retained orders stay in the nearer caches and the
// look-ahead would cost more than the misses it hides.
const lookaheadMin = 8192

// orderLines is the number of cache lines of an order.
const orderLines = int(unsafe.Sizeof(order{}) / 64)

// ahead is what lookahead learnt of the commands after the next, for its next calls.
type ahead struct {
	a  *account // stage 1 (the command three ahead): its account, key and id
	k  uint64   // foldID of id
	id OrderID
	o  *order // stage 2 (two ahead, a cancel): the order its slot named
	oi OrderID
}

// lookahead prefetches for the commands the runner runs after the current one: c1
// next, c2 after it, c3 after that (any may be nil). Each command passes through three
// stages, one per call: as c3 its index slot is asked for; as c2 the slot is read (it
// has arrived by then) and a cancel's order asked for; as c1 the order is read and its
// queue neighbours, which the cancel will relink, asked for.
func (m *market) lookahead(c1, c2, c3 *Command) {
	if m.book.orders < lookaheadMin {
		return
	}
	h := &m.ahead
	if h.o != nil && c1 != nil && c1.Kind == CmdCancel && h.oi == c1.OrderID {
		prefetchNeighbours(h.o)
	}
	h.o = nil
	if h.a != nil && c2 != nil && c2.Kind == CmdCancel && h.id == c2.OrderID {
		if o := h.a.orders.prefetchOrder(h.k); o != nil {
			h.o, h.oi = o, c2.OrderID
		}
	}
	h.a = nil
	if c3 != nil && (c3.Kind == CmdPlace || c3.Kind == CmdCancel) {
		if a := m.accts.peek(c3.Account); a != nil {
			k := foldID((*[16]byte)(&c3.OrderID))
			a.orders.prefetchSlot(k)
			h.a, h.k, h.id = a, k, c3.OrderID
		}
	}
}

// prefetchNeighbours asks for the lines of o's queue neighbours. o came from an unlocked
// read of an index slot and may be another runner's order by now, hence go:norace.
//
//go:norace
func prefetchNeighbours(o *order) {
	if p := o.prev; p != nil {
		prefetch(uintptr(unsafe.Pointer(p)), 1)
	}
	if n := o.next; n != nil {
		prefetch(uintptr(unsafe.Pointer(n)), 1)
	}
}

// prefetchEvictee (called from lookaheadMin resting orders on) prefetches for the next
// two retires: the index slot of the order the next one evicts (its id was prefetched
// by the retire before) and the order the one after it evicts.
func (m *market) prefetchEvictee() {
	n := len(m.closed)
	pos := m.closedPos
	if o := m.closed[pos]; o != nil {
		o.acct.orders.prefetchSlot(foldID((*[16]byte)(&o.id)))
	}
	if pos++; pos == n {
		pos = 0
	}
	if o := m.closed[pos]; o != nil {
		prefetch(uintptr(unsafe.Pointer(o)), orderLines)
	}
}

// peek returns the account of id if the runner's front cache holds it, else nil; unlike
// get it never creates one.
func (c *accountCache) peek(id AccountID) *account {
	_, f := c.frontSlot(&id)
	if a := *f; a != nil && a.id == id {
		return a
	}
	return nil
}

// prefetchSlot prefetches the home slot of key k. It reads the table without table's
// seqlock: an old array read with a new length (or shift) only yields an address past the
// array, which is never made a Go pointer (the GC would find a bad one) and which a
// prefetch, faulting on nothing, merely wastes.
//
//go:norace
func (ix *orderIndex) prefetchSlot(k uint64) {
	h := (*sliceHeader)(unsafe.Pointer(&ix.slots))
	if h.len == 0 {
		return
	}
	i := uintptr(ix.home(k)) & (h.len - 1)
	prefetch(uintptr(h.data)+i*unsafe.Sizeof(indexSlot{}), 1)
}

// prefetchOrder prefetches the order of key k, if the first slots of its probe run
// (asked for by prefetchSlot a command earlier) name it, and returns it.
//
//go:norace
func (ix *orderIndex) prefetchOrder(k uint64) *order {
	p, n, shift := ix.table()
	if n == 0 {
		return nil
	}
	snap := orderIndex{slots: unsafe.Slice((*indexSlot)(p), n), shift: shift}
	// The key alone: reading the order's id would wait for the line this asks for.
	o, _ := snap.probe(k, 4, func(*order) bool { return true })
	if o != nil {
		prefetch(uintptr(unsafe.Pointer(o)), 2)
	}
	return o
}

// table returns ix's table (the array, its length and shift) read without the mutex, or
// a length of 0 when a grow was replacing it meanwhile (the seqlock of setSlots: gen odd,
// or changed). The header's words are loaded atomically so that they
// stay between gen's two loads on any CPU (plain loads on amd64); the array they name
// stays valid as long as the copy is held, though its contents may change under it.
//
//go:norace
func (ix *orderIndex) table() (p unsafe.Pointer, n uintptr, shift uint8) {
	h := (*sliceHeader)(unsafe.Pointer(&ix.slots))
	g := atomic.LoadUint32(&ix.gen)
	p = atomic.LoadPointer(&h.data)
	n = atomic.LoadUintptr(&h.len)
	shift = ix.shift
	if g&1 != 0 || atomic.LoadUint32(&ix.gen) != g {
		return nil, 0, 0
	}
	return p, n, shift
}

// lookahead does nothing for credits and debits: their working set is the accounts.
func (f *funds) lookahead(c1, c2, c3 *Command) {}
