package marketdata

import (
	"math"

	"svc/engine"
)

// Interval is a kline width.
type Interval struct {
	Name string // "1m", ..., "1w"
	Ms   int64  // width in milliseconds
	off  int64  // alignment offset from the epoch in milliseconds (weeks start on Monday)
}

const (
	minute = int64(60_000)
	hour   = 60 * minute
	day    = 24 * hour
)

// Intervals are the kline intervals, narrowest first.
var Intervals = [...]Interval{
	{"1m", minute, 0}, {"3m", 3 * minute, 0}, {"5m", 5 * minute, 0}, {"15m", 15 * minute, 0},
	{"30m", 30 * minute, 0}, {"1h", hour, 0}, {"2h", 2 * hour, 0}, {"4h", 4 * hour, 0},
	{"6h", 6 * hour, 0}, {"12h", 12 * hour, 0}, {"1d", day, 0},
	{"1w", 7 * day, 4 * day}, // 1970-01-01 was a Thursday; 1970-01-05 a Monday
}

// NumIntervals is len(Intervals).
const NumIntervals = len(Intervals)

// ParseInterval returns the index in Intervals of name ("1m" ... "1w").
func ParseInterval(name string) (int, bool) {
	for i := range Intervals {
		if Intervals[i].Name == name {
			return i, true
		}
	}
	return 0, false
}

// Open returns the open time (unix ms) of the candle holding the instant ms.
func (iv Interval) Open(ms int64) int64 {
	t := ms - iv.off
	q := t / iv.Ms
	if t%iv.Ms < 0 {
		q--
	}
	return q*iv.Ms + iv.off
}

// Candle is one kline. Prices are in price units, Volume in lots, Quote in quote units.
type Candle struct {
	OpenTime               int64 // unix ms
	Open, High, Low, Close engine.Price
	Volume                 engine.Qty
	Trades                 int64
	LastSeq                uint64 // the symbol sequence of the last trade in the candle
}

// CloseTime is the last millisecond of the candle of interval iv (open + width - 1).
func (c *Candle) CloseTime(iv Interval) int64 { return c.OpenTime + iv.Ms - 1 }

// MaxCandles is how many candles a Series keeps per interval (at least the 1440 minutes
// of the ticker window and the 1000 of the largest klines page).
const MaxCandles = 1500

// Series is the recent candles of one interval, oldest first.
type Series struct {
	iv      Interval
	candles []Candle
	from    int64 // candles opening at or after from are all here; math.MinInt64: all history
}

// Complete reports whether the series holds every candle opening at or after ms.
func (s *Series) Complete(ms int64) bool { return ms >= s.from }

// From is the earliest open time from which the series is complete (math.MinInt64 when
// it holds the symbol's whole history).
func (s *Series) From() int64 { return s.from }

// add records a trade at ms (never before the newest candle's open) and returns the
// candle it went into.
func (s *Series) add(ms int64, p engine.Price, q engine.Qty, seq uint64) *Candle {
	open := s.iv.Open(ms)
	n := len(s.candles)
	if n > 0 && open <= s.candles[n-1].OpenTime {
		c := &s.candles[n-1]
		c.High, c.Low = max(c.High, p), min(c.Low, p)
		c.Close, c.Volume, c.Trades, c.LastSeq = p, c.Volume+q, c.Trades+1, seq
		return c
	}
	if n == MaxCandles {
		copy(s.candles, s.candles[n/4:])
		s.candles = s.candles[:n-n/4]
		s.from = s.candles[0].OpenTime
	}
	s.candles = append(s.candles, Candle{OpenTime: open, Open: p, High: p, Low: p, Close: p, Volume: q, Trades: 1, LastSeq: seq})
	return &s.candles[len(s.candles)-1]
}

// Oldest returns the open time of the oldest candle kept, ok false if none.
func (s *Series) Oldest() (int64, bool) {
	if len(s.candles) == 0 {
		return 0, false
	}
	return s.candles[0].OpenTime, true
}

// Range appends candles in time order: with start (>= 0) the first limit candles opening
// at or after start; otherwise the last limit candles; end (>= 0) excludes candles opening
// after end.
func (s *Series) Range(start, end int64, limit int, dst []Candle) []Candle {
	cs := s.candles
	lo, hi := 0, len(cs)
	if start >= 0 {
		for lo < hi && cs[lo].OpenTime < start {
			lo++
		}
	}
	if end >= 0 {
		for hi > lo && cs[hi-1].OpenTime > end {
			hi--
		}
	}
	if hi-lo > limit {
		if start >= 0 {
			hi = lo + limit
		} else {
			lo = hi - limit
		}
	}
	return append(dst, cs[lo:hi]...)
}

// Last returns the newest candle.
func (s *Series) Last() (Candle, bool) {
	if len(s.candles) == 0 {
		return Candle{}, false
	}
	return s.candles[len(s.candles)-1], true
}

// Seed replaces the series with candles (oldest first, of this interval), keeping the
// newest MaxCandles. complete says candles are the symbol's whole history; otherwise the
// series is complete from the oldest candle kept.
func (s *Series) Seed(candles []Candle, complete bool) {
	if len(candles) > MaxCandles {
		candles, complete = candles[len(candles)-MaxCandles:], false
	}
	s.candles = append(s.candles[:0], candles...)
	s.from = math.MinInt64
	if !complete && len(candles) > 0 {
		s.from = candles[0].OpenTime
	}
}

// Flat is the candle of an interval without trades: open, high, low and close at the
// previous close, zero volume.
func Flat(open int64, prevClose engine.Price) Candle {
	return Candle{OpenTime: open, Open: prevClose, High: prevClose, Low: prevClose, Close: prevClose}
}

// Fill returns the candles of iv opening from `from` to `to` (open times, inclusive),
// oldest first, with no gaps: cs (oldest first, any range) gives the intervals that had
// trades, and every other interval is a Flat candle at the close before it. prev, if
// not nil, is a candle older than from (the close before the first interval). Intervals
// before the first known close (no trade ever before them) are left out. At most limit
// candles are returned: the first ones when fromStart, else the last ones.
func Fill(iv Interval, cs []Candle, prev *Candle, from, to int64, limit int, fromStart bool) []Candle {
	if to < from || limit <= 0 {
		return nil
	}
	n := (to-from)/iv.Ms + 1
	if n > int64(limit) {
		if fromStart {
			to = from + int64(limit-1)*iv.Ms
		} else {
			from = to - int64(limit-1)*iv.Ms
		}
		n = int64(limit)
	}
	out := make([]Candle, 0, n)
	var last engine.Price
	known := false
	if prev != nil && prev.OpenTime < from {
		last, known = prev.Close, true
	}
	i := 0
	for ; i < len(cs) && cs[i].OpenTime < from; i++ {
		last, known = cs[i].Close, true
	}
	for open := from; open <= to; open += iv.Ms {
		if i < len(cs) && cs[i].OpenTime == open {
			out = append(out, cs[i])
			last, known = cs[i].Close, true
			i++
			continue
		}
		for i < len(cs) && cs[i].OpenTime < open { // misaligned (should not happen): skip
			i++
		}
		if known {
			out = append(out, Flat(open, last))
		}
	}
	return out
}
