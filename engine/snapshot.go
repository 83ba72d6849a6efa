package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"sync"
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
	defer func() {
		close(q.resume)
		for _, w := range done {
			w.Wait()
		}
	}()
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
	return e.core.snapshot(dst, off), off, nil
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
	w := &enc{b: dst}
	w.b = append(w.b, snapshotMagic...)
	w.b = append(w.b, SnapshotVersion)
	w.u(offset)
	w.u(c.funds.seq)

	accts := c.accts.sorted()
	n := 0
	for _, a := range accts {
		if !a.empty() {
			n++
		}
	}
	w.u(uint64(n))
	var tids []TransferID
	for _, a := range accts {
		if a.empty() {
			continue
		}
		w.id(a.id)
		for as := NGN; as < numAssets; as++ {
			w.i(a.bal[as].Available)
			w.i(a.bal[as].Locked)
		}
		tids = tids[:0]
		for t := range a.transfers {
			tids = append(tids, t)
		}
		slices.SortFunc(tids, func(x, y TransferID) int { return bytes.Compare(x[:], y[:]) })
		w.u(uint64(len(tids)))
		for _, t := range tids {
			w.id(t)
		}
	}

	w.u(uint64(len(c.markets)))
	for _, m := range c.markets {
		w.s(m.symbol)
		w.u(m.seq)
		var open []*order
		for _, s := range [2]Side{Buy, Sell} {
			for l := range m.book.levelsFrom(s) {
				for o := l.head; o != nil; o = o.next {
					open = append(open, o)
				}
			}
		}
		w.u(uint64(len(open)))
		for _, o := range open {
			writeOrder(w, o)
		}
		var closed []*order
		for i := range m.closed {
			if o := m.closed[(m.closedPos+i)%len(m.closed)]; o != nil {
				closed = append(closed, o)
			}
		}
		w.u(uint64(len(closed)))
		for _, o := range closed {
			writeOrder(w, o)
		}
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
	return w.b
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
