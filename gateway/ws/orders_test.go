package ws_test

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/trading"
	"svc/gateway/ws"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

// entry is the real gateway (identity, scopes, rate limits, trading routes, the
// PostgreSQL projection) with the WebSocket endpoint on a real TCP port, over real
// engines for sandbox and live whose durable batches feed the hubs.
type entry struct {
	url     string
	gw      *gatewaytest.Server
	srv     *ws.Server
	a, b    authtest.Merchant
	engines map[api.Environment]*engine.Engine
	h       *trading.Handlers
}

// newEntry builds the rig; wrap, if given, stands between the sandbox engine and its
// journal (a test that must hold a commit).
func newEntry(t testing.TB, cfg ws.Config, wrap ...func(engine.Journal) engine.Journal) *entry {
	t.Helper()
	gcfg := gateway.DefaultConfig()
	gcfg.AccessLog = false
	return newEntryGateway(t, cfg, gcfg, wrap...)
}

// newEntryGateway is newEntry with the gateway's configuration (a short request timeout).
func newEntryGateway(t testing.TB, cfg ws.Config, gcfg gateway.Config, wrap ...func(engine.Journal) engine.Journal) *entry {
	t.Helper()
	pool, _ := pgtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e := &entry{engines: map[api.Environment]*engine.Engine{}}
	exchanges := map[api.Environment]trading.Exchange{}
	projectors := map[api.Environment]*projection.Projector{}
	hubs := map[api.Environment]*ws.Hub{}
	for _, env := range []api.Environment{api.Sandbox, api.Live} {
		j := journal.NewMemory()
		if err := j.Start(); err != nil {
			t.Fatal(err)
		}
		p := projection.New(pool, string(env), j, nil)
		var hub *ws.Hub
		el := eventlog.New(j, func(b []engine.Event, _ uint64) { p.Wake(); hub.Publish(b) })
		var ej engine.Journal = el
		if env == api.Sandbox && len(wrap) > 0 {
			ej = wrap[0](el)
		}
		eng, err := engine.New(engine.Config{Journal: ej})
		if err != nil {
			t.Fatal(err)
		}
		hub = ws.NewHub(ws.HubConfig{Env: env, Exchange: eng})
		if err := eng.Start(); err != nil {
			t.Fatal(err)
		}
		if err := hub.Seed(ctx, nil); err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() { defer wg.Done(); _ = p.Run(ctx) }()
		go func() { defer wg.Done(); hub.Run(ctx) }()
		e.engines[env], exchanges[env], projectors[env], hubs[env] = eng, eng, p, hub
	}
	h := trading.New(exchanges, trading.Projections{Store: projection.NewStore(pool), Projectors: projectors}, nil)
	cfg.Hubs = hubs
	lazy := &lazyAuth{}
	cfg.Auth = lazy
	e.srv = ws.NewServer(cfg)
	e.gw = gatewaytest.NewWithConfig(t, pool, gcfg, h, e.srv)
	lazy.a = e.gw.Auth
	if err := e.srv.Start(); err != nil {
		t.Fatal(err)
	}
	e.h = h
	e.srv.SetOrderEntry(ws.OrderEntry{Handler: e.gw.Server.Handler(), CancelOrders: h.CancelOrders, Lease: h.Lease})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.gw.Server.Serve(ln) }()
	e.url = "ws://" + ln.Addr().String() + "/v1/ws"
	t.Cleanup(func() {
		e.srv.Close()
		_ = ln.Close()
		cancel()
		wg.Wait()
		for _, eng := range e.engines {
			eng.Stop()
		}
	})
	e.a, e.b = authtest.New(t, pool), authtest.New(t, pool)
	for _, m := range []authtest.Merchant{e.a, e.b} {
		e.gw.Must(t, 201, "POST", "/v1/trading/sandbox/fund", m.SandboxKey, map[string]string{"asset": "NGN", "amount": "1000000"})
		e.gw.Must(t, 201, "POST", "/v1/trading/sandbox/fund", m.SandboxKey, map[string]string{"asset": "USDT", "amount": "1000"})
	}
	return e
}

