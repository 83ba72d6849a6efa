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
	limiter *ws.IPLimiter

	// PublicRate is how many requests per minute one client address may make without
	// credentials (default 1200, bursts of a tenth).
	PublicRate int
}

// New returns the handlers; history may be nil (memory only); now nil means time.Now.
func New(sources map[api.Environment]Source, history History, now func() time.Time) *Handlers {
	if now == nil {
		now = time.Now
	}
	return &Handlers{sources: sources, history: history, now: now, limiter: ws.NewIPLimiter(now), PublicRate: 1200}
}

// Register adds the market routes. They are public: a request with credentials goes
// through protect (the merchant's environment, rate limit and whitelist); one without is
// limited per client address and reads ?environment= (default live).
func (h *Handlers) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/trading/market/pairs", h.public(protect, h.pairs))
	r.GET("/v1/trading/market/orderbook", h.public(protect, h.orderbook))
	r.GET("/v1/trading/market/ticker", h.public(protect, h.ticker))
	r.GET("/v1/trading/market/klines", h.public(protect, h.klines))
}

func (h *Handlers) public(protect func(fasthttp.RequestHandler) fasthttp.RequestHandler, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	authed := next
	if protect != nil {
		authed = protect(next)
	}
	return func(ctx *fasthttp.RequestCtx) {
		if len(ctx.Request.Header.Peek("X-Api-Key")) > 0 || len(ctx.Request.Header.Peek("Authorization")) > 0 {
			authed(ctx)
			return
		}
		if d := h.limiter.Take(ws.IPKey(ctx.RemoteIP()), h.PublicRate); !d.Allowed {
			d.Fail(ctx)
			return
		}
		next(ctx)
	}
}

// source is the market of the caller's environment: the principal's, or for a public
// request ?environment= (sandbox or live, default live).
func (h *Handlers) source(ctx *fasthttp.RequestCtx) (api.Environment, Source, bool) {
	env := api.Live
	if p, ok := api.PrincipalOf(ctx); ok {
		env = p.Environment
	} else {
		switch v := string(ctx.QueryArgs().Peek("environment")); v {
		case "":
		case string(api.Sandbox), string(api.Live):
			env = api.Environment(v)
		default:
			api.Fail(ctx, api.Invalid("environment", "must be sandbox or live"))
			return env, nil, false
		}
	}
	src := h.sources[env]
	if src == nil {
		api.Fail(ctx, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", env))
		return env, nil, false
	}
	return env, src, true
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
	env, src, ok := h.source(ctx)
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
	in := marketdata.Intervals[iv]
	// The buckets asked for: every interval from..to gets a candle (a flat one at the
	// previous close when nothing traded), so read the candles with trades among them
	// and the last one before them.
	var from, to int64
	if start >= 0 {
		from = in.Open(start)
		if from < start {
			from += in.Ms
		}
		to = from + (limit-1)*in.Ms
		if end >= 0 {
			to = min(to, in.Open(end))
		}
		to = min(to, in.Open(h.now().UnixMilli()))
	} else {
		to = in.Open(h.now().UnixMilli())
		if end >= 0 {
			to = min(to, in.Open(end))
		}
		from = to - (limit-1)*in.Ms
	}
	cs, err := h.candles(ctx, env, src, p.Symbol, iv, from, to, int(limit))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	var prev *marketdata.Candle
	if from > 0 && (len(cs) == 0 || cs[0].OpenTime > from) {
		before, err := h.candles(ctx, env, src, p.Symbol, iv, -1, from-1, 1)
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		if len(before) > 0 && before[0].OpenTime < from {
			prev = &before[0]
		}
	}
	if prev == nil && start >= 0 && len(cs) > 0 && cs[0].OpenTime > from {
		// nothing traded before the first candle: the page starts there
		bound := to
		if end >= 0 {
			bound = min(in.Open(end), in.Open(h.now().UnixMilli()))
		} else {
			bound = in.Open(h.now().UnixMilli())
		}
		from = cs[0].OpenTime
		to = min(from+(limit-1)*in.Ms, bound)
		if cs, err = h.candles(ctx, env, src, p.Symbol, iv, from, to, int(limit)); err != nil {
			api.Fail(ctx, err)
			return
		}
	}
	cs = marketdata.Fill(in, cs, prev, from, to, int(limit), start >= 0)
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

// candles reads the candles with trades of symbol (see Source.Candles), from memory and,
// when memory does not reach back far enough, from the persisted trades.
func (h *Handlers) candles(ctx *fasthttp.RequestCtx, env api.Environment, src Source, symbol string, iv int, start, end int64, limit int) ([]marketdata.Candle, error) {
	cs, complete, _ := src.Candles(symbol, iv, start, end, limit)
	if complete || h.history == nil {
		return cs, nil
	}
	c, cancel := context.WithTimeout(api.Ctx(ctx), 10*time.Second)
	defer cancel()
	old, err := h.history.Candles(c, env, symbol, iv, start, end, limit)
	if err != nil {
		return nil, err
	}
	return merge(old, cs, start >= 0, limit), nil
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

// RateLimited is how many requests the per-address limit refused with 429 (for metrics).
func (h *Handlers) RateLimited() uint64 { return h.limiter.Refused() }
