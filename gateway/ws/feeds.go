package ws

import (
	"cmp"
	"slices"
	"time"

	"svc/engine"
	"svc/engine/marketdata"
)

// bookIntervals are the update intervals a subscriber may choose for an order book, as a
// suffix of the channel (Binance's diff-depth streams take @100ms and @1000ms the same
// way). The first, no suffix, is the hub's flush (HubConfig.FlushEvery, 20 ms by default):
// a diff per flush. A slower interval gets the flushes' diffs merged into one per
// interval (each changed level's newest total), so it costs its subscribers and the
// server's writers a fraction of the frames while keeping the same sequence rules.
var bookIntervals = [...]struct {
	suffix string
	every  time.Duration
}{
	{"", 0},
	{"@100ms", 100 * time.Millisecond},
	{"@1000ms", time.Second},
}

// bookFeed is one orderbook channel of a symbol at one update interval: its subscribers,
// the last sequence it published, its cached snapshot and, for a slow interval, the
// levels changed since its last diff. Hub goroutine only.
type bookFeed struct {
	s     *symbolState
	every time.Duration // 0: a diff per flush
	ch    string        // "orderbook:SYMBOL" plus the interval's suffix
	subs  subSet

	pub uint64 // last_sequence of the last diff published (or of the book's reset)
	// stale are subscribers whose diffs were conflated while they lagged: each gets a
	// fresh snapshot once its queue has drained.
	stale   map[*conn]struct{}
	snap    *frame // cached snapshot at snapSeq
	snapSeq uint64

	// A slow feed's merged changes since pub, up to accSeq: a level's newest total once
	// (idx maps a level to its place in bids or asks), and when the next diff is due.
	bids, asks []marketdata.Level
	idx        map[levelKey]int
	accSeq     uint64
	due        time.Time
}

type levelKey struct {
	ask   bool
	price engine.Price
}

// pending reports whether the feed has a diff to publish: merged levels, or only a
// sequence that moved without changing a level (published too, as a diff without levels,
// so its subscribers reach the REST book's sequence).
func (f *bookFeed) pending() bool { return len(f.bids)+len(f.asks) > 0 || f.accSeq > f.pub }

// merge adds one flush's changed levels (absolute totals): a level changed again replaces
// its earlier total, so the diff carries each level once, at its newest total.
func (f *bookFeed) merge(bids, asks []marketdata.Level, seq uint64) {
	if f.idx == nil {
		f.idx = map[levelKey]int{}
	}
	for _, l := range bids {
		k := levelKey{false, l.Price}
		if i, ok := f.idx[k]; ok {
			f.bids[i] = l
			continue
		}
		f.idx[k] = len(f.bids)
		f.bids = append(f.bids, l)
	}
	for _, l := range asks {
		k := levelKey{true, l.Price}
		if i, ok := f.idx[k]; ok {
			f.asks[i] = l
			continue
		}
		f.idx[k] = len(f.asks)
		f.asks = append(f.asks, l)
	}
	f.accSeq = seq
}

// reset forgets the merged changes: the feed's subscribers are at seq (a snapshot).
func (f *bookFeed) reset(seq uint64) {
	f.bids, f.asks = f.bids[:0], f.asks[:0]
	clear(f.idx)
	f.pub, f.accSeq, f.snap = seq, seq, nil
}

// flushFeeds runs after a flush of s took the book's changes (bids, asks, up to seq): the
// slow feeds merge them and publish those that are due.
func (h *Hub) flushFeeds(s *symbolState, bids, asks []marketdata.Level, seq uint64) {
	for i := 1; i < len(s.feeds); i++ {
		f := &s.feeds[i]
		if f.subs.len() == 0 {
			f.reset(seq)
			continue
		}
		f.merge(bids, asks, seq)
	}
	h.publishDue(s)
}

// publishDue publishes the slow feeds of s whose interval has come, and notes in h.slowAt
// the earliest moment one of them has something to publish.
func (h *Hub) publishDue(s *symbolState) {
	now := h.cfg.Now()
	for i := 1; i < len(s.feeds); i++ {
		f := &s.feeds[i]
		if !f.pending() {
			continue
		}
		if now.Before(f.due) {
			if h.slowAt.IsZero() || f.due.Before(h.slowAt) {
				h.slowAt = f.due
			}
			continue
		}
		// Publish on the interval's boundaries of the clock: every subscriber of the
		// interval, whatever the symbol, is visited on the same ticks.
		f.due = now.Truncate(f.every).Add(f.every)
		slices.SortFunc(f.bids, func(a, b marketdata.Level) int { return cmp.Compare(b.Price, a.Price) })
		slices.SortFunc(f.asks, func(a, b marketdata.Level) int { return cmp.Compare(a.Price, b.Price) })
		msg := appendBook(make([]byte, 0, 128+24*(len(f.bids)+len(f.asks))), f.ch, &s.pair, f.pub+1, f.accSeq, f.bids, f.asks, s.m.Book.Time()/1e6)
		f.pub = f.accSeq
		f.bids, f.asks = f.bids[:0], f.asks[:0]
		clear(f.idx)
		h.broadcastBook(f, msg)
	}
}

// publishSlow runs when the earliest slow feed is due and no flush came first (trading
// went quiet). A book with changes no flush has taken yet is left to that flush, at most
// FlushEvery away: a snapshot (a lagging subscriber's) taken inside a diff window could
// miss a level that changes back before the window closes.
func (h *Hub) publishSlow() {
	h.slowAt = time.Time{}
	for _, s := range h.symbols {
		if !s.m.Book.Changed() {
			h.publishDue(s)
		}
	}
}

// feedOf returns the feed whose subscribers set is (nil if set is no book's).
func (h *Hub) feedOf(set *subSet) *bookFeed {
	for _, s := range h.symbols {
		for i := range s.feeds {
			if &s.feeds[i].subs == set {
				return &s.feeds[i]
			}
		}
	}
	return nil
}

// bookInterval is the index in bookIntervals of an orderbook channel's suffix (-1: none).
func bookInterval(suffix string) int {
	for i, bi := range bookIntervals {
		if i > 0 && bi.suffix == suffix {
			return i
		}
	}
	return -1
}