// opResult is an op's answer.
type opResult struct {
	Type      string          `json:"type"`
	Op        string          `json:"op"`
	ID        json.RawMessage `json:"id"`
	Status    int             `json:"status"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Replayed  bool            `json:"replayed"`
	Data      json.RawMessage `json:"data"`
	Errors    []api.FieldError
	Channel   string `json:"channel"`
	RetryAfer int    `json:"retry_after"`
}

// call sends an op and reads until its answer (other messages are skipped).
func call(t *testing.T, c *ws.Client, op string, id any, params any) opResult {
	t.Helper()
	msg := map[string]any{"op": op, "id": id}
	if params != nil {
		msg["params"] = params
	}
	if err := c.Send(msg); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(id)
	_ = c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := c.Conn().ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		var r opResult
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if (r.Type == "result" || r.Type == "error") && r.Op == op && string(r.ID) == string(want) {
			return r
		}
	}
}

type wsOrder struct {
	ID             string  `json:"id"`
	Symbol         string  `json:"symbol"`
	Quantity       string  `json:"quantity"`
	FilledQuantity string  `json:"filled_quantity"`
	Price          *string `json:"price"`
	Status         string  `json:"status"`
	CancelReason   *string `json:"cancel_reason"`
	ClientOrderID  *string `json:"client_order_id"`
}

func (r opResult) order(t *testing.T) wsOrder {
	t.Helper()
	var o wsOrder
	if err := json.Unmarshal(r.Data, &o); err != nil {
		t.Fatalf("%s data %s: %v", r.Op, r.Data, err)
	}
	return o
}

func limit(side, qty, price, cid string) map[string]any {
	m := map[string]any{"symbol": "USDT-NGN", "side": side, "type": "limit", "quantity": qty, "price": price}
	if cid != "" {
		m["client_order_id"] = cid
	}
	return m
}

// A session of real WebSocket clients places, amends and cancels while another
// connection of the same merchant watches the private orders channel.
func TestOrderEntrySession(t *testing.T) {
	e := newEntry(t, ws.Config{})
	watcher, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	if err := watcher.Subscribe("orders"); err != nil {
		t.Fatal(err)
	}
	if m, err := watcher.Next(); err != nil || m.Type != "ack" {
		t.Fatalf("subscribe: %+v %v", m, err)
	}
	// the trader authenticates with the auth op, not on the upgrade
	trader, err := ws.Dial(e.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer trader.Close()
	if r := call(t, trader, "order.place", 1, limit("buy", "1", "1500", "")); r.Status != 401 || r.Code != api.CodeUnauthorized {
		t.Fatalf("unauthenticated place: %+v", r)
	}
	if err := trader.Auth(e.a.SandboxKey); err != nil {
		t.Fatal(err)
	}

	placed := call(t, trader, "order.place", "p1", limit("buy", "10", "1500", "ws-1"))
	o := placed.order(t)
	if placed.Type != "result" || placed.Status != 201 || o.Status != "OPEN" || o.Quantity != "10.00" {
		t.Fatalf("place: %+v %+v", placed, o)
	}
	// the same client_order_id again is the same order (REST's idempotent replay)
	if r := call(t, trader, "order.place", "p1-again", limit("buy", "10", "1500", "ws-1")); r.Status != 200 || !r.Replayed || r.order(t).ID != o.ID {
		t.Fatalf("replay: %+v", r)
	}
	if r := call(t, trader, "order.place", "p1-other", limit("buy", "11", "1500", "ws-1")); r.Status != 409 || r.Code != api.CodeClientOrderIDInUse {
		t.Fatalf("reuse: %+v", r)
	}
	// REST's validation, word for word
	if r := call(t, trader, "order.place", "bad", map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit", "quantity": "1"}); r.Status != 400 ||
		r.Code != api.CodeValidation || len(r.Errors) != 1 || r.Errors[0].Field != "price" {
		t.Fatalf("validation: %+v", r)
	}
	// amend down (keeps priority), by id; then by client order id to a new price
	r := call(t, trader, "order.amend", "a1", map[string]any{"order_id": o.ID, "quantity": "6"})
	if r.Status != 200 || r.order(t).Quantity != "6.00" {
		t.Fatalf("amend: %+v", r)
	}
	r = call(t, trader, "order.amend", "a2", map[string]any{"client_order_id": "ws-1", "price": "1490.50"})
	if r.Status != 200 || *r.order(t).Price != "1490.50" {
		t.Fatalf("amend by client id: %+v", r)
	}
	// a batch: two places and a cancel of an unknown order, each answered in order
	batch := call(t, trader, "orders.batch", 7, map[string]any{"orders": []any{
		map[string]any{"op": "order.place", "params": limit("sell", "1", "1600", "b-1")},
		map[string]any{"op": "order.place", "params": limit("sell", "1", "1601", "")},
		map[string]any{"op": "order.cancel", "params": map[string]any{"order_id": "0190aaaa-0000-7000-8000-000000000000"}},
	}})
	var items []opResult
	if err := json.Unmarshal(batch.Data, &items); err != nil || batch.Status != 200 || len(items) != 3 {
		t.Fatalf("batch: %+v %v", batch, err)
	}
	if items[0].Status != 201 || items[1].Status != 201 || items[2].Status != 404 || items[2].Code != api.CodeNotFound {
		t.Fatalf("batch items: %+v", items)
	}
	// cancel one by client order id, then the rest with cancel_all
	if r := call(t, trader, "order.cancel", "c1", map[string]any{"client_order_id": "b-1"}); r.Status != 200 || r.order(t).Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", r)
	}
	r = call(t, trader, "orders.cancel_all", "ca", map[string]any{"symbol": "USDT-NGN"})
	var ca struct{ Cancelled int }
	if err := json.Unmarshal(r.Data, &ca); err != nil || r.Status != 200 || ca.Cancelled != 2 {
		t.Fatalf("cancel_all: %+v", r)
	}
	// REST sees what the socket did
	var rest struct {
		Status string `json:"status"`
		Price  string `json:"price"`
	}
	e.gw.Must(t, 200, "GET", "/v1/trading/orders/"+o.ID, e.a.SandboxKey, nil).Decode(t, &rest)
	if rest.Status != "CANCELLED" || rest.Price != "1490.50" {
		t.Fatalf("REST: %+v", rest)
	}
	// the watcher saw every step of the first order, in order
	var events []string
	deadline := time.Now().Add(10 * time.Second)
	for len(events) < 4 && time.Now().Before(deadline) {
		_ = watcher.Conn().SetReadDeadline(deadline)
		m, err := watcher.Next()
		if err != nil {
			t.Fatalf("watcher: %v (saw %v)", err, events)
		}
		var d struct {
			Event   string `json:"event"`
			OrderID string `json:"order_id"`
		}
		_ = json.Unmarshal(m.Data, &d)
		if m.Channel == "orders" && d.OrderID == o.ID {
			events = append(events, d.Event)
		}
	}
	if strings.Join(events, ",") != "ORDER_ACCEPTED,ORDER_AMENDED,ORDER_AMENDED,ORDER_CANCELLED" {
		t.Fatalf("watcher saw %v", events)
	}
}

// A sandbox key trades the sandbox only, a key without the trade scope cannot, and another
// merchant's order is not found.
func TestOrderEntryScopesAndEnvironments(t *testing.T) {
	e := newEntry(t, ws.Config{})
	sb, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	o := call(t, sb, "order.place", 1, limit("buy", "1", "1500", "")).order(t)
	if _, ok := e.engines[api.Live].Order(engine.AccountID(e.a.ID), mustOrderID(t, o.ID)); ok {
		t.Fatal("a sandbox key's order reached the live engine")
	}
	if _, ok := e.engines[api.Sandbox].Order(engine.AccountID(e.a.ID), mustOrderID(t, o.ID)); !ok {
		t.Fatal("the sandbox engine lacks the order")
	}
	other, err := ws.Dial(e.url, e.b.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if r := call(t, other, "order.cancel", 2, map[string]any{"order_id": o.ID}); r.Status != 404 {
		t.Fatalf("another merchant's cancel: %+v", r)
	}
	// a read-only key: 403 INSUFFICIENT_SCOPE as on REST
	var key struct {
		Key string `json:"key"`
	}
	e.gw.Must(t, 201, "POST", "/v1/api-keys", e.a.SandboxKey, map[string]any{"name": "ro", "environment": "sandbox", "scopes": []string{"read"}}).Decode(t, &key)
	ro, err := ws.Dial(e.url, key.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if r := call(t, ro, "order.place", 3, limit("buy", "1", "1500", "")); r.Status != 403 || r.Code != api.CodeInsufficientScope {
		t.Fatalf("read-only key: %+v", r)
	}
}

func mustOrderID(t *testing.T, s string) engine.OrderID {
	t.Helper()
	return engine.OrderID(uuid.MustParse(s))
}

// lazyAuth is the gateway's Authenticator, known only once the gateway (which needs the
// WebSocket route first) is built.
type lazyAuth struct{ a ws.Authenticator }

func (l *lazyAuth) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	return l.a.Authenticate(ctx)
}

// orderStatus reads an order over REST.
func (e *entry) orderStatus(t *testing.T, key, id string) (status, reason string) {
	t.Helper()
	var o wsOrder
	e.gw.Must(t, 200, "GET", "/v1/trading/orders/"+id, key, nil).Decode(t, &o)
	if o.CancelReason != nil {
		reason = *o.CancelReason
	}
	return o.Status, reason
}

// waitStatus polls until the order has status (or fails after a few seconds).
func (e *entry) waitStatus(t *testing.T, key, id, status string) string {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second)
	for {
		st, reason := e.orderStatus(t, key, id)
		if st == status {
			return reason
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %s is %s, want %s", id, st, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cancel-on-disconnect: a session whose TCP connection is reset (no close frame) has its
// orders on the chosen symbols cancelled, durably, with reason DISCONNECT; its orders on
// other symbols and the merchant's orders from elsewhere stay. A session that stops
// answering (silent past its timeout) is closed and cancelled the same way.
func TestCancelOnDisconnect(t *testing.T) {
	e := newEntry(t, ws.Config{PingEvery: 400 * time.Millisecond})
	key := e.a.SandboxKey
	e.gw.Must(t, 201, "POST", "/v1/trading/sandbox/fund", key, map[string]string{"asset": "USDC", "amount": "100"})
	restOrder := e.gw.Must(t, 201, "POST", "/v1/trading/orders", key, limit("buy", "1", "1500", ""))
	var ro wsOrder
	restOrder.Decode(t, &ro)

	t.Run("connection reset", func(t *testing.T) {
		c, err := ws.Dial(e.url, key)
		if err != nil {
			t.Fatal(err)
		}
		if r := call(t, c, "session.cancel_on_disconnect", "cod", map[string]any{"enabled": true, "symbols": []string{"USDT-NGN"}}); r.Status != 200 {
			t.Fatalf("cod: %+v", r)
		}
		if r := call(t, c, "session.cancel_on_disconnect", "bad", map[string]any{"enabled": true, "symbols": []string{"BTC-NGN"}}); r.Status != 400 {
			t.Fatalf("bad symbol: %+v", r)
		}
		a := call(t, c, "order.place", 1, limit("buy", "1", "1400", "")).order(t)
		b := call(t, c, "order.place", 2, limit("sell", "1", "1700", "")).order(t)
		usdc := call(t, c, "order.place", 3, map[string]any{"symbol": "USDC-NGN", "side": "sell", "type": "limit", "quantity": "1", "price": "1700"}).order(t)
		// no close frame: the socket is reset
		tcp := c.Conn().UnderlyingConn().(*net.TCPConn)
		_ = tcp.SetLinger(0)
		_ = tcp.Close()
		for _, id := range []string{a.ID, b.ID} {
			if reason := e.waitStatus(t, key, id, "CANCELLED"); reason != "DISCONNECT" {
				t.Fatalf("order %s cancelled with %q", id, reason)
			}
		}
		for _, id := range []string{usdc.ID, ro.ID} {
			if st, _ := e.orderStatus(t, key, id); st != "OPEN" {
				t.Fatalf("order %s outside the session's symbols is %s", id, st)
			}
		}
	})

	t.Run("silent past its timeout", func(t *testing.T) {
		c, err := ws.Dial(e.url, key)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if r := call(t, c, "session.cancel_on_disconnect", "cod", map[string]any{"enabled": true, "timeout_ms": 1000}); r.Status != 200 {
			t.Fatalf("cod: %+v", r)
		}
		o := call(t, c, "order.place", 1, limit("buy", "1", "1450", "")).order(t)
		// the client keeps the socket open but reads and sends nothing: no pongs
		if reason := e.waitStatus(t, key, o.ID, "CANCELLED"); reason != "DISCONNECT" {
			t.Fatalf("cancelled with %q", reason)
		}
		if st, _ := e.orderStatus(t, key, ro.ID); st != "OPEN" {
			t.Fatalf("the REST order is %s", st)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		c, err := ws.Dial(e.url, key)
		if err != nil {
			t.Fatal(err)
		}
		call(t, c, "session.cancel_on_disconnect", "on", map[string]any{"enabled": true})
		call(t, c, "session.cancel_on_disconnect", "off", map[string]any{"enabled": false})
		o := call(t, c, "order.place", 1, limit("buy", "1", "1460", "")).order(t)
		_ = c.Conn().UnderlyingConn().Close()
		time.Sleep(500 * time.Millisecond)
		if st, _ := e.orderStatus(t, key, o.ID); st != "OPEN" {
			t.Fatalf("an order of a session without cancel-on-disconnect is %s", st)
		}
	})

	t.Run("the gateway dies", func(t *testing.T) {
		// The gateway is made unable to act (as if its process were gone): it renews and
		// clears nothing and cancels nothing. The engine's lease of the session runs out
		// on the engine's clock and cancels the account's orders on the session's symbols.
		var dead atomic.Bool
		armed := make(chan struct{}, 16)
		e.srv.SetOrderEntry(ws.OrderEntry{Handler: e.gw.Server.Handler(),
			CancelOrders: func(p api.Principal, ids []uuid.UUID) (int, error) {
				if dead.Load() {
					return 0, nil
				}
				return e.h.CancelOrders(p, ids)
			},
			Lease: func(p api.Principal, owner uuid.UUID, syms []string, d time.Duration) error {
				if dead.Load() {
					return nil
				}
				if d > 0 {
					armed <- struct{}{}
				}
				return e.h.Lease(p, owner, syms, d)
			}})
		c, err := ws.Dial(e.url, key)
		if err != nil {
			t.Fatal(err)
		}
		call(t, c, "session.cancel_on_disconnect", "cod", map[string]any{"enabled": true, "symbols": []string{"USDT-NGN"}})
		select {
		case <-armed:
		case <-time.After(5 * time.Second):
			t.Fatal("no lease armed")
		}
		o := call(t, c, "order.place", 1, limit("buy", "1", "1420", "")).order(t)
		dead.Store(true)
		_ = c.Conn().UnderlyingConn().Close()
		time.Sleep(300 * time.Millisecond)
		if st, _ := e.orderStatus(t, key, o.ID); st != "OPEN" {
			t.Fatalf("a dead gateway cancelled: %s", st)
		}
		trading.Tick(e.engines[api.Sandbox], time.Now().Add(ws.LeaseFor+time.Second)) // the engine's clock, later
		if reason := e.waitStatus(t, key, o.ID, "CANCELLED"); reason != "COUNTDOWN" {
			t.Fatalf("cancelled with %q", reason)
		}
	})
}

// privMsg is a private channel message as the client reads it.
type privMsg struct {
	Type       string          `json:"type"`
	Channel    string          `json:"channel"`
	Status     string          `json:"status"`
	Count      int             `json:"count"`
	AccountSeq uint64          `json:"account_seq"`
	Data       json.RawMessage `json:"data"`
}

func readPriv(t *testing.T, c *ws.Client) privMsg {
	t.Helper()
	_ = c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := c.Conn().ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var m privMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A client that reconnects and subscribes with "since" gets exactly the private messages
// it missed (orders, balances, trades; account_seq without gaps) before new ones; one
// whose since the window cannot serve is told so and gets a snapshot first.
func TestPrivateStreamResumes(t *testing.T) {
	e := newEntry(t, ws.Config{})
	key := e.a.SandboxKey
	trader, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer trader.Close()
	w1, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := w1.Subscribe("orders", "balances", "trades"); err != nil {
		t.Fatal(err)
	}
	if m := readPriv(t, w1); m.Type != "ack" {
		t.Fatalf("ack: %+v", m)
	}
	call(t, trader, "order.place", 1, limit("buy", "2", "1500", ""))
	var last uint64
	for i := 0; i < 2; i++ { // ORDER_ACCEPTED and the lock on the balance
		m := readPriv(t, w1)
		if last != 0 && m.AccountSeq != last+1 {
			t.Fatalf("account_seq %d after %d", m.AccountSeq, last)
		}
		last = m.AccountSeq
	}
	_ = w1.Conn().UnderlyingConn().Close() // gone without a word

	// missed: an amend, a fill against b (order, trade and balance messages), a cancel
	o := call(t, trader, "order.place", 2, limit("buy", "1", "1400", "")).order(t)
	call(t, trader, "order.amend", 3, map[string]any{"order_id": o.ID, "quantity": "3"})
	e.gw.Must(t, 201, "POST", "/v1/trading/orders", e.b.SandboxKey, limit("sell", "1", "1500", ""))
	call(t, trader, "order.cancel", 4, map[string]any{"order_id": o.ID})

	w2, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.Send(map[string]any{"op": "subscribe", "channels": []string{"orders", "balances", "trades"}, "since": last}); err != nil {
		t.Fatal(err)
	}
	if m := readPriv(t, w2); m.Type != "ack" {
		t.Fatalf("ack: %+v", m)
	}
	r := readPriv(t, w2)
	if r.Type != "resume" || r.Status != "replayed" || r.Count < 8 {
		t.Fatalf("resume: %+v", r)
	}
	channels := map[string]int{}
	for i := 0; i < r.Count; i++ {
		m := readPriv(t, w2)
		if m.AccountSeq != last+1 {
			t.Fatalf("replayed account_seq %d after %d", m.AccountSeq, last)
		}
		last = m.AccountSeq
		channels[m.Channel]++
	}
	if channels["orders"] < 4 || channels["trades"] != 1 || channels["balances"] < 3 {
		t.Fatalf("replayed %v", channels)
	}
	// then live messages go on from there
	call(t, trader, "order.place", 5, limit("buy", "1", "1300", ""))
	if m := readPriv(t, w2); m.AccountSeq != last+1 || m.Channel != "orders" {
		t.Fatalf("live after replay: %+v (last %d)", m, last)
	}

	// a since the window cannot serve: told so, then a snapshot
	w3, err := ws.Dial(e.url, key)
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	if err := w3.Send(map[string]any{"op": "subscribe", "channels": []string{"orders", "balances"}, "since": 1}); err != nil {
		t.Fatal(err)
	}
	readPriv(t, w3) // ack
	if r := readPriv(t, w3); r.Type != "resume" || r.Status != "snapshot" {
		t.Fatalf("resume from 1: %+v", r)
	}
	snapOrders := readPriv(t, w3)
	var open []struct{ Status string }
	if err := json.Unmarshal(snapOrders.Data, &open); err != nil || snapOrders.Type != "snapshot" || snapOrders.Channel != "orders" || len(open) != 2 {
		t.Fatalf("orders snapshot: %+v %v", snapOrders, err)
	}
	if m := readPriv(t, w3); m.Type != "snapshot" || m.Channel != "balances" {
		t.Fatalf("balances snapshot: %+v", m)
	}
}

// Ops sent back to back without waiting run and are answered in the order sent, whether
// the engine's completion stage answers them (a place) or the op goroutine does: a cancel
// by client order id right behind its place finds the order, and a rejected place (the
// handler's own code on a synthetic request) answers in its turn.
func TestOrderEntryPipelined(t *testing.T) {
	e := newEntry(t, ws.Config{})
	c, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ops := []map[string]any{
		{"op": "order.place", "id": 1, "params": limit("buy", "1", "1450", "pipe-1")},
		{"op": "order.cancel", "id": 2, "params": map[string]any{"client_order_id": "pipe-1"}},
		{"op": "order.place", "id": 3, "params": limit("buy", "100000", "1450", "")}, // 145M NGN: more than the account holds
		{"op": "order.place", "id": 4, "params": limit("buy", "1", "1451", "pipe-2")},
		{"op": "order.place", "id": 5, "params": limit("buy", "1", "1451", "pipe-2")}, // the same again: replayed
	}
	for _, op := range ops {
		if err := c.Send(op); err != nil {
			t.Fatal(err)
		}
	}
	var got []opResult
	_ = c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
	for len(got) < len(ops) {
		_, data, err := c.Conn().ReadMessage()
		if err != nil {
			t.Fatalf("after %d answers: %v", len(got), err)
		}
		var r opResult
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type == "result" || r.Type == "error" {
			got = append(got, r)
		}
	}
	for i, r := range got {
		if string(r.ID) != strconv.Itoa(i+1) {
			t.Fatalf("answer %d is for op %s: %+v", i+1, r.ID, got)
		}
	}
	if got[0].Status != 201 || got[1].Status != 200 || got[1].order(t).Status != "CANCELLED" || got[1].order(t).ID != got[0].order(t).ID {
		t.Fatalf("place then cancel: %+v %+v", got[0], got[1])
	}
	if got[2].Type != "error" || got[2].Code != api.CodeInsufficientBalance {
		t.Fatalf("rejected place: %+v", got[2])
	}
	if got[3].Status != 201 || got[4].Status != 200 || !got[4].Replayed || got[4].order(t).ID != got[3].order(t).ID {
		t.Fatalf("place and its replay: %+v %+v", got[3], got[4])
	}
}

// A place that was waiting for the journal when its connection died, on a session with
// cancel-on-disconnect, is cancelled once the engine answers it: the session's own
// cancels had gone out without it.
func TestCancelOnDisconnectOrderAnsweredAfterTheClose(t *testing.T) {
	g := &journaltest.Held{}
	e := newEntry(t, ws.Config{}, func(j engine.Journal) engine.Journal { g.Inner = j; return g })
	c, err := ws.Dial(e.url, e.a.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, c, "session.cancel_on_disconnect", 1, map[string]any{"enabled": true}); r.Type != "result" {
		t.Fatalf("cancel_on_disconnect: %+v", r)
	}
	g.Hold()
	if err := c.Send(map[string]any{"op": "order.place", "id": 2, "params": limit("buy", "1", "1440", "late-1")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("the place never reached the journal")
	}
	_ = c.Conn().UnderlyingConn().Close() // no close frame
	for deadline := time.Now().Add(10 * time.Second); e.srv.Connections() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not see the connection end")
		}
	}
	g.Release()
	var o struct {
		Status       string  `json:"status"`
		CancelReason *string `json:"cancel_reason"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		e.gw.Must(t, 200, "GET", "/v1/trading/orders/by-client-id/late-1", e.a.SandboxKey, nil).Decode(t, &o)
		if o.Status == "CANCELLED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the order answered after the close is %+v, not cancelled", o)
		}
	}
}
