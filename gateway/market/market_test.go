package market

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/engine/marketdata"
	"svc/gateway/api"
)

// fakeSource is one market with a known book and two candles.
type fakeSource struct {
	gotDepth, gotLimit int
	candles            []marketdata.Candle // nil: one candle at 60 s
}

func (f *fakeSource) Pairs() []engine.PairConfig { return engine.DefaultPairs() }

func (f *fakeSource) OrderBook(symbol string, depth int) (uint64, []marketdata.Level, []marketdata.Level, bool) {
	f.gotDepth = depth
	return 42, []marketdata.Level{{Price: 150000, Qty: 250}, {Price: 149999, Qty: 100}}, []marketdata.Level{{Price: 150100, Qty: 5}}, true
}

func (f *fakeSource) Ticker(symbol string, nowMs int64) (marketdata.Ticker, bool) {
	return marketdata.Ticker{Last: 148000, Open: 150000, High: 152000, Low: 148000, Volume: 800, Change: -2000, ChangeBP: -133, HasLast: true}, true
}

func (f *fakeSource) Candles(symbol string, iv int, start, end int64, limit int) ([]marketdata.Candle, bool, bool) {
	if f.gotLimit == 0 {
		f.gotLimit = limit // the first read is the page; a second one looks for the close before it
	}
	cs := f.candles
	if cs == nil {
		cs = []marketdata.Candle{{OpenTime: 60_000, Open: 1, High: 3, Low: 1, Close: 2, Volume: 150}}
	}
	var out []marketdata.Candle
	for _, c := range cs {
		if (start < 0 || c.OpenTime >= start) && (end < 0 || c.OpenTime <= end) {
			out = append(out, c)
		}
	}
	if len(out) > limit {
		if start >= 0 {
			out = out[:limit]
		} else {
			out = out[len(out)-limit:]
		}
	}
	return out, true, true
}

func call(t *testing.T, h *Handlers, route func(*fasthttp.RequestCtx), uri string) (int, map[string]any) {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	api.SetPrincipal(&ctx, api.Principal{MerchantID: uuid.New(), Environment: api.Sandbox})
	route(&ctx)
	var body map[string]any
	if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil {
		t.Fatalf("%s: %v: %s", uri, err, ctx.Response.Body())
	}
	return ctx.Response.StatusCode(), body
}

func TestRoutes(t *testing.T) {
	src := &fakeSource{}
	now := time.UnixMilli(1_000_000)
	h := New(map[api.Environment]Source{api.Sandbox: src}, nil, func() time.Time { return now })

	t.Run("pairs carry precision and minimums as decimal strings", func(t *testing.T) {
		code, body := call(t, h, h.pairs, "/v1/trading/market/pairs")
		ps := body["data"].([]any)
		p := ps[0].(map[string]any)
		if code != 200 || len(ps) != 3 || p["symbol"] != "USDT-NGN" || p["base_asset"] != "USDT" || p["quote_asset"] != "NGN" ||
			p["status"] != "active" || p["tick_size"] != "0.01" || p["step_size"] != "0.01" || p["price_precision"] != 2.0 ||
			p["quantity_precision"] != 2.0 || p["min_quantity"] != "1.00" || p["min_notional"] != "1000.00" {
			t.Fatalf("%d %v", code, p)
		}
	})
	t.Run("orderbook defaults to 20 levels and carries the sequence", func(t *testing.T) {
		code, body := call(t, h, h.orderbook, "/v1/trading/market/orderbook?symbol=USDT-NGN")
		d := body["data"].(map[string]any)
		if code != 200 || src.gotDepth != 20 || d["sequence"] != 42.0 || d["timestamp"] != 1_000_000.0 {
			t.Fatalf("%d depth %d %v", code, src.gotDepth, d)
		}
		if b := d["bids"].([]any)[0].([]any); b[0] != "1500.00" || b[1] != "2.50" {
			t.Fatalf("bids %v", d["bids"])
		}
	})
	t.Run("ticker of one pair is an object, of all an array", func(t *testing.T) {
		_, body := call(t, h, h.ticker, "/v1/trading/market/ticker?symbol=USDT-NGN")
		d := body["data"].(map[string]any)
		if d["price"] != "1480.00" || d["change_24h"] != "-20.00" || d["change_pct_24h"] != "-1.33" || d["volume_24h"] != "8.00" ||
			d["high_24h"] != "1520.00" || d["low_24h"] != "1480.00" {
			t.Fatalf("%v", d)
		}
		_, body = call(t, h, h.ticker, "/v1/trading/market/ticker")
		if n := len(body["data"].([]any)); n != 3 {
			t.Fatalf("%d tickers", n)
		}
	})
	t.Run("klines default to 100 and print candles", func(t *testing.T) {
		code, body := call(t, h, h.klines, "/v1/trading/market/klines?symbol=USDT-NGN&interval=1m")
		c := body["data"].([]any)[0].(map[string]any)
		if code != 200 || src.gotLimit != 100 || c["open_time"] != 60_000.0 || c["close_time"] != 119_999.0 || c["volume"] != "1.50" || c["close"] != "0.02" {
			t.Fatalf("%d limit %d %v", code, src.gotLimit, c)
		}
	})
	bad := []struct{ name, uri, field string }{
		{"orderbook without symbol", "/v1/trading/market/orderbook", "symbol"},
		{"orderbook with an unknown symbol", "/v1/trading/market/orderbook?symbol=BTC-NGN", "symbol"},
		{"orderbook deeper than 500", "/v1/trading/market/orderbook?symbol=USDT-NGN&depth=501", "depth"},
		{"orderbook depth 0", "/v1/trading/market/orderbook?symbol=USDT-NGN&depth=0", "depth"},
		{"ticker of an unknown symbol", "/v1/trading/market/ticker?symbol=X", "symbol"},
		{"klines without interval", "/v1/trading/market/klines?symbol=USDT-NGN", "interval"},
		{"klines with a bad interval", "/v1/trading/market/klines?symbol=USDT-NGN&interval=2m", "interval"},
		{"klines limit over 1000", "/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&limit=1001", "limit"},
		{"klines start after end", "/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&start=10&end=5", "start"},
		{"klines start not a number", "/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&start=yesterday", "start"},
	}
	for _, tc := range bad {
		t.Run(tc.name+" is a 400 naming "+tc.field, func(t *testing.T) {
			route := h.klines
			switch {
			case strings.Contains(tc.uri, "/orderbook"):
				route = h.orderbook
			case strings.Contains(tc.uri, "/ticker"):
				route = h.ticker
			}
			code, body := call(t, h, route, tc.uri)
			errs, _ := body["errors"].([]any)
			if code != 400 || len(errs) == 0 || errs[0].(map[string]any)["field"] != tc.field {
				t.Fatalf("%d %v", code, body)
			}
		})
	}
}

