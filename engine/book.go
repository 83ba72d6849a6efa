package engine

import (
	"math/bits"

	"github.com/tidwall/btree"
)

// Level is one row of a depth snapshot.
type Level struct {
	Price Price
	Qty   Qty // total remaining quantity at Price
	Count int // number of orders
}

// book is one symbol's order book. It holds levels and FIFO queues and knows nothing
// of balances. The index from order id to order (O(1) cancel) is the owning account's
// order index: a cancel always names its account, and keeping one index instead of two
// halves the hashing work per order.
//
// Each side orders its levels by a key whose minimum is the best price: price/tick for
// asks, -price/tick for bids. Levels whose key lies in a window of ladderSize ticks near
// the touch sit in a ladder (an array indexed by tick offset, with a two-level bitmap
// that finds the next occupied tick in a few word operations); levels outside the
// window sit in a btree. The window moves (rebase) only when an order arrives outside
// it while the ladder is empty or at a better price than the window's start, so a book
// whose activity stays within ladderSize ticks of the touch never touches the btree.
type book struct {
	sides  [2]bookSide // [0] bids, [1] asks
	tick   int64
	orders int // resting orders
	free   []*level
	tmp    []*level // rebase scratch
}

type bookSide struct {
	lad  ladder
	far  btree.Map[int64, *level] // levels whose key is outside the ladder's window
	best *level                   // the level with the smallest key, nil if empty
	n    int                      // levels
}

const (
	ladderShift = 14
	ladderSize  = 1 << ladderShift // ticks one side's ladder covers
	ladderWords = ladderSize / 64
	ladderSums  = ladderWords / 64
)

// ladder holds the levels whose key is in [base, base+ladderSize). lv is allocated on
// the side's first order; a bit of bits is set for each occupied offset, and a bit of
// sum for each non-zero word of bits.
type ladder struct {
	base int64
	n    int // occupied offsets
	lv   []*level
	bits [ladderWords]uint64
	sum  [ladderSums]uint64
}

func (d *ladder) has(k int64) bool { return d.lv != nil && uint64(k-d.base) < ladderSize }

func (d *ladder) set(off int, l *level) {
	d.lv[off] = l
	w := off >> 6
	d.bits[w] |= 1 << (off & 63)
	d.sum[w>>6] |= 1 << (w & 63)
	d.n++
}

func (d *ladder) clear(off int) {
	d.lv[off] = nil
	w := off >> 6
	d.bits[w] &^= 1 << (off & 63)
	if d.bits[w] == 0 {
		d.sum[w>>6] &^= 1 << (w & 63)
	}
	d.n--
}

// next returns the first occupied offset >= off, or -1.
func (d *ladder) next(off int) int {
	if off < 0 {
		off = 0
	}
	if off >= ladderSize || d.n == 0 {
		return -1
	}
	w := off >> 6
	if m := d.bits[w] >> (off & 63); m != 0 {
		return off + bits.TrailingZeros64(m)
	}
	w++
	for s := w >> 6; s < ladderSums; s++ {
		m := d.sum[s]
		if s == w>>6 {
			m &= ^uint64(0) << (w & 63)
		}
		if m != 0 {
			ww := s<<6 + bits.TrailingZeros64(m)
			return ww<<6 + bits.TrailingZeros64(d.bits[ww])
		}
	}
	return -1
}

func newBook(tick Price) *book {
	return &book{tick: int64(max(tick, 1))}
}

func sideIdx(s Side) int { return int(s - 1) }

// key orders prices so that the best is the minimum: asks by price, bids by -price.
func key(s Side, p Price) int64 {
	if s == Buy {
		return -int64(p)
	}
	return int64(p)
}

// key is the package key in ticks: consecutive ticks are consecutive ladder offsets.
func (b *book) key(s Side, p Price) int64 {
	k := int64(p)
	if b.tick != 1 {
		k /= b.tick
	}
	if s == Buy {
		return -k
	}
	return k
}

// bestLevel returns the best level of side s, or nil.
func (b *book) bestLevel(s Side) *level { return b.sides[sideIdx(s)].best }

// add appends o to the back of its price level. o.remaining > 0.
func (b *book) add(o *order) {
	sd := &b.sides[sideIdx(o.side)]
	k := b.key(o.side, o.price)
	d := &sd.lad
	if !d.has(k) && (d.lv == nil || d.n == 0 || k < d.base) {
		b.rebase(sd, k-ladderSize/8)
	}
	var l *level
	if d.has(k) {
		off := int(k - d.base)
		if l = d.lv[off]; l == nil {
			l = b.newLevel(o.price, k)
			d.set(off, l)
			b.newBest(sd, l)
		}
	} else {
		var ok bool
		if l, ok = sd.far.Get(k); !ok {
			l = b.newLevel(o.price, k)
			sd.far.Set(k, l)
			b.newBest(sd, l)
		}
	}
	l.push(o)
	b.orders++
}

