package marketdata

import (
	"testing"
	"time"

	"svc/engine"
)

// t0 is a Monday, 00:00 UTC.
var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func ms(d time.Duration) int64 { return t0.Add(d).UnixMilli() }

// knownTrades feeds a fixed trade sequence (prices in 0.01 NGN, quantities in 0.01).
func knownTrades(t *testing.T) *Market {
	t.Helper()
	m := NewMarket(engine.DefaultPairs()[0])
	trades := []struct {
		at    time.Duration
		price engine.Price
		qty   engine.Qty
	}{
		{10 * time.Second, 150000, 100},              // 1500.00 x 1.00
		{50 * time.Second, 151000, 200},              // 1510.00 x 2.00
		{70 * time.Second, 149000, 50},               // 1490.00 x 0.50
		{3*time.Minute + 5*time.Second, 152000, 150}, // 1520.00 x 1.50
		{time.Hour + time.Second, 148000, 300},       // 1480.00 x 3.00
		{25 * time.Hour, 153000, 100},                // 1530.00 x 1.00
	}
	for i, tr := range trades {
		e := engine.Event{Seq: uint64(i + 1), Kind: engine.EventTrade, Time: t0.Add(tr.at).UnixNano(),
			Side: engine.Buy, Price: tr.price, Qty: tr.qty}
		if _, ok, _ := m.Apply(&e); !ok {
			t.Fatalf("trade %d not taken", i)
		}
	}
	return m
}

type want struct {
	open       time.Duration
	o, h, l, c engine.Price
	v          engine.Qty
}

func checkCandles(t *testing.T, name string, got []Candle, w []want) {
	t.Helper()
	if len(got) != len(w) {
		t.Fatalf("%s: %d candles, want %d: %+v", name, len(got), len(w), got)
	}
	for i := range w {
		g := got[i]
		if g.OpenTime != ms(w[i].open) || g.Open != w[i].o || g.High != w[i].h || g.Low != w[i].l || g.Close != w[i].c || g.Volume != w[i].v {
			t.Errorf("%s[%d] = open %v O %d H %d L %d C %d V %d, want %+v", name, i,
				time.UnixMilli(g.OpenTime).UTC(), g.Open, g.High, g.Low, g.Close, g.Volume, w[i])
		}
	}
}

func TestKlinesHandComputed(t *testing.T) {
	m := knownTrades(t)
	get := func(iv string) []Candle {
		i, ok := ParseInterval(iv)
		if !ok {
			t.Fatalf("interval %s", iv)
		}
		return m.Series(i).Range(-1, -1, 1000, nil)
	}
	checkCandles(t, "1m", get("1m"), []want{
		{0, 150000, 151000, 150000, 151000, 300},
		{time.Minute, 149000, 149000, 149000, 149000, 50},
		{3 * time.Minute, 152000, 152000, 152000, 152000, 150},
		{time.Hour, 148000, 148000, 148000, 148000, 300},
		{25 * time.Hour, 153000, 153000, 153000, 153000, 100},
	})
	checkCandles(t, "3m", get("3m"), []want{
		{0, 150000, 151000, 149000, 149000, 350},
		{3 * time.Minute, 152000, 152000, 152000, 152000, 150},
		{time.Hour, 148000, 148000, 148000, 148000, 300},
		{25 * time.Hour, 153000, 153000, 153000, 153000, 100},
	})
	for _, iv := range []string{"5m", "15m", "30m", "1h"} {
		checkCandles(t, iv, get(iv), []want{
			{0, 150000, 152000, 149000, 152000, 500},
			{time.Hour, 148000, 148000, 148000, 148000, 300},
			{25 * time.Hour, 153000, 153000, 153000, 153000, 100},
		})
	}
	for _, iv := range []string{"2h", "4h", "6h", "12h", "1d"} {
		last := 24 * time.Hour
		switch iv {
		case "2h", "4h", "12h":
			last = 24 * time.Hour
		}
		checkCandles(t, iv, get(iv), []want{
			{0, 150000, 152000, 148000, 148000, 800},
			{last, 153000, 153000, 153000, 153000, 100},
		})
	}
	checkCandles(t, "1w", get("1w"), []want{{0, 150000, 153000, 148000, 153000, 900}})
	if c := get("1w")[0]; c.CloseTime(Intervals[NumIntervals-1]) != ms(7*24*time.Hour)-1 {
		t.Errorf("1w close time %d", c.CloseTime(Intervals[NumIntervals-1]))
	}

	one := m.Series(0)
	checkCandles(t, "1m from T0+1m, limit 2", one.Range(ms(time.Minute), -1, 2, nil), []want{
		{time.Minute, 149000, 149000, 149000, 149000, 50},
		{3 * time.Minute, 152000, 152000, 152000, 152000, 150},
	})
	checkCandles(t, "1m last 2", one.Range(-1, -1, 2, nil), []want{
		{time.Hour, 148000, 148000, 148000, 148000, 300},
		{25 * time.Hour, 153000, 153000, 153000, 153000, 100},
	})
	checkCandles(t, "1m until T0+3m", one.Range(-1, ms(3*time.Minute), 10, nil), []want{
		{0, 150000, 151000, 150000, 151000, 300},
		{time.Minute, 149000, 149000, 149000, 149000, 50},
		{3 * time.Minute, 152000, 152000, 152000, 152000, 150},
	})
}

