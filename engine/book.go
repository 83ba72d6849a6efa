package engine

import "github.com/tidwall/btree"

// Level is one row of a depth snapshot.
type Level struct {
	Price Price
	Qty   Qty // total remaining quantity at Price
	Count int // number of orders
}

// LevelChange is the new total of one price level; Qty 0 means the level is gone.
type LevelChange struct {
	Side  Side
	Price Price
	Qty   Qty
}

// book is one symbol's order book. It holds levels and FIFO queues and knows nothing
// of balances. The index from order id to order (O(1) cancel) is the owning account's
// order map: a cancel always names its account, and keeping one map instead of two
// halves the hash-map work per order, the largest cost on the add/cancel path. Both sides are btree maps keyed so that the best level is the minimum:
// asks by price, bids by -price.
type book struct {
	sides  [2]btree.Map[int64, *level] // [0] bids, [1] asks
	best   [2]*level                   // cached minimum of each side, nil if empty
	orders int                         // resting orders
	free   []*level

	track   bool // record LevelChanges
	changes []LevelChange
}

func newBook() *book {
	return &book{}
}

func sideIdx(s Side) int { return int(s - 1) }

func key(s Side, p Price) int64 {
	if s == Buy {
		return -int64(p)
	}
	return int64(p)
}

// bestLevel returns the best level of side s, or nil.
func (b *book) bestLevel(s Side) *level { return b.best[sideIdx(s)] }

// add appends o to the back of its price level. o.remaining > 0.
func (b *book) add(o *order) {
	i := sideIdx(o.side)
	k := key(o.side, o.price)
	l, ok := b.sides[i].Get(k)
	if !ok {
		l = b.newLevel(o.price)
		b.sides[i].Set(k, l)
		if bl := b.best[i]; bl == nil || key(o.side, bl.price) > k {
			b.best[i] = l
		}
	}
	l.push(o)
	b.orders++
	b.changed(o.side, l)
}

// remove takes o out of the book.
func (b *book) remove(o *order) {
	l := o.lvl
	l.remove(o)
	b.orders--
	b.changed(o.side, l)
	if l.count == 0 {
		b.dropLevel(o.side, l)
	}
}

// fill reduces the resting o by q; o stays in the book even at zero (the caller removes it).
func (b *book) fill(o *order, q Qty) {
	o.remaining -= q
	o.lvl.total -= q
	b.changed(o.side, o.lvl)
}

func (b *book) dropLevel(s Side, l *level) {
	i := sideIdx(s)
	b.sides[i].Delete(key(s, l.price))
	if b.best[i] == l {
		b.best[i] = nil
		if _, nl, ok := b.sides[i].Min(); ok {
			b.best[i] = nl
		}
	}
	*l = level{}
	b.free = append(b.free, l)
}

func (b *book) newLevel(p Price) *level {
	if n := len(b.free); n > 0 {
		l := b.free[n-1]
		b.free = b.free[:n-1]
		l.price = p
		return l
	}
	return &level{price: p}
}

func (b *book) changed(s Side, l *level) {
	if b.track {
		b.changes = append(b.changes, LevelChange{Side: s, Price: l.price, Qty: l.total})
	}
}

// takeChanges appends the level changes recorded since the last call to dst.
func (b *book) takeChanges(dst []LevelChange) []LevelChange {
	dst = append(dst, b.changes...)
	b.changes = b.changes[:0]
	return dst
}

// depth appends up to n best levels of side s to dst.
func (b *book) depth(s Side, n int, dst []Level) []Level {
	if n <= 0 {
		return dst
	}
	b.sides[sideIdx(s)].Scan(func(_ int64, l *level) bool {
		dst = append(dst, Level{Price: l.price, Qty: l.total, Count: l.count})
		n--
		return n > 0
	})
	return dst
}

// scan calls fn for each level of side s from the best outwards until fn returns false.
func (b *book) scan(s Side, fn func(l *level) bool) {
	b.sides[sideIdx(s)].Scan(func(_ int64, l *level) bool { return fn(l) })
}

// levels returns the number of price levels on side s.
func (b *book) levels(s Side) int { return b.sides[sideIdx(s)].Len() }

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
	return func(yield func(*level) bool) {
		b.sides[sideIdx(s)].Scan(func(_ int64, l *level) bool { return yield(l) })
	}
}
