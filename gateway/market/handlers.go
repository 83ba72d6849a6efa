// Package market serves the REST market data routes (pairs, order book, ticker, klines)
// from the market-data replicas the WebSocket hub keeps, so a REST order book's sequence
// is the stream's; klines older than memory holds are built from the persisted trades.
package market

import (
	"context"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/engine/marketdata"
	"svc/gateway/api"
	"svc/gateway/ws"
)

// Source is one environment's market data (*ws.Hub).
type Source interface {
	Pairs() []engine.PairConfig
	OrderBook(symbol string, depth int) (seq uint64, bids, asks []marketdata.Level, ok bool)
	Ticker(symbol string, nowMs int64) (marketdata.Ticker, bool)
	Candles(symbol string, iv int, start, end int64, limit int) (cs []marketdata.Candle, complete, ok bool)
}

// History gives candles older than the sources keep (*Store).
type History interface {
	Candles(ctx context.Context, env api.Environment, symbol string, iv int, start, end int64, limit int) ([]marketdata.Candle, error)
}

// Limits of the routes.
const (
	DefaultDepth = 20
	MaxDepth     = 500
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Handlers serves the market routes.
type Handlers struct {
	sources map[api.Environment]Source
	history History
	now     func() time.Time
}

// New returns the handlers; history may be nil (memory only); now nil means time.Now.
func New(sources map[api.Environment]Source, history History, now func() time.Time) *Handlers {
	if now == nil {
		now = time.Now
	}
	return &Handlers{sources: sources, history: history, now: now}
}

// Register adds the market routes.
func (h *Handlers) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/trading/market/pairs", protect(h.pairs))
	r.GET("/v1/trading/market/orderbook", protect(h.orderbook))
	r.GET("/v1/trading/market/ticker", protect(h.ticker))
	r.GET("/v1/trading/market/klines", protect(h.klines))
}