func TestKlinesHaveNoGaps(t *testing.T) {
	src := &fakeSource{candles: []marketdata.Candle{
		{OpenTime: 60_000, Open: 100, High: 300, Low: 100, Close: 200, Volume: 150},
		{OpenTime: 240_000, Open: 250, High: 250, Low: 250, Close: 250, Volume: 100},
	}}
	now := time.UnixMilli(330_000)
	h := New(map[api.Environment]Source{api.Sandbox: src}, nil, func() time.Time { return now })
	type k struct {
		open    float64
		o, c, v string
	}
	kl := func(uri string) []k {
		t.Helper()
		code, body := call(t, h, h.klines, uri)
		if code != 200 {
			t.Fatalf("%d %v", code, body)
		}
		var out []k
		for _, x := range body["data"].([]any) {
			m := x.(map[string]any)
			out = append(out, k{m["open_time"].(float64), m["open"].(string), m["close"].(string), m["volume"].(string)})
		}
		return out
	}
	want := []k{{60_000, "1.00", "2.00", "1.50"}, {120_000, "2.00", "2.00", "0.00"}, {180_000, "2.00", "2.00", "0.00"},
		{240_000, "2.50", "2.50", "1.00"}, {300_000, "2.50", "2.50", "0.00"}}
	if got := kl("/v1/trading/market/klines?symbol=USDT-NGN&interval=1m"); !slices.Equal(got, want) {
		t.Fatalf("latest:\n got  %v\n want %v", got, want)
	}
	if got := kl("/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&start=100000&limit=2"); !slices.Equal(got, want[1:3]) {
		t.Fatalf("from start (close before it looked up):\n got  %v\n want %v", got, want[1:3])
	}
	if got := kl("/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&end=200000&limit=2"); !slices.Equal(got, want[1:3]) {
		t.Fatalf("up to end:\n got  %v\n want %v", got, want[1:3])
	}
	if got := kl("/v1/trading/market/klines?symbol=USDT-NGN&interval=1m&start=0&limit=3"); !slices.Equal(got, want[:3]) {
		t.Fatalf("before the first trade nothing:\n got  %v\n want %v", got, want[:3])
	}
}

func TestMergePrefersMemory(t *testing.T) {
	db := []marketdata.Candle{{OpenTime: 1, Volume: 1}, {OpenTime: 2, Volume: 1}}
	mem := []marketdata.Candle{{OpenTime: 2, Volume: 5}, {OpenTime: 3, Volume: 1}}
	got := merge(db, mem, false, 2)
	if len(got) != 2 || got[0].OpenTime != 2 || got[0].Volume != 5 || got[1].OpenTime != 3 {
		t.Fatalf("%+v", got)
	}
	if got := merge(db, mem, true, 2); got[0].OpenTime != 1 || got[1].Volume != 5 {
		t.Fatalf("%+v", got)
	}
	_ = math.MinInt64
}
