package trading_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/trading"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

type env struct {
	srv      *gatewaytest.Server
	a, b     authtest.Merchant
	engines  map[api.Environment]*engine.Engine
	journals map[api.Environment]*journal.Memory
	h        *trading.Handlers
}

// tick is the engines' clock (trading.Handlers.RunClock's step).
func (e *env) tick() { e.h.Tick() }

// newEnv runs the trading routes over real engines (sandbox and live, each with its own
// in-memory journal), the PostgreSQL projection and the real gateway with identity.
func newEnv(t *testing.T) *env {
	t.Helper()
	pool, _ := pgtest.New(t)
	e := &env{engines: map[api.Environment]*engine.Engine{}, journals: map[api.Environment]*journal.Memory{}}
	exchanges := map[api.Environment]trading.Exchange{}
	projectors := map[api.Environment]*projection.Projector{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, envName := range []api.Environment{api.Sandbox, api.Live} {
		j := journal.NewMemory()
		if err := j.Start(); err != nil {
			t.Fatal(err)
		}
		p := projection.New(pool, string(envName), j, nil)
		el := eventlog.New(j, func([]engine.Event, uint64) { p.Wake() })
		eng, err := engine.New(engine.Config{Journal: el})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Run(ctx) }()
		e.engines[envName], e.journals[envName] = eng, j
		exchanges[envName], projectors[envName] = eng, p
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, eng := range e.engines {
			eng.Stop()
		}
	})
	h := trading.New(exchanges, trading.Projections{Store: projection.NewStore(pool), Projectors: projectors}, nil)
	e.h = h
	e.srv = gatewaytest.New(t, pool, h)
	e.a = authtest.New(t, pool)
	e.b = authtest.New(t, pool)
	return e
}

func (e *env) fund(t *testing.T, key, asset, amount string) {
	t.Helper()
	e.srv.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": asset, "amount": amount})
}

type order struct {
	ID             string  `json:"id"`
	Symbol         string  `json:"symbol"`
	Side           string  `json:"side"`
	Type           string  `json:"type"`
	Quantity       string  `json:"quantity"`
	FilledQuantity string  `json:"filled_quantity"`
	Price          *string `json:"price"`
	Status         string  `json:"status"`
	CancelReason   *string `json:"cancel_reason"`
	ClientOrderID  *string `json:"client_order_id"`
	CreatedAt      string  `json:"created_at"`
}

func (e *env) place(t *testing.T, key string, body map[string]any) order {
	t.Helper()
	var o order
	e.srv.Must(t, 201, "POST", "/v1/trading/orders", key, body).Decode(t, &o)
	return o
}

type balance struct{ Asset, Available, Locked, Total string }

func (e *env) balances(t *testing.T, key string) map[string]balance {
	t.Helper()
	var bs []balance
	e.srv.Must(t, 200, "GET", "/v1/trading/balances", key, nil).Decode(t, &bs)
	out := map[string]balance{}
	for _, b := range bs {
		out[b.Asset] = b
	}
	return out
}

func TestPlaceOrderValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.a.SandboxKey
	e.fund(t, key, "NGN", "1000000")
	cases := []struct {
		name   string
		body   string
		fields []string
	}{
		{"everything missing", `{}`, []string{"symbol", "side", "type"}},
		{"unknown symbol, side and type", `{"symbol":"BTC-NGN","side":"hold","type":"stop","quantity":"1"}`, []string{"symbol", "side", "type"}},
		{"limit without price", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1"}`, []string{"price"}},
		{"negative quantity", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"-1","price":"1500"}`, []string{"quantity"}},
		{"zero price", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1","price":"0"}`, []string{"price"}},
		{"exponent", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1e2","price":"1500"}`, []string{"quantity"}},
		{"too many decimals", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1.001","price":"1500.001"}`, []string{"quantity", "price"}},
		{"below min quantity", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"0.5","price":"5000"}`, []string{"quantity"}},
		{"below min notional", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1","price":"999.99"}`, []string{"quantity"}},
		{"post_only on market", `{"symbol":"USDT-NGN","side":"buy","type":"market","quantity":"1","post_only":true}`, []string{"post_only"}},
		{"quote_quantity on a sell", `{"symbol":"USDT-NGN","side":"sell","type":"market","quote_quantity":"5000"}`, []string{"quote_quantity"}},
		{"bad time in force", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"1","price":"1500","time_in_force":"DAY"}`, []string{"time_in_force"}},
		{"quantity as a number", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":1,"price":"1500"}`, []string{"quantity"}},
		{"overflow", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"99999999999999999999","price":"1500"}`, []string{"quantity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.srv.Do(t, "POST", "/v1/trading/orders", key, tc.body)
			if r.Status != 400 || r.Message != api.CodeValidation {
				t.Fatalf("got %s", r)
			}
			if got := strings.Join(r.Fields(), ","); got != strings.Join(tc.fields, ",") {
				t.Fatalf("fields %s, want %v (%s)", got, tc.fields, r.Body)
			}
		})
	}
	// Nothing was locked by any of them.
	if b := e.balances(t, key)["NGN"]; b.Locked != "0.00" || b.Available != "1000000.00" {
		t.Fatalf("a rejected order changed the balance: %+v", b)
	}
	if r := e.srv.Do(t, "POST", "/v1/trading/orders", key, `{"symbol":`); r.Status != 400 || r.Message != api.CodeInvalidJSON {
		t.Fatalf("malformed JSON: %s", r)
	}
	if r := e.srv.Do(t, "POST", "/v1/trading/orders", "", `{}`); r.Status != 401 {
		t.Fatalf("no key: %s", r)
	}
}

func TestInsufficientBalanceLocksNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fund(t, e.a.SandboxKey, "NGN", "1000")
	r := e.srv.Do(t, "POST", "/v1/trading/orders", e.a.SandboxKey, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1", "price": "1500"})
	if r.Status != 422 || r.Message != api.CodeInsufficientBalance {
		t.Fatalf("got %s", r)
	}
	if b := e.balances(t, e.a.SandboxKey)["NGN"]; b.Available != "1000.00" || b.Locked != "0.00" {
		t.Fatalf("balance changed: %+v", b)
	}
}

func TestMatchTradesBalancesAndHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seller, buyer := e.a.SandboxKey, e.b.SandboxKey
	e.fund(t, seller, "USDT", "100")
	e.fund(t, buyer, "NGN", "1000000")

	ask := e.place(t, seller, map[string]any{"symbol": "USDT-NGN", "side": "sell", "type": "limit", "quantity": "10", "price": "1500.50", "client_order_id": "ask-1"})
	if ask.Status != "OPEN" || ask.Price == nil || *ask.Price != "1500.50" || ask.ClientOrderID == nil || *ask.ClientOrderID != "ask-1" {
		t.Fatalf("ask: %+v", ask)
	}
	if b := e.balances(t, seller)["USDT"]; b.Locked != "10.000000" || b.Available != "90.000000" {
		t.Fatalf("sell must lock its quantity: %+v", b)
	}
	// A buy above the ask trades at the ask (maker's price) and releases the difference.
	bid := e.place(t, buyer, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "4", "price": "1600"})
	if bid.Status != "FILLED" || bid.FilledQuantity != "4.00" {
		t.Fatalf("bid: %+v", bid)
	}
	bb := e.balances(t, buyer)
	if bb["NGN"].Available != "993998.00" || bb["NGN"].Locked != "0.00" || bb["USDT"].Available != "4.000000" {
		t.Fatalf("buyer balances: %+v", bb)
	}
	sb := e.balances(t, seller)
	if sb["NGN"].Available != "6002.00" || sb["USDT"].Locked != "6.000000" {
		t.Fatalf("seller balances: %+v", sb)
	}

	// The maker is partially filled; GET by id, the list and trades agree at once.
	var got order
	e.srv.Must(t, 200, "GET", "/v1/trading/orders/"+ask.ID, seller, nil).Decode(t, &got)
	if got.Status != "PARTIALLY_FILLED" || got.FilledQuantity != "4.00" {
		t.Fatalf("maker after fill: %+v", got)
	}
	var page struct {
		Items []order
		Meta  api.PageMeta
	}
	e.srv.Must(t, 200, "GET", "/v1/trading/orders?status=PARTIALLY_FILLED", seller, nil).Decode(t, &page)
	if page.Meta.Total != 1 || page.Items[0].ID != ask.ID {
		t.Fatalf("list: %+v", page)
	}
	var trades []struct {
		ID, OrderID, Side, Quantity, Price, Liquidity string
	}
	e.srv.Must(t, 200, "GET", "/v1/trading/trades?symbol=USDT-NGN", buyer, nil).Decode(t, &trades)
	if len(trades) != 1 || trades[0].Price != "1500.50" || trades[0].Quantity != "4.00" || trades[0].Side != "buy" || trades[0].Liquidity != "taker" {
		t.Fatalf("buyer trades: %+v", trades)
	}
	var sellerTrades []struct{ ID, Side, Liquidity, OrderID string }
	e.srv.Must(t, 200, "GET", "/v1/trading/trades?order_id="+ask.ID, seller, nil).Decode(t, &sellerTrades)
	if len(sellerTrades) != 1 || sellerTrades[0].ID != trades[0].ID || sellerTrades[0].Liquidity != "maker" || sellerTrades[0].Side != "sell" {
		t.Fatalf("seller trades: %+v", sellerTrades)
	}

	// from (inclusive) and to (exclusive) take an ISO 8601 time with an offset, its '+'
	// unescaped or not, or Unix milliseconds (api.ParseTime, as every list's).
	var withTime []struct {
		CreatedAt string `json:"created_at"`
	}
	e.srv.Must(t, 200, "GET", "/v1/trading/trades?symbol=USDT-NGN", buyer, nil).Decode(t, &withTime)
	at, err := time.Parse(time.RFC3339Nano, withTime[0].CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	ms := strconv.FormatInt(at.UnixMilli(), 10)
	plus1 := at.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano) // 2026-...T13:04:05.123+01:00
	for _, tc := range []struct {
		name, query string
		trades      int      // with a 200
		fields      []string // with a 400
	}{
		{"from the trade's time", "from=" + url.QueryEscape(withTime[0].CreatedAt), 1, nil},
		{"to the trade's time, exclusive", "to=" + url.QueryEscape(withTime[0].CreatedAt), 0, nil},
		{"from its Unix milliseconds", "from=" + ms, 1, nil},
		{"to its Unix milliseconds plus one", "to=" + strconv.FormatInt(at.UnixMilli()+1, 10), 1, nil},
		{"an offset with its '+' escaped", "from=" + url.QueryEscape(plus1), 1, nil},
		{"an offset with its '+' sent raw", "from=" + plus1, 1, nil},
		{"a range that ends before the trade", "from=0&to=" + ms, 0, nil},
		{"not a time", "from=yesterday", 0, []string{"from"}},
		{"no offset", "to=2025-01-01T00:00:00", 0, []string{"to"}},
		{"milliseconds past year 9999", "from=253402300800000", 0, []string{"from"}},
		{"to before from", "from=" + ms + "&to=0", 0, []string{"to"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.srv.Do(t, "GET", "/v1/trading/trades?symbol=USDT-NGN&"+tc.query, buyer, nil)
			if tc.fields != nil {
				if r.Status != 400 || fmt.Sprint(r.Fields()) != fmt.Sprint(tc.fields) {
					t.Fatalf("%s: %s, want a 400 on %v", tc.query, r, tc.fields)
				}
				return
			}
			var got []struct{ ID string }
			if r.Status != 200 {
				t.Fatalf("%s: %s", tc.query, r)
			}
			if r.Decode(t, &got); len(got) != tc.trades {
				t.Fatalf("%s: %d trades, want %d", tc.query, len(got), tc.trades)
			}
		})
	}

	// Cancel the rest; a second cancel is refused; the lock is released.
	var cancelled order
	e.srv.Must(t, 200, "DELETE", "/v1/trading/orders/"+ask.ID, seller, nil).Decode(t, &cancelled)
	if cancelled.Status != "CANCELLED" || cancelled.CancelReason == nil || *cancelled.CancelReason != "USER" {
		t.Fatalf("cancel: %+v", cancelled)
	}
	if r := e.srv.Do(t, "DELETE", "/v1/trading/orders/"+ask.ID, seller, nil); r.Status != 422 || r.Message != api.CodeOrderNotCancellable {
		t.Fatalf("second cancel: %s", r)
	}
	if r := e.srv.Do(t, "DELETE", "/v1/trading/orders/"+bid.ID, buyer, nil); r.Status != 422 || r.Message != api.CodeOrderNotCancellable {
		t.Fatalf("cancel of a filled order: %s", r)
	}
	if b := e.balances(t, seller)["USDT"]; b.Locked != "0.000000" || b.Available != "96.000000" {
		t.Fatalf("cancel must release the lock: %+v", b)
	}
}

func TestTenancyAndEnvironments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fund(t, e.a.SandboxKey, "NGN", "100000")
	o := e.place(t, e.a.SandboxKey, map[string]any{"symbol": "USDC-NGN", "side": "buy", "type": "limit", "quantity": "2", "price": "1400"})

	// Another merchant, and the same merchant's live key, see nothing of it.
	for name, key := range map[string]string{"other merchant": e.b.SandboxKey, "own live key": e.a.LiveKey} {
		if r := e.srv.Do(t, "GET", "/v1/trading/orders/"+o.ID, key, nil); r.Status != 404 || r.Message != api.CodeNotFound {
			t.Fatalf("%s: get: %s", name, r)
		}
		if r := e.srv.Do(t, "DELETE", "/v1/trading/orders/"+o.ID, key, nil); r.Status != 404 {
			t.Fatalf("%s: cancel: %s", name, r)
		}
		var page struct{ Items []order }
		e.srv.Must(t, 200, "GET", "/v1/trading/orders", key, nil).Decode(t, &page)
		if len(page.Items) != 0 {
			t.Fatalf("%s: list shows foreign orders: %+v", name, page.Items)
		}
	}
	if b := e.balances(t, e.a.LiveKey)["NGN"]; b.Total != "0.00" {
		t.Fatalf("live balance must be separate: %+v", b)
	}
	if r := e.srv.Do(t, "POST", "/v1/trading/sandbox/fund", e.a.LiveKey, map[string]string{"asset": "NGN", "amount": "5"}); r.Status != 403 || r.Message != api.CodeSandboxOnly {
		t.Fatalf("live fund: %s", r)
	}
	if r := e.srv.Do(t, "GET", "/v1/trading/orders/not-a-uuid", e.a.SandboxKey, nil); r.Status != 404 {
		t.Fatalf("bad id: %s", r)
	}
}

func TestMarketBuyByQuoteAmountAndCancelAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seller, buyer := e.a.SandboxKey, e.b.SandboxKey
	e.fund(t, seller, "USDT", "100")
	e.fund(t, buyer, "NGN", "100000")
	for _, p := range []string{"1500.00", "1510.00", "1520.00"} {
		e.place(t, seller, map[string]any{"symbol": "USDT-NGN", "side": "sell", "type": "limit", "quantity": "2", "price": p})
	}
	m := e.place(t, buyer, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "market", "quote_quantity": "3010"})
	if m.Status != "FILLED" || m.FilledQuantity != "2.00" || m.Price != nil {
		t.Fatalf("market buy by amount: %+v", m)
	}
	if b := e.balances(t, buyer)["NGN"]; b.Available != "97000.00" || b.Locked != "0.00" {
		t.Fatalf("the unspent part of the reservation must come back: %+v", b)
	}
	var res struct {
		Symbol    string
		Cancelled int
	}
	e.srv.Must(t, 200, "DELETE", "/v1/trading/orders?symbol=USDT-NGN", seller, nil).Decode(t, &res)
	if res.Cancelled != 2 {
		t.Fatalf("cancel all: %+v", res)
	}
	if r := e.srv.Do(t, "DELETE", "/v1/trading/orders", seller, nil); r.Status != 400 || r.Fields()[0] != "symbol" {
		t.Fatalf("cancel all without symbol: %s", r)
	}
}

func TestConcurrentClientsConserveBalances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keys := []string{e.a.SandboxKey, e.b.SandboxKey}
	for _, k := range keys {
		e.fund(t, k, "NGN", "10000000")
		e.fund(t, k, "USDT", "10000")
	}
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func(i int, k string) {
			defer wg.Done()
			for n := 0; n < 40; n++ {
				side := []string{"buy", "sell"}[(n+i)%2]
				price := fmt.Sprintf("%d.00", 1495+n%10)
				r := e.srv.Do(t, "POST", "/v1/trading/orders", k, map[string]any{"symbol": "USDT-NGN", "side": side, "type": "limit", "quantity": "1.5", "price": price})
				if r.Status != 201 {
					t.Errorf("place: %s", r)
					return
				}
			}
		}(i, k)
	}
	wg.Wait()
	totals := map[string]int64{}
	for _, k := range keys {
		for asset, b := range e.balances(t, k) {
			v, err := engine.ParseAmount(mustAsset(asset), strings.TrimSpace(b.Total))
			if err != nil && b.Total != "0.00" && b.Total != "0.000000" {
				t.Fatal(err)
			}
			totals[asset] += v
		}
	}
	if totals["NGN"] != mustAmount("NGN", "20000000") || totals["USDT"] != mustAmount("USDT", "20000") {
		t.Fatalf("trading must conserve every asset: %+v", totals)
	}
	// The projection catches up with everything acknowledged.
	var page struct{ Meta api.PageMeta }
	e.srv.Must(t, 200, "GET", "/v1/trading/orders?limit=1", keys[0], nil).Decode(t, &page)
	if page.Meta.Total != 40 {
		t.Fatalf("history has %d orders, want 40", page.Meta.Total)
	}
	_ = time.Second
}

func mustAsset(s string) engine.Asset {
	a, _ := engine.ParseAsset(s)
	return a
}

func mustAmount(asset, s string) int64 {
	v, err := engine.ParseAmount(mustAsset(asset), s)
	if err != nil {
		panic(err)
	}
	return v
}