func (h *Handlers) source(ctx *fasthttp.RequestCtx) (api.Principal, Source, bool) {
	p, ok := api.RequirePrincipal(ctx, "authentication required")
	if !ok {
		return p, nil, false
	}
	src := h.sources[p.Environment]
	if src == nil {
		api.Fail(ctx, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", p.Environment))
		return p, nil, false
	}
	return p, src, true
}

func okBody(data []byte) []byte {
	b := make([]byte, 0, len(data)+32)
	b = append(b, `{"success":true,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

func (h *Handlers) pairs(ctx *fasthttp.RequestCtx) {
	_, src, ok := h.source(ctx)
	if !ok {
		return
	}
	type pair struct {
		Symbol            string `json:"symbol"`
		BaseAsset         string `json:"base_asset"`
		QuoteAsset        string `json:"quote_asset"`
		Status            string `json:"status"`
		TickSize          string `json:"tick_size"`
		StepSize          string `json:"step_size"`
		PricePrecision    int    `json:"price_precision"`
		QuantityPrecision int    `json:"quantity_precision"`
		MinQuantity       string `json:"min_quantity"`
		MinNotional       string `json:"min_notional"`
	}
	out := []pair{}
	for _, p := range src.Pairs() {
		out = append(out, pair{Symbol: p.Symbol, BaseAsset: p.Base.String(), QuoteAsset: p.Quote.String(), Status: "active",
			TickSize: p.FormatPrice(p.TickSize), StepSize: p.FormatQty(p.StepSize),
			PricePrecision: p.PriceDecimals, QuantityPrecision: p.QtyDecimals,
			MinQuantity: p.FormatQty(p.MinQty), MinNotional: engine.FormatAmount(p.Quote, p.MinNotional)})
	}
	api.Array(ctx, out, nil)
}

// symbolArg validates the symbol query argument.
func symbolArg(v *api.Validator, src Source, s string, required bool) (engine.PairConfig, bool) {
	if s == "" {
		if required {
			v.Add("symbol", "is required")
		}
		return engine.PairConfig{}, false
	}
	var names []string
	for _, p := range src.Pairs() {
		if p.Symbol == s {
			return p, true
		}
		names = append(names, p.Symbol)
	}
	v.OneOf("symbol", s, names...)
	return engine.PairConfig{}, false
}

// intArg parses an optional integer argument within [lo, hi] (def when absent).
func intArg(v *api.Validator, ctx *fasthttp.RequestCtx, name string, def, lo, hi int64) int64 {
	raw := ctx.QueryArgs().Peek(name)
	if len(raw) == 0 {
		return def
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < lo || n > hi {
		if hi == 1<<62 {
			v.Add(name, "must be a non-negative integer (unix milliseconds)")
		} else {
			v.Add(name, "must be an integer from "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
		}
		return def
	}
	return n
}

func (h *Handlers) orderbook(ctx *fasthttp.RequestCtx) {
	_, src, ok := h.source(ctx)
	if !ok {
		return
	}
	var v api.Validator
	p, _ := symbolArg(&v, src, string(ctx.QueryArgs().Peek("symbol")), true)
	depth := intArg(&v, ctx, "depth", DefaultDepth, 1, MaxDepth)
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	seq, bids, asks, _ := src.OrderBook(p.Symbol, int(depth))
	b := make([]byte, 0, 256+48*(len(bids)+len(asks)))
	b = append(b, `{"success":true,"data":{"symbol":"`...)
	b = append(b, p.Symbol...)
	b = append(b, `","bids":`...)
	b = ws.AppendLevels(b, &p, bids)
	b = append(b, `,"asks":`...)
	b = ws.AppendLevels(b, &p, asks)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, h.now().UnixMilli(), 10)
	b = append(b, `,"sequence":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, "}}"...)
	api.RawJSON(ctx, fasthttp.StatusOK, b)
}

func (h *Handlers) ticker(ctx *fasthttp.RequestCtx) {
	_, src, ok := h.source(ctx)
	if !ok {
		return
	}
	var v api.Validator
	sym := string(ctx.QueryArgs().Peek("symbol"))
	p, one := symbolArg(&v, src, sym, false)
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	now := h.now().UnixMilli()
	if one {
		t, _ := src.Ticker(p.Symbol, now)
		api.RawJSON(ctx, fasthttp.StatusOK, okBody(ws.AppendTicker(nil, &p, t)))
		return
	}
	b := []byte{'['}
	for i, p := range src.Pairs() {
		if i > 0 {
			b = append(b, ',')
		}
		t, _ := src.Ticker(p.Symbol, now)
		b = ws.AppendTicker(b, &p, t)
	}
	api.RawJSON(ctx, fasthttp.StatusOK, okBody(append(b, ']')))
}

func (h *Handlers) klines(ctx *fasthttp.RequestCtx) {
	p0, src, ok := h.source(ctx)
	if !ok {
		return
	}
	var v api.Validator
	args := ctx.QueryArgs()
	p, _ := symbolArg(&v, src, string(args.Peek("symbol")), true)
	ivName := string(args.Peek("interval"))
	iv, ivOK := marketdata.ParseInterval(ivName)
	if ivName == "" {
		v.Add("interval", "is required")
	} else if !ivOK {
		names := make([]string, len(marketdata.Intervals))
		for i, in := range marketdata.Intervals {
			names[i] = in.Name
		}
		v.OneOf("interval", ivName, names...)
	}
	limit := intArg(&v, ctx, "limit", DefaultLimit, 1, MaxLimit)
	start := intArg(&v, ctx, "start", -1, 0, 1<<62)
	end := intArg(&v, ctx, "end", -1, 0, 1<<62)
	if start >= 0 && end >= 0 && start > end {
		v.Add("start", "must not be after end")
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	cs, complete, _ := src.Candles(p.Symbol, iv, start, end, int(limit))
	if !complete && h.history != nil {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		old, err := h.history.Candles(c, p0.Environment, p.Symbol, iv, start, end, int(limit))
		cancel()
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		cs = merge(old, cs, start >= 0, int(limit))
	}
	in := marketdata.Intervals[iv]
	b := make([]byte, 0, 32+160*len(cs))
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = ws.AppendCandle(b, &p, in, &cs[i])
	}
	api.RawJSON(ctx, fasthttp.StatusOK, okBody(append(b, ']')))
}

// merge joins persisted candles with memory's (memory wins for the same open time: it
// may hold trades the projection has not written yet) and cuts to limit from the start
// (ascending request) or the end.
func merge(db, mem []marketdata.Candle, fromStart bool, limit int) []marketdata.Candle {
	out := make([]marketdata.Candle, 0, len(db)+len(mem))
	i, j := 0, 0
	for i < len(db) || j < len(mem) {
		switch {
		case j == len(mem) || (i < len(db) && db[i].OpenTime < mem[j].OpenTime):
			out = append(out, db[i])
			i++
		case i == len(db) || mem[j].OpenTime < db[i].OpenTime:
			out = append(out, mem[j])
			j++
		default:
			out = append(out, mem[j])
			i++
			j++
		}
	}
	if len(out) > limit {
		if fromStart {
			out = out[:limit]
		} else {
			out = out[len(out)-limit:]
		}
	}
	return out
}