func TestTickerHandComputed(t *testing.T) {
	m := knownTrades(t)
	cases := []struct {
		name                  string
		now                   time.Duration
		last, open, high, low engine.Price
		vol                   engine.Qty
		change                engine.Price
		bp                    int64
	}{
		// before trade 6: every trade so far is in the window
		{"an hour in", time.Hour + 30*time.Second, 148000, 150000, 152000, 148000, 800, -2000, -133},
		// window = minutes T0+1m .. T0+24h: trades 1 and 2 have left it; trade 6 is still ahead
		// (asked about the past, the ticker ends at the window's last candle)
		{"a day in", 24*time.Hour + 30*time.Second, 148000, 149000, 152000, 148000, 500, -1000, -67},
		// window = minutes T0+61m .. T0+25h: only trade 6
		{"after trade 6", 25*time.Hour + 30*time.Second, 153000, 153000, 153000, 153000, 100, 0, 0},
		// nothing in the window: the last price stands, no volume, no change
		{"two days later", 50 * time.Hour, 153000, 153000, 153000, 153000, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := m.Ticker(ms(c.now))
			if tk.Last != c.last || tk.Open != c.open || tk.High != c.high || tk.Low != c.low ||
				tk.Volume != c.vol || tk.Change != c.change || tk.ChangeBP != c.bp || !tk.HasLast {
				t.Fatalf("ticker %+v, want %+v", tk, c)
			}
		})
	}
}

func TestLateTradeCountsInNewestCandle(t *testing.T) {
	m := NewMarket(engine.DefaultPairs()[0])
	for i, at := range []time.Duration{2 * time.Minute, 2*time.Minute - time.Millisecond} {
		e := engine.Event{Seq: uint64(i + 1), Kind: engine.EventTrade, Time: t0.Add(at).UnixNano(), Price: engine.Price(100 + i), Qty: 1}
		m.Apply(&e)
	}
	cs := m.Series(0).Range(-1, -1, 10, nil)
	if len(cs) != 1 || cs[0].Volume != 2 || cs[0].Close != 101 {
		t.Fatalf("candles %+v", cs)
	}
}

func TestSeededTradesAreNotCountedTwice(t *testing.T) {
	m := NewMarket(engine.DefaultPairs()[0])
	m.SeedCandles(0, []Candle{{OpenTime: ms(0), Open: 10, High: 10, Low: 10, Close: 10, Volume: 5, Trades: 1, LastSeq: 4}}, true, 4)
	e := engine.Event{Seq: 4, Kind: engine.EventTrade, Time: t0.UnixNano(), Price: 10, Qty: 5}
	if _, ok, _ := m.Apply(&e); ok {
		t.Fatal("seeded trade applied again")
	}
	e.Seq, e.Price = 5, 12
	if _, ok, _ := m.Apply(&e); !ok {
		t.Fatal("new trade not applied")
	}
	c, _ := m.Series(0).Last()
	if c.Volume != 10 || c.High != 12 || c.Open != 10 {
		t.Fatalf("candle %+v", c)
	}
}

func TestWeeksStartOnMonday(t *testing.T) {
	w := Intervals[NumIntervals-1]
	sunday := time.Date(2026, 1, 11, 23, 59, 0, 0, time.UTC).UnixMilli()
	if got := w.Open(sunday); got != t0.UnixMilli() {
		t.Fatalf("week of Sunday opens %v", time.UnixMilli(got).UTC())
	}
	if got := Intervals[10].Open(sunday); got != time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC).UnixMilli() {
		t.Fatalf("day opens %v", time.UnixMilli(got).UTC())
	}
}
