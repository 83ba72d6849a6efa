package ws

import (
	"strconv"

	"svc/engine"
	"svc/engine/marketdata"
)

// The public channels' messages are encoded by hand (strconv.Append*): they are built once
// per channel and shared by every subscriber, and this is the hot path of the hub.

// AppendLevels encodes levels as [["price","quantity"],...] (the REST order book and the channel).
func AppendLevels(b []byte, p *engine.PairConfig, ls []marketdata.Level) []byte {
	b = append(b, '[')
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `["`...)
		b = engine.AppendDecimal(b, int64(l.Price), p.PriceDecimals)
		b = append(b, `","`...)
		b = engine.AppendDecimal(b, int64(l.Qty), p.QtyDecimals)
		b = append(b, `"]`...)
	}
	return append(b, ']')
}

// appendBook encodes a snapshot (first == 0) or a diff of channel.
func appendBook(b []byte, channel string, p *engine.PairConfig, first, last uint64, bids, asks []marketdata.Level, ms int64) []byte {
	if first == 0 {
		b = append(b, `{"type":"snapshot","channel":"`...)
		b = append(b, channel...)
		b = append(b, `","sequence":`...)
	} else {
		b = append(b, `{"type":"diff","channel":"`...)
		b = append(b, channel...)
		b = append(b, `","first_sequence":`...)
		b = strconv.AppendUint(b, first, 10)
		b = append(b, `,"last_sequence":`...)
	}
	b = strconv.AppendUint(b, last, 10)
	b = append(b, `,"bids":`...)
	b = AppendLevels(b, p, bids)
	b = append(b, `,"asks":`...)
	b = AppendLevels(b, p, asks)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, '}')
}

func appendTrades(b []byte, channel, env string, p *engine.PairConfig, trades []marketdata.Trade, id func(env, symbol string, seq uint64, ns int64) []byte) []byte {
	b = append(b, `{"type":"trades","channel":"`...)
	b = append(b, channel...)
	b = append(b, `","data":[`...)
	for i := range trades {
		t := &trades[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":"`...)
		b = append(b, id(env, p.Symbol, t.Seq, t.Time)...)
		b = append(b, `","price":"`...)
		b = engine.AppendDecimal(b, int64(t.Price), p.PriceDecimals)
		b = append(b, `","quantity":"`...)
		b = engine.AppendDecimal(b, int64(t.Qty), p.QtyDecimals)
		b = append(b, `","side":"`...)
		b = append(b, t.Side.String()...)
		b = append(b, `","sequence":`...)
		b = strconv.AppendUint(b, t.Seq, 10)
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, t.Time/1e6, 10)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// AppendTicker encodes the ticker object of the REST route and the ticker channel.
func AppendTicker(b []byte, p *engine.PairConfig, t marketdata.Ticker) []byte {
	dec := p.PriceDecimals
	b = append(b, `{"symbol":"`...)
	b = append(b, p.Symbol...)
	b = append(b, `","price":"`...)
	b = engine.AppendDecimal(b, int64(t.Last), dec)
	b = append(b, `","volume_24h":"`...)
	b = engine.AppendDecimal(b, int64(t.Volume), p.QtyDecimals)
	b = append(b, `","change_24h":"`...)
	b = engine.AppendDecimal(b, int64(t.Change), dec)
	b = append(b, `","change_pct_24h":"`...)
	b = engine.AppendDecimal(b, t.ChangeBP, 2)
	b = append(b, `","high_24h":"`...)
	b = engine.AppendDecimal(b, int64(t.High), dec)
	b = append(b, `","low_24h":"`...)
	b = engine.AppendDecimal(b, int64(t.Low), dec)
	return append(b, `"}`...)
}

func appendTickerMsg(b []byte, channel string, p *engine.PairConfig, t marketdata.Ticker, ms int64) []byte {
	b = append(b, `{"type":"ticker","channel":"`...)
	b = append(b, channel...)
	b = append(b, `","data":`...)
	b = AppendTicker(b, p, t)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, '}')
}

// AppendCandle encodes one kline object of the REST route and the klines channel.
func AppendCandle(b []byte, p *engine.PairConfig, iv marketdata.Interval, c *marketdata.Candle) []byte {
	b = append(b, `{"open_time":`...)
	b = strconv.AppendInt(b, c.OpenTime, 10)
	b = append(b, `,"open":"`...)
	b = engine.AppendDecimal(b, int64(c.Open), p.PriceDecimals)
	b = append(b, `","high":"`...)
	b = engine.AppendDecimal(b, int64(c.High), p.PriceDecimals)
	b = append(b, `","low":"`...)
	b = engine.AppendDecimal(b, int64(c.Low), p.PriceDecimals)
	b = append(b, `","close":"`...)
	b = engine.AppendDecimal(b, int64(c.Close), p.PriceDecimals)
	b = append(b, `","volume":"`...)
	b = engine.AppendDecimal(b, int64(c.Volume), p.QtyDecimals)
	b = append(b, `","close_time":`...)
	b = strconv.AppendInt(b, c.CloseTime(iv), 10)
	return append(b, '}')
}

func appendKlineMsg(b []byte, channel string, p *engine.PairConfig, iv marketdata.Interval, c *marketdata.Candle) []byte {
	b = append(b, `{"type":"kline","channel":"`...)
	b = append(b, channel...)
	b = append(b, `","data":`...)
	b = AppendCandle(b, p, iv, c)
	return append(b, '}')
}
