package engine

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// SnapshotVersion is the first byte after the magic of every snapshot. Version 2 adds
// each market's countdowns (account, owner, deadline) after its closed orders; version 3
// an order's metadata (flag bit 16, then its bytes). Restore still reads versions 1 and 2.
const SnapshotVersion byte = 3

var snapshotMagic = []byte("SVCENG")

// ErrBadSnapshot is returned by Restore for data it cannot read.
var ErrBadSnapshot = errors.New("engine: bad snapshot")

// Snapshot appends a compact binary image of every book and account to dst and returns
// it with the journal offset it corresponds to: the image holds exactly the effects of
// the events up to that offset. On a running engine it first pauses every runner at a
// batch boundary (a barrier command through each ring), and resumes them afterwards;
// it may then return ErrBusy if a ring stays full. It returns ErrUnavailable, and no
// image, once the engine has fail-stopped (checked again after the barrier, which waits
// for every batch in flight): that state may hold effects the journal never got.
func (e *Engine) Snapshot(dst []byte) ([]byte, uint64, error) {
	return e.snapshot(dst, nil)
}

// snapshot is Snapshot; resumed, when not nil, is called as the runners are released
// (BenchmarkSnapshotPause times the pause with it).
func (e *Engine) snapshot(dst []byte, resumed func()) ([]byte, uint64, error) {
	if e.failed.Load() {
		return dst, 0, ErrUnavailable
	}
	switch e.state.Load() {
	case stateNew:
		return e.core.snapshot(dst, e.offset.Load()), e.offset.Load(), nil
	case stateStopped:
		e.wg.Wait()
		return e.core.snapshot(dst, e.offset.Load()), e.offset.Load(), nil
	}
	e.barrier.Lock() // one snapshot at a time
	defer e.barrier.Unlock()
	var arrived sync.WaitGroup
	q := &query{arrived: &arrived, resume: make(chan struct{})}
	done := make([]*Waiter, 0, len(e.runners))
	paused := true
	resume := func() {
		if !paused {
			return
		}
		paused = false
		close(q.resume)
		if resumed != nil {
			resumed()
		}
		for _, w := range done {
			w.Wait()
		}
	}
	defer resume()
	for _, rn := range e.runners {
		arrived.Add(1)
		w := NewWaiter()
		var err error
		for try := 0; try < 1000; try++ {
			if err = rn.submit(&Command{Kind: cmdBarrier, query: q}, w); err != ErrBusy {
				break
			}
			runtime.Gosched()
		}
		if err != nil {
			// Runners already paused resume through the deferred close.
			return dst, 0, err
		}
		done = append(done, w)
	}
	arrived.Wait()
	// Every runner has completed its batches: a journal failure among them has
	// fail-stopped the engine by now, and its state holds effects the journal lacks.
	if e.failed.Load() {
		return dst, 0, ErrUnavailable
	}
	off := e.offset.Load()
	// Only capture reads the engine's state; the runners go on while finish sorts the
	// copies it took.
	p := e.core.capture(dst, off)
	resume()
	return p.finish(), off, nil
}

// Restore loads a snapshot into an engine that is not started. Replay the journal after
// the returned offset with Apply.
func (e *Engine) Restore(data []byte) (offset uint64, err error) {
	if e.state.Load() != stateNew {
		return 0, ErrRunning
	}
	off, err := e.core.restore(data)
	if err != nil {
		return 0, err
	}
	e.offset.Store(off)
	return off, nil
}

type enc struct{ b []byte }

func (w *enc) u(v uint64)    { w.b = binary.AppendUvarint(w.b, v) }
func (w *enc) i(v int64)     { w.b = binary.AppendVarint(w.b, v) }
func (w *enc) id(v [16]byte) { w.b = append(w.b, v[:]...) }
func (w *enc) s(v string)    { w.u(uint64(len(v))); w.b = append(w.b, v...) }

func (c *core) snapshot(dst []byte, offset uint64) []byte {
	return c.capture(dst, offset).finish()
}

