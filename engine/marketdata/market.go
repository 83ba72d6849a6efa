package marketdata

import (
	"math"

	"svc/engine"
)

// Trade is one execution as the market data shows it.
type Trade struct {
	Seq   uint64
	Time  int64 // unix ns
	Price engine.Price
	Qty   engine.Qty
	Side  engine.Side // the taker's side
}

// Ticker is the rolling 24-hour statistics of a symbol. With no trade in the window,
// Open, High and Low equal Last and Volume and Change are zero; Last is zero (and
// HasLast false) if the symbol never traded.
type Ticker struct {
	Last, Open, High, Low engine.Price
	Volume                engine.Qty
	Change                engine.Price // Last - Open
	ChangeBP              int64        // Change / Open in hundredths of a percent, truncated toward zero
	Trades                int64
	HasLast               bool
}

// Market is one symbol's public market data: the level book, the klines of every
// interval and the last trade. Not safe for concurrent use.
type Market struct {
	Pair   engine.PairConfig
	Book   *Book
	series [NumIntervals]Series

	tradeSeq  uint64 // trades at or below this sequence are already in the candles (seed)
	lastPrice engine.Price
	hasLast   bool
	lastMs    int64 // newest trade time seen (ms); older trades count at this time
	dirty     uint16
}

// NewMarket returns an empty market of pair.
func NewMarket(pair engine.PairConfig) *Market {
	m := &Market{Pair: pair, Book: NewBook()}
	for i := range m.series {
		m.series[i].iv, m.series[i].from = Intervals[i], math.MinInt64
	}
	return m
}

// SeedCandles loads the candles of interval i (oldest first; complete: the whole history),
// built from trades up to sequence upTo; later trades arriving through Apply are added.
func (m *Market) SeedCandles(i int, candles []Candle, complete bool, upTo uint64) {
	m.series[i].Seed(candles, complete)
	m.tradeSeq = max(m.tradeSeq, upTo)
	if c, ok := m.series[0].Last(); ok && i == 0 {
		m.lastPrice, m.hasLast, m.lastMs = c.Close, true, max(m.lastMs, c.OpenTime)
	}
}

// SeedLast sets the last trade price (a symbol whose last trade is older than every
// seeded candle).
func (m *Market) SeedLast(p engine.Price) { m.lastPrice, m.hasLast = p, true }

// Apply applies one event of the market's symbol to the book and, for a trade not yet in
// the candles, to every interval's current candle. It reports whether the event was a
// new trade (tr is then filled). ErrGap comes from the book; the candles still take the
// trade so history stays complete while the book is reset.
func (m *Market) Apply(e *engine.Event) (tr Trade, isTrade bool, err error) {
	_, err = m.Book.Apply(e)
	if e.Kind != engine.EventTrade || e.Seq <= m.tradeSeq {
		return tr, false, err
	}
	m.tradeSeq = e.Seq
	ms := e.Time / 1e6
	if ms < m.lastMs {
		ms = m.lastMs
	}
	m.lastMs = ms
	for i := range m.series {
		m.series[i].add(ms, e.Price, e.Qty, e.Seq)
	}
	m.dirty = 1<<NumIntervals - 1
	m.lastPrice, m.hasLast = e.Price, true
	return Trade{Seq: e.Seq, Time: e.Time, Price: e.Price, Qty: e.Qty, Side: e.Side}, true, err
}

// TakeDirtyCandles returns a bit per interval whose newest candle changed since the last
// call, and clears them.
func (m *Market) TakeDirtyCandles() uint16 {
	d := m.dirty
	m.dirty = 0
	return d
}

// Series returns the candles of interval i.
func (m *Market) Series(i int) *Series { return &m.series[i] }

// TickerWindow is the number of one-minute candles the ticker covers.
const TickerWindow = 1440

// Ticker computes the rolling 24-hour ticker at nowMs (unix ms): the one-minute candles
// opening in the 1440 minutes up to and including nowMs's minute.
func (m *Market) Ticker(nowMs int64) Ticker {
	t := Ticker{Last: m.lastPrice, HasLast: m.hasLast}
	from := Intervals[0].Open(nowMs) - (TickerWindow-1)*minute
	cs := m.series[0].candles
	i := len(cs)
	for i > 0 && cs[i-1].OpenTime >= from {
		i--
	}
	first := true
	for _, c := range cs[i:] {
		if c.OpenTime > nowMs {
			break
		}
		if first {
			t.Open, t.High, t.Low, first = c.Open, c.High, c.Low, false
		}
		t.High, t.Low = max(t.High, c.High), min(t.Low, c.Low)
		t.Volume += c.Volume
		t.Trades += c.Trades
		t.Last = c.Close
	}
	if first {
		t.Open, t.High, t.Low = t.Last, t.Last, t.Last
		return t
	}
	t.Change = t.Last - t.Open
	if t.Open > 0 {
		t.ChangeBP = int64(t.Change) * 10_000 / int64(t.Open)
	}
	return t
}
