package marketdata

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/tidwall/btree"

	"svc/engine"
)

// ErrGap means an event skipped sequence numbers: events were lost between the journal
// and this replica, and the book must be reset from a depth snapshot.
var ErrGap = errors.New("marketdata: sequence gap")

// Level is one price level: the total quantity resting at Price.
type Level struct {
	Price engine.Price
	Qty   engine.Qty
}

type levelKey struct {
	side  engine.Side
	price engine.Price
}

// Book is a replica of one symbol's levels, kept from the symbol's event stream. The
// zero value is not ready; use NewBook.
type Book struct {
	seq  uint64
	time int64 // Time of the last applied event (unix ns)

	sides [2]btree.Map[int64, engine.Qty] // [0] bids keyed by -price, [1] asks by price

	// the limit order whose trades may follow (its own level shrinks by each fill)
	taker      engine.OrderID
	takerSide  engine.Side
	takerPrice engine.Price
	takerLimit bool

	// levels touched since the last TakeChanges, with their total before the first touch
	before map[levelKey]engine.Qty
}

// NewBook returns an empty book at sequence 0.
func NewBook() *Book { return &Book{before: map[levelKey]engine.Qty{}} }

// Seq is the sequence of the last event the book holds.
func (b *Book) Seq() uint64 { return b.seq }

// Time is the Time (unix nanoseconds) of the last event applied, 0 after Reset.
func (b *Book) Time() int64 { return b.time }

// Reset replaces the book with d, the engine's depth at d.Seq (all levels). Pending
// changes are dropped: whoever reads the book after a reset starts from a snapshot.
func (b *Book) Reset(d engine.Depth) {
	b.sides[0].Clear()
	b.sides[1].Clear()
	for _, l := range d.Bids {
		b.sides[0].Set(-int64(l.Price), l.Qty)
	}
	for _, l := range d.Asks {
		b.sides[1].Set(int64(l.Price), l.Qty)
	}
	b.seq, b.time = d.Seq, 0
	b.taker, b.takerLimit = engine.OrderID{}, false
	clear(b.before)
}

func sideIdx(s engine.Side) int {
	if s == engine.Sell {
		return 1
	}
	return 0
}

func key(s engine.Side, p engine.Price) int64 {
	if s == engine.Sell {
		return int64(p)
	}
	return -int64(p)
}

func (b *Book) add(s engine.Side, p engine.Price, q engine.Qty) {
	m := &b.sides[sideIdx(s)]
	k := key(s, p)
	old, _ := m.Get(k)
	lk := levelKey{s, p}
	if _, seen := b.before[lk]; !seen {
		b.before[lk] = old
	}
	if n := old + q; n > 0 {
		m.Set(k, n)
	} else {
		m.Delete(k)
	}
}

// Apply applies one event of the book's symbol. Events at or below Seq are skipped
// (applied reports false); an event beyond Seq+1 is ErrGap and changes nothing.
func (b *Book) Apply(e *engine.Event) (applied bool, err error) {
	if e.Seq <= b.seq {
		return false, nil
	}
	if e.Seq != b.seq+1 {
		return false, fmt.Errorf("%w: %s at %d, next is %d", ErrGap, e.Symbol, e.Seq, b.seq+1)
	}
	b.seq, b.time = e.Seq, e.Time
	switch e.Kind {
	case engine.EventAccepted:
		b.taker, b.takerSide, b.takerPrice = e.OrderID, e.Side, e.Price
		b.takerLimit = e.Type == engine.Limit
		if b.takerLimit {
			b.add(e.Side, e.Price, e.Qty)
		}
	case engine.EventTrade:
		maker := engine.Sell
		if e.Side == engine.Sell {
			maker = engine.Buy
		}
		b.add(maker, e.Price, -e.Qty)
		if b.takerLimit && b.taker == e.OrderID {
			b.add(b.takerSide, b.takerPrice, -e.Qty)
		}
	case engine.EventCancelled:
		if e.Price > 0 && e.Type != engine.Market {
			b.add(e.Side, e.Price, -e.Qty)
		}
	case engine.EventAmended:
		// The order leaves its old level with its old open quantity and rests at the new
		// price with the new one; trades that follow have it as the taker.
		b.add(e.Side, engine.Price(e.Amount), -engine.Qty(e.QuoteQty))
		b.add(e.Side, e.Price, e.Qty)
		b.taker, b.takerSide, b.takerPrice, b.takerLimit = e.OrderID, e.Side, e.Price, true
	}
	return true, nil
}

// Depth appends up to n levels per side (n <= 0: all), best first, to bids and asks.
func (b *Book) Depth(n int, bids, asks []Level) ([]Level, []Level) {
	return b.scan(0, n, bids), b.scan(1, n, asks)
}

func (b *Book) scan(side, n int, dst []Level) []Level {
	b.sides[side].Scan(func(k int64, q engine.Qty) bool {
		p := k
		if side == 0 {
			p = -k
		}
		dst = append(dst, Level{Price: engine.Price(p), Qty: q})
		n--
		return n != 0
	})
	return dst
}

// Levels returns the number of price levels of each side.
func (b *Book) Levels() (bids, asks int) { return b.sides[0].Len(), b.sides[1].Len() }

// Changed reports whether any level differs from the last TakeChanges.
func (b *Book) Changed() bool { return len(b.before) > 0 }

// TakeChanges appends the levels whose total differs from what it was at the previous
// TakeChanges (Qty 0: the level is gone), bids high to low and asks low to high, and
// starts a new window.
func (b *Book) TakeChanges(bids, asks []Level) ([]Level, []Level) {
	nb, na := len(bids), len(asks)
	for lk, old := range b.before {
		cur, _ := b.sides[sideIdx(lk.side)].Get(key(lk.side, lk.price))
		if cur == old {
			continue
		}
		if lk.side == engine.Sell {
			asks = append(asks, Level{lk.price, cur})
		} else {
			bids = append(bids, Level{lk.price, cur})
		}
	}
	clear(b.before)
	slices.SortFunc(bids[nb:], func(x, y Level) int { return cmp.Compare(y.Price, x.Price) })
	slices.SortFunc(asks[na:], func(x, y Level) int { return cmp.Compare(x.Price, y.Price) })
	return bids, asks
}