// capture is the part of a snapshot that reads the engine's state, so on a running engine
// the runners stay paused through it and no longer: it writes the header and every
// market's orders and countdowns to their final place, leaves a gap of the exact size of
// the accounts section before them, and copies what that section needs (each non-empty
// account's balances and transfer ids) out of the accounts. finish, which may run after
// the runners resume, sorts the copies and fills the gap: most of an image's cost is the
// sorting of transfer ids (every one an account ever took, kept for idempotency), not its
// orders. Orders are mutated in place by the runners, so they are encoded here.
func (c *core) capture(dst []byte, offset uint64) *pendingImage {
	p := &pendingImage{}
	accts := c.accts.all() // ordered by id later, by finish: an account's id never changes
	nT := 0
	live := accts[:0]
	for _, a := range accts {
		if !a.empty() {
			live = append(live, a)
			nT += len(a.transfers)
		}
	}
	p.accts = make([]capturedAccount, len(live))
	p.tids = make([]TransferID, 0, nT)
	size := 0
	for i, a := range live {
		ca := &p.accts[i]
		ca.id, ca.bal = a.id, a.bal
		ca.lo = len(p.tids)
		for t := range a.transfers {
			p.tids = append(p.tids, t)
		}
		ca.hi = len(p.tids)
		size += 16 + uvarintLen(uint64(ca.hi-ca.lo)) + 16*(ca.hi-ca.lo)
		for as := NGN; as < numAssets; as++ {
			size += varintLen(ca.bal[as].Available) + varintLen(ca.bal[as].Locked)
		}
	}

	w := &enc{b: dst}
	w.b = append(w.b, snapshotMagic...)
	w.b = append(w.b, SnapshotVersion)
	w.u(offset)
	w.u(c.funds.seq)
	w.u(uint64(len(p.accts)))
	p.gap, p.end = len(w.b), len(w.b)+size
	if p.end > cap(w.b) {
		w.b = slices.Grow(w.b, p.end-len(w.b))
	}
	w.b = w.b[:p.end]

	w.u(uint64(len(c.markets)))
	var list []*order
	for _, m := range c.markets {
		w.s(m.symbol)
		w.u(m.seq)
		list = list[:0]
		for _, s := range [2]Side{Buy, Sell} {
			for l := range m.book.levelsFrom(s) {
				for o := l.head; o != nil; o = o.next {
					list = append(list, o)
				}
			}
		}
		w.u(uint64(len(list)))
		writeOrders(w, list)
		list = list[:0]
		for i := range m.closed {
			if o := m.closed[(m.closedPos+i)%len(m.closed)]; o != nil {
				list = append(list, o)
			}
		}
		w.u(uint64(len(list)))
		writeOrders(w, list)
		cds := make([]countdownKey, 0, len(m.countdowns))
		for k := range m.countdowns {
			cds = append(cds, k)
		}
		slices.SortFunc(cds, compareKeys)
		w.u(uint64(len(cds)))
		for _, k := range cds {
			w.id(k.acct)
			w.id(k.owner)
			w.i(m.countdowns[k])
		}
	}
	p.b = w.b
	return p
}

// pendingImage is a snapshot whose accounts section is still to be written (capture).
type pendingImage struct {
	b     []byte // the image, with the accounts section's bytes at [gap, end) unwritten
	gap   int
	end   int // gap plus the section's size, as capture computed it from the copies
	accts []capturedAccount
	tids  []TransferID // every captured account's transfer ids, unsorted, at its [lo, hi)
}

type capturedAccount struct {
	id     AccountID
	bal    Balances
	lo, hi int
}

// finish writes the accounts section, ordered by account id and each account's transfer
// ids by id, as the format has always had it, and returns the image.
func (p *pendingImage) finish() []byte {
	slices.SortFunc(p.accts, func(x, y capturedAccount) int { return compareID((*[16]byte)(&x.id), (*[16]byte)(&y.id)) })
	// Appends within the gap's capacity write in place; the check below catches a size
	// computed differently from what was written, which would otherwise tear the image.
	end := p.end
	w := &enc{b: p.b[p.gap:p.gap:end]}
	for i := range p.accts {
		ca := &p.accts[i]
		w.id(ca.id)
		for as := NGN; as < numAssets; as++ {
			w.i(ca.bal[as].Available)
			w.i(ca.bal[as].Locked)
		}
		tids := p.tids[ca.lo:ca.hi]
		slices.SortFunc(tids, func(x, y TransferID) int { return compareID((*[16]byte)(&x), (*[16]byte)(&y)) })
		w.u(uint64(len(tids)))
		for _, t := range tids {
			w.id(t)
		}
	}
	if len(w.b) != end-p.gap || (len(w.b) > 0 && &w.b[0] != &p.b[p.gap]) {
		panic("engine: snapshot accounts section size mismatch")
	}
	return p.b
}

