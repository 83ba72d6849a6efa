package market

import o "svc/gateway/openapi"

var levels = o.Arr(o.Arr(o.Decimal("[price, quantity]")))

var tickerSchema = o.Named("Ticker", o.Obj(map[string]o.Schema{
	"symbol": o.Str(""), "price": o.Decimal("last trade price"), "volume_24h": o.Decimal("base quantity traded in the rolling 24 hours"),
	"change_24h": o.Decimal("price minus the first trade price of the window"), "change_pct_24h": o.Decimal("change in percent, 2 decimals"),
	"high_24h": o.Decimal(""), "low_24h": o.Decimal(""),
}, "symbol", "price", "volume_24h", "change_24h", "change_pct_24h", "high_24h", "low_24h"))

// Docs documents the market routes.
func (h *Handlers) Docs() []o.Op {
	sym := o.Param{Name: "symbol", Required: true, Schema: o.Enum("USDT-NGN", "USDC-NGN", "USD-NGN")}
	return []o.Op{
		{Method: "GET", Path: "/v1/trading/market/pairs", Tag: "market data", Summary: "List trading pairs",
			Responses: map[int]o.Response{200: {Description: "data is the array of pairs", Data: o.Arr(o.Named("MarketPair", o.Obj(map[string]o.Schema{
				"symbol": o.Str(""), "base_asset": o.Str(""), "quote_asset": o.Str(""), "status": o.Enum("active", "inactive"),
				"tick_size": o.Decimal("price step"), "step_size": o.Decimal("quantity step"),
				"price_precision": o.Int("decimals of prices"), "quantity_precision": o.Int("decimals of quantities"),
				"min_quantity": o.Decimal(""), "min_notional": o.Decimal("smallest price x quantity, in the quote asset"),
			})))}}},
		{Method: "GET", Path: "/v1/trading/market/orderbook", Tag: "market data", Summary: "Order book (aggregated levels)",
			Description: "sequence is the symbol's event sequence the book corresponds to: the same numbers as the orderbook WebSocket channel's snapshots and diffs.",
			Query:       []o.Param{sym, {Name: "depth", Schema: o.Int("levels per side, default 20, at most 500")}},
			Responses: map[int]o.Response{200: {Description: "the book", Data: o.Obj(map[string]o.Schema{
				"symbol": o.Str(""), "bids": levels, "asks": levels,
				"timestamp": o.Int("server time, unix milliseconds"), "sequence": o.Int("stream sequence of the book"),
			}, "symbol", "bids", "asks", "timestamp", "sequence")}},
			Errors: []string{"VALIDATION_ERROR", "ENGINE_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/trading/market/ticker", Tag: "market data", Summary: "Rolling 24-hour ticker",
			Description: "With symbol: data is that pair's ticker; without: an array of every pair's. The window is the 1,440 one-minute candles up to the current minute.",
			Query:       []o.Param{{Name: "symbol", Schema: o.Enum("USDT-NGN", "USDC-NGN", "USD-NGN")}},
			Responses:   map[int]o.Response{200: {Description: "ticker (or array of tickers)", Data: tickerSchema}},
			Errors:      []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/trading/market/klines", Tag: "market data", Summary: "Candles (klines)",
			Description: "Candles aligned to UTC (weeks start on Monday), oldest first, without gaps: an interval without trades is a candle at the previous close with zero volume (intervals before the first trade are left out). Public: no credentials needed (?environment=sandbox|live, default live; rate limited per client address). With start: the first limit candles opening at or after start; otherwise the last limit candles opening at or before end (default now).",
			Query: []o.Param{sym,
				{Name: "interval", Required: true, Schema: o.Enum("1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w")},
				{Name: "limit", Schema: o.Int("default 100, at most 1000")},
				{Name: "start", Schema: o.Int("unix milliseconds, open time at or after")},
				{Name: "end", Schema: o.Int("unix milliseconds, open time at or before; not before start")}},
			Responses: map[int]o.Response{200: {Description: "data is the array of candles", Data: o.Arr(o.Named("Kline", o.Obj(map[string]o.Schema{
				"open_time": o.Int("unix ms"), "open": o.Decimal(""), "high": o.Decimal(""), "low": o.Decimal(""),
				"close": o.Decimal(""), "volume": o.Decimal("base quantity"), "close_time": o.Int("unix ms, open_time + width - 1"),
			})))}},
			Errors: []string{"VALIDATION_ERROR"}},
	}
}