func (b *book) newBest(sd *bookSide, l *level) {
	sd.n++
	if sd.best == nil || l.key < sd.best.key {
		sd.best = l
	}
}

// rebase moves sd's ladder window to start at base: every ladder level goes to the
// btree, then the btree's levels inside the new window come back. O(levels moved).
func (b *book) rebase(sd *bookSide, base int64) {
	d := &sd.lad
	if d.lv == nil {
		d.lv = make([]*level, ladderSize)
	}
	for off := d.next(0); off >= 0; off = d.next(off + 1) {
		l := d.lv[off]
		sd.far.Set(l.key, l)
		d.clear(off)
	}
	d.base = base
	if sd.far.Len() == 0 {
		return
	}
	b.tmp = b.tmp[:0]
	sd.far.Ascend(base, func(k int64, l *level) bool {
		if !d.has(k) {
			return false
		}
		b.tmp = append(b.tmp, l)
		return true
	})
	for _, l := range b.tmp {
		sd.far.Delete(l.key)
		d.set(int(l.key-base), l)
	}
	clear(b.tmp)
}

// remove takes o out of the book.
func (b *book) remove(o *order) {
	l := o.lvl
	l.remove(o)
	b.orders--
	if l.count == 0 {
		b.dropLevel(o.side, l)
	}
}

// fill reduces the resting o by q; o stays in the book even at zero (the caller removes it).
func (b *book) fill(o *order, q Qty) {
	o.remaining -= q
	o.lvl.total -= q
}

func (b *book) dropLevel(s Side, l *level) {
	sd := &b.sides[sideIdx(s)]
	d := &sd.lad
	if d.has(l.key) {
		d.clear(int(l.key - d.base))
	} else {
		sd.far.Delete(l.key)
	}
	sd.n--
	if sd.best == l {
		sd.best = sd.first(l.key)
	}
	*l = level{}
	b.free = append(b.free, l)
}

// first returns the level with the smallest key > after (every level's key is > after
// when after was the best), or nil.
func (sd *bookSide) first(after int64) *level {
	var best *level
	if d := &sd.lad; d.n > 0 {
		off := 0
		if after >= d.base {
			off = int(min(after-d.base+1, ladderSize))
		}
		if i := d.next(off); i >= 0 {
			best = d.lv[i]
		}
	}
	if sd.far.Len() > 0 {
		if _, l, ok := sd.far.Min(); ok && (best == nil || l.key < best.key) {
			best = l
		}
	}
	return best
}

func (b *book) newLevel(p Price, k int64) *level {
	if n := len(b.free); n > 0 {
		l := b.free[n-1]
		b.free = b.free[:n-1]
		l.price, l.key = p, k
		return l
	}
	return &level{price: p, key: k}
}

// depth appends up to n best levels of side s to dst.
func (b *book) depth(s Side, n int, dst []Level) []Level {
	if n <= 0 {
		return dst
	}
	b.scan(s, func(l *level) bool {
		dst = append(dst, Level{Price: l.price, Qty: l.total, Count: l.count})
		n--
		return n > 0
	})
	return dst
}

// scan calls fn for each level of side s from the best outwards until fn returns false:
// the btree's levels before the window, the ladder's, then the btree's after it.
func (b *book) scan(s Side, fn func(l *level) bool) {
	sd := &b.sides[sideIdx(s)]
	d := &sd.lad
	if sd.far.Len() > 0 {
		stop := false
		sd.far.Scan(func(k int64, l *level) bool {
			if d.lv != nil && k >= d.base {
				return false
			}
			if !fn(l) {
				stop = true
				return false
			}
			return true
		})
		if stop || d.lv == nil {
			return
		}
	}
	for off := d.next(0); off >= 0; off = d.next(off + 1) {
		if !fn(d.lv[off]) {
			return
		}
	}
	if sd.far.Len() > 0 {
		sd.far.Ascend(d.base+ladderSize, func(_ int64, l *level) bool { return fn(l) })
	}
}

// levels returns the number of price levels on side s.
func (b *book) levels(s Side) int { return b.sides[sideIdx(s)].n }

// crosses reports whether a taker on side s with limit price p may trade at level price lp.
func crosses(s Side, p, lp Price) bool {
	if s == Buy {
		return lp <= p
	}
	return lp >= p
}

func opposite(s Side) Side { return 3 - s }

// levelsFrom yields the levels of side s from the best outwards. Levels must not be
// added or removed while iterating.
func (b *book) levelsFrom(s Side) func(yield func(*level) bool) {
	return func(yield func(*level) bool) { b.scan(s, yield) }
}