// compareID orders 16-byte ids as bytes.Compare does, with two big-endian word loads.
func compareID(x, y *[16]byte) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(x[:8]), binary.BigEndian.Uint64(y[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(x[8:]), binary.BigEndian.Uint64(y[8:]))
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func varintLen(v int64) int { return uvarintLen(uint64(v)<<1 ^ uint64(v>>63)) }

// writeOrders writes the orders of list. Most of an order's cost is waiting for memory:
// the order (the book's walk read only its links, long since evicted in a large book) and
// its account's id, which is scattered; both are prefetched some orders ahead, the order
// first so that reading its account pointer later does not wait.
func writeOrders(w *enc, list []*order) {
	const ahead = 16
	for i, o := range list {
		if j := i + 2*ahead; j < len(list) {
			prefetch(uintptr(unsafe.Pointer(list[j])), 3)
		}
		if j := i + ahead; j < len(list) {
			prefetch(uintptr(unsafe.Pointer(list[j].acct)), 1)
		}
		writeOrder(w, o)
	}
}

func writeOrder(w *enc, o *order) {
	w.id(o.id)
	w.id(o.acct.id)
	w.s(o.clientID)
	w.i(o.time)
	w.u(o.seq)
	w.i(int64(o.price))
	w.i(o.quoteQty)
	flags := uint64(o.side) | uint64(o.typ)<<2 | uint64(o.tif)<<4 | uint64(o.stp)<<6 |
		uint64(o.state)<<8 | uint64(o.reason)<<11
	if o.postOnly {
		flags |= 1 << 15
	}
	if o.meta != "" {
		flags |= 1 << 16
	}
	w.u(flags)
	if o.meta != "" {
		w.s(o.meta)
	}
	w.i(int64(o.qty))
	w.i(int64(o.filled))
	w.i(int64(o.remaining))
	w.i(o.reserved)
}

type dec struct {
	b   []byte
	err error
}

func (r *dec) u() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrBadSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *dec) i() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = ErrBadSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *dec) id() (v [16]byte) {
	if len(r.b) < 16 {
		r.err = ErrBadSnapshot
		return
	}
	copy(v[:], r.b)
	r.b = r.b[16:]
	return
}

func (r *dec) s() string {
	n := r.u()
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = ErrBadSnapshot
		return ""
	}
	v := string(r.b[:n])
	r.b = r.b[n:]
	return v
}

// count reads a length and checks it against the bytes left (each item needs min bytes).
func (r *dec) count(min int) int {
	n := r.u()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = ErrBadSnapshot
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (c *core) restore(data []byte) (uint64, error) {
	if !bytes.HasPrefix(data, snapshotMagic) || len(data) < len(snapshotMagic)+1 {
		return 0, ErrBadSnapshot
	}
	version := data[len(snapshotMagic)]
	if version < 1 || version > SnapshotVersion {
		return 0, errors.New("engine: unsupported snapshot version")
	}
	r := &dec{b: data[len(snapshotMagic)+1:]}
	off := r.u()
	c.funds.seq = r.u()
	nA := r.count(16)
	for i := 0; i < nA && r.err == nil; i++ {
		a := c.accts.getOrCreate(r.id())
		for as := NGN; as < numAssets; as++ {
			a.bal[as].Available = r.i()
			a.bal[as].Locked = r.i()
		}
		nT := r.count(16)
		if nT > 0 {
			a.transfers = make(map[TransferID]struct{}, nT)
		}
		for j := 0; j < nT && r.err == nil; j++ {
			a.transfers[r.id()] = struct{}{}
		}
	}
	nM := r.count(1)
	for i := 0; i < nM && r.err == nil; i++ {
		sym := r.s()
		m := c.bySymbol[sym]
		if m == nil {
			if r.err == nil {
				return 0, errors.New("engine: snapshot has unknown symbol " + sym)
			}
			break
		}
		m.seq = r.u()
		nO := r.count(32)
		for j := 0; j < nO && r.err == nil; j++ {
			o := readOrder(r, m)
			if r.err == nil {
				if o.state.Closed() || o.remaining <= 0 {
					return 0, ErrBadSnapshot
				}
				m.book.add(o)
			}
		}
		nC := r.count(32)
		for j := 0; j < nC && r.err == nil; j++ {
			o := readOrder(r, m)
			if r.err == nil {
				m.retire(o)
			}
		}
		if version < 2 {
			continue
		}
		nD := r.count(33)
		for j := 0; j < nD && r.err == nil; j++ {
			k := countdownKey{AccountID(r.id()), TransferID(r.id())}
			if d := r.i(); r.err == nil {
				m.setCountdown(k, d)
			}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = ErrBadSnapshot
	}
	return off, r.err
}

func readOrder(r *dec, m *market) *order {
	o := m.pool.get()
	o.id = r.id()
	o.acct = m.accts.get(r.id())
	o.mkt = m
	o.clientID = r.s()
	o.time = r.i()
	o.seq = r.u()
	o.price = Price(r.i())
	o.quoteQty = r.i()
	f := r.u()
	o.side, o.typ, o.tif, o.stp = Side(f&3), OrderType(f>>2&3), TimeInForce(f>>4&3), STPMode(f>>6&3)
	o.state, o.reason = OrderState(f>>8&7), CancelReason(f>>11&7)
	o.postOnly = f&(1<<15) != 0
	if f&(1<<16) != 0 {
		o.meta = r.s()
	}
	o.qty = Qty(r.i())
	o.filled = Qty(r.i())
	o.remaining = Qty(r.i())
	o.reserved = r.i()
	if o.side != Buy && o.side != Sell {
		r.err = ErrBadSnapshot
	}
	if r.err == nil {
		o.acct.mu.Lock()
		o.acct.addOrder(o)
		o.acct.mu.Unlock()
	}
	return o
}
