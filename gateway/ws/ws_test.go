package ws_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"svc/engine"
	"svc/gateway/ws"
)

const sym = "USDT-NGN"

func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		s, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("SEED=%d", s)
	return s
}

// trade runs one random trader on acct until ctx is done; it returns its order ids.
func trade(ctx context.Context, t *testing.T, eng *engine.Engine, acct engine.AccountID, r *rand.Rand) map[engine.OrderID]bool {
	mine := map[engine.OrderID]bool{}
	var open []engine.OrderID
	for ctx.Err() == nil {
		cmd := engine.Command{Kind: engine.CmdPlace, Symbol: sym, Account: acct, Time: time.Now().UnixNano()}
		switch k := r.IntN(10); {
		case k < 6 || len(open) == 0:
			cmd.OrderID = engine.OrderID(uuid.New())
			cmd.Type, cmd.Side = engine.Limit, engine.Side(1+r.IntN(2))
			cmd.Price = engine.Price(150000 + r.IntN(41) - 20)
			cmd.Qty = engine.Qty(100 * (1 + r.IntN(5)))
			if r.IntN(6) == 0 {
				cmd.TIF = engine.IOC
			}
			open = append(open, cmd.OrderID)
		case k < 7:
			cmd.OrderID = engine.OrderID(uuid.New())
			cmd.Type, cmd.Side, cmd.Qty = engine.Market, engine.Side(1+r.IntN(2)), engine.Qty(100*(1+r.IntN(6)))
		default:
			i := r.IntN(len(open))
			cmd = engine.Command{Kind: engine.CmdCancel, Account: acct, OrderID: open[i], Time: time.Now().UnixNano()}
			open = slices.Delete(open, i, i+1)
		}
		if cmd.Kind == engine.CmdPlace {
			mine[cmd.OrderID] = true
		}
		if _, err := eng.Submit(&cmd); err != nil {
			t.Error(err)
			return mine
		}
		if r.IntN(4) == 0 {
			time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
		}
	}
	return mine
}

func canon(bids, asks [][2]string) string {
	var b strings.Builder
	for _, l := range bids {
		b.WriteString("b" + l[0] + "=" + l[1] + ";")
	}
	for _, l := range asks {
		b.WriteString("a" + l[0] + "=" + l[1] + ";")
	}
	return b.String()
}

// checkBookAgainstREST: while traders trade, the WebSocket client's book (snapshot +
// diffs, dropping messages when drop says so) equals the REST order book at every
// sequence both have seen, and at the end.
func checkBookAgainstREST(t *testing.T, drop func(*ws.Message) bool) *ws.Book {
	r := newRig(t, 4, ws.Config{})
	base := seed(t)
	c := r.dial(t, r.keys[0])

	var mu sync.Mutex
	clientAt := map[uint64]string{}
	book := &ws.Book{}
	var lastSeq atomic.Uint64
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- c.Watch(sym, book, func(b *ws.Book, m *ws.Message) bool {
			mu.Lock()
			clientAt[b.Seq] = canon(b.Levels(true, 0), b.Levels(false, 0))
			mu.Unlock()
			lastSeq.Store(b.Seq)
			return true
		}, drop)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for i, acct := range r.accts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trade(ctx, t, r.eng, acct, rand.New(rand.NewPCG(base, uint64(i))))
		}()
	}
	restAt := map[uint64]string{}
	for ctx.Err() == nil {
		var rb restBook
		r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &rb)
		restAt[rb.Sequence] = canon(rb.Bids, rb.Asks)
		time.Sleep(3 * time.Millisecond)
	}
	wg.Wait()
	// The hub applies durable batches on its own goroutine: REST catches up with the engine
	// shortly after the last acknowledgement (on a loaded box, tens of milliseconds later).
	var final restBook
	engineSeq := func() uint64 { d, _ := r.eng.Depth(sym, 1000); return d.Seq }
	for catchUp := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &final)
		if final.Sequence == engineSeq() || time.Now().After(catchUp) {
			break
		}
	}
	restAt[final.Sequence] = canon(final.Bids, final.Asks)
	if seq := engineSeq(); seq != final.Sequence {
		t.Fatalf("REST sequence %d, engine %d", final.Sequence, seq)
	}
	// A client learns of a gap from the next message: if the very last diff was dropped, it
	// cannot know until something else changes. Nudge the book with a resting order and its
	// cancel until the client has caught up with REST.
	deadline := time.Now().Add(10 * time.Second)
	for lastSeq.Load() != final.Sequence && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if lastSeq.Load() == final.Sequence {
			break
		}
		nudge := engine.OrderID(uuid.New())
		for _, cmd := range []engine.Command{
			{Kind: engine.CmdPlace, Symbol: sym, Account: r.accts[0], OrderID: nudge, Type: engine.Limit, Side: engine.Buy, Price: 100000, Qty: 100, Time: time.Now().UnixNano()},
			{Kind: engine.CmdCancel, Account: r.accts[0], OrderID: nudge, Time: time.Now().UnixNano()},
		} {
			if _, err := r.eng.Submit(&cmd); err != nil {
				t.Fatal(err)
			}
		}
		r.get(t, r.keys[1], "/v1/trading/market/orderbook?symbol="+sym+"&depth=500", &final)
		restAt[final.Sequence] = canon(final.Bids, final.Asks)
	}
	if got := lastSeq.Load(); got != final.Sequence {
		t.Fatalf("client at sequence %d, REST at %d", got, final.Sequence)
	}
	mu.Lock()
	defer mu.Unlock()
	matched := 0
	for seq, rest := range restAt {
		if cl, ok := clientAt[seq]; ok {
			matched++
			if cl != rest {
				t.Fatalf("sequence %d:\n ws   %s\n rest %s", seq, cl, rest)
			}
		}
	}
	t.Logf("final sequence %d, %d REST snapshots, %d compared at the same sequence, %d client states, gaps %d",
		final.Sequence, len(restAt), matched, len(clientAt), book.Gaps)
	if final.Sequence < 100 {
		t.Fatalf("only %d events: the traders did not trade", final.Sequence)
	}
	select {
	case err := <-watchDone:
		t.Fatalf("watch ended: %v", err)
	default:
	}
	return book
}

func TestReconstructedBookEqualsREST(t *testing.T) {
	checkBookAgainstREST(t, nil)
}

func TestDroppedMessagesAreDetectedAndResynced(t *testing.T) {
	var n atomic.Int64
	book := checkBookAgainstREST(t, func(m *ws.Message) bool {
		return m.Type == "diff" && n.Add(1)%7 == 0
	})
	if book.Gaps == 0 {
		t.Fatal("no gap detected although diffs were dropped")
	}
}

func TestPrivateChannelsShowOnlyTheMerchantsOwn(t *testing.T) {
	// A deep queue: this test is about tenancy, and on a loaded machine the traders below can
	// outrun the writer long enough to trip the slow-consumer close (tested on its own).
	r := newRig(t, 3, ws.Config{QueueLen: 1 << 16})
	base := seed(t)
	c := r.dial(t, r.keys[0])
	if err := c.Subscribe("orders", "balances"); err != nil {
		t.Fatal(err)
	}
	next(t, c, ofType("ack"))

	msgs := make(chan *ws.Message, 1<<16)
	go func() {
		for {
			m, err := c.Next()
			if err != nil {
				close(msgs)
				return
			}
			msgs <- m
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	ids := make([]map[engine.OrderID]bool, len(r.accts))
	for i, acct := range r.accts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = trade(ctx, t, r.eng, acct, rand.New(rand.NewPCG(base, uint64(i))))
		}()
	}
	wg.Wait()
	// a last order of merchant 0 marks the end of the stream
	end := engine.OrderID(uuid.New())
	if _, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Symbol: "USDC-NGN", Account: r.accts[0], OrderID: end,
		Type: engine.Limit, Side: engine.Buy, Price: 100000, Qty: 100, Time: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	orders, balances, taker, maker := 0, 0, 0, 0
	timeout := time.After(10 * time.Second)
	for {
		var m *ws.Message
		select {
		case m = <-msgs:
			if m == nil {
				t.Fatal("connection closed")
			}
		case <-timeout:
			t.Fatal("no end marker")
		}
		switch m.Type {
		case "order":
			var d struct {
				OrderID   string `json:"order_id"`
				Liquidity string `json:"liquidity"`
			}
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatal(err)
			}
			id := engine.OrderID(uuid.MustParse(d.OrderID))
			if !ids[0][id] && id != end {
				t.Fatalf("merchant 0 was shown order %s of another merchant: %s", d.OrderID, m.Data)
			}
			orders++
			switch d.Liquidity {
			case "taker":
				taker++
			case "maker":
				maker++
			}
			if id == end {
				t.Logf("%d order updates (%d taker, %d maker fills), %d balance updates, all merchant 0's", orders, taker, maker, balances)
				if taker == 0 || maker == 0 || balances == 0 {
					t.Fatal("expected fills on both sides and balance updates")
				}
				return
			}
		case "balance":
			balances++
		}
	}
}

func TestProtocol(t *testing.T) {
	r := newRig(t, 2, ws.Config{MaxSubscriptions: 3, AuthTimeout: 300 * time.Millisecond})

	t.Run("a bad key on the upgrade is refused with 401", func(t *testing.T) {
		_, err := ws.Dial(r.url(), "svc_sk_test_nope")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a private channel before auth is an error; auth message then works", func(t *testing.T) {
		c := r.dial(t, "")
		_ = c.Subscribe("orders")
		if m := next(t, c, ofType("error")); m.Code != "UNAUTHORIZED" {
			t.Fatalf("%+v", m)
		}
		_ = c.Auth(r.keys[0])
		if m := next(t, c, ofType("ack")); m.Op != "auth" {
			t.Fatalf("%+v", m)
		}
		_ = c.Subscribe("trades:" + sym)
		if m := next(t, c, ofType("ack")); m.Op != "subscribe" || len(m.Channels) != 1 {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("a wrong key in the auth message closes the connection", func(t *testing.T) {
		c := r.dial(t, "")
		_ = c.Auth("svc_sk_test_wrong")
		if m := next(t, c, ofType("error")); m.Code != "UNAUTHORIZED" {
			t.Fatalf("%+v", m)
		}
		_, err := c.Next()
		if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("no auth in time closes the connection", func(t *testing.T) {
		c := r.dial(t, "")
		_ = c.Conn().SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err := c.Next()
		if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
			t.Fatalf("err %v", err)
		}
	})
	c := r.dial(t, r.keys[0])
	cases := []struct {
		name, frame, code string
	}{
		{"malformed JSON", `{"op":`, "INVALID_JSON"},
		{"wrong type", `{"op":"subscribe","channels":"x"}`, "INVALID_JSON"},
		{"unknown op", `{"op":"dance"}`, "UNKNOWN_OP"},
		{"no channels", `{"op":"subscribe"}`, "VALIDATION_ERROR"},
		{"unknown channel", `{"op":"subscribe","channels":["weather"]}`, "INVALID_CHANNEL"},
		{"unknown symbol", `{"op":"subscribe","channels":["orderbook:BTC-NGN"]}`, "INVALID_CHANNEL"},
		{"unknown interval", `{"op":"subscribe","channels":["klines:USDT-NGN:7m"]}`, "INVALID_CHANNEL"},
		{"too many channels", `{"op":"subscribe","channels":["trades:USDT-NGN","trades:USDC-NGN","trades:USD-NGN","orders"]}`, "TOO_MANY_SUBSCRIPTIONS"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" gets an error frame", func(t *testing.T) {
			if err := c.Conn().WriteMessage(websocket.TextMessage, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			if m := next(t, c, ofType("error")); m.Code != tc.code {
				t.Fatalf("code %s (%s), want %s", m.Code, m.Message, tc.code)
			}
		})
	}
	t.Run("binary frames get an error frame", func(t *testing.T) {
		_ = c.Conn().WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
		if m := next(t, c, ofType("error")); m.Code != "INVALID_MESSAGE" {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("ping op answers pong with the id", func(t *testing.T) {
		_ = c.Conn().WriteMessage(websocket.TextMessage, []byte(`{"op":"ping","id":42}`))
		m := next(t, c, ofType("pong"))
		_ = m
	})
	t.Run("subscribe, receive, unsubscribe", func(t *testing.T) {
		_ = c.Send(map[string]any{"op": "subscribe", "channels": []string{"orderbook:" + sym, "ticker:" + sym, "klines:" + sym + ":1m"}, "id": "s1"})
		next(t, c, ofType("ack"))
		if m := next(t, c, ofType("snapshot")); m.Channel != "orderbook:"+sym {
			t.Fatalf("%+v", m)
		}
		// a trade: 2.00 at 1500.00
		place(t, r, 1, engine.Sell, 150000, 200)
		place(t, r, 0, engine.Buy, 150000, 200)
		m := next(t, c, func(m *ws.Message) bool { return m.Type == "kline" })
		var k struct{ Open, Close, Volume string }
		_ = json.Unmarshal(m.Data, &k)
		if k.Open != "1500.00" || k.Volume != "2.00" {
			t.Fatalf("kline %s", m.Data)
		}
		m = next(t, c, func(m *ws.Message) bool {
			return m.Type == "ticker" && strings.Contains(string(m.Data), `"volume_24h":"2.00"`)
		})
		_ = c.Unsubscribe("orderbook:"+sym, "ticker:"+sym, "klines:"+sym+":1m")
		next(t, c, func(m *ws.Message) bool { return m.Type == "ack" && m.Op == "unsubscribe" })
	})
}

func place(t *testing.T, r *rig, who int, side engine.Side, price engine.Price, qty engine.Qty) {
	t.Helper()
	res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Symbol: sym, Account: r.accts[who], OrderID: engine.OrderID(uuid.New()),
		Type: engine.Limit, Side: side, Price: price, Qty: qty, Time: time.Now().UnixNano()})
	if err != nil || res.Code != engine.OK {
		t.Fatalf("place: %v %v", res.Code, err)
	}
}

func TestSlowConsumerIsClosedAndOthersKeepFlowing(t *testing.T) {
	r := newRig(t, 2, ws.Config{QueueLen: 8, WriteTimeout: 10 * time.Second})
	for i := 0; i < 1500; i++ { // a deep book: each snapshot is ~40 KB
		place(t, r, 0, engine.Buy, engine.Price(100000+i), 100)
	}
	slow := r.dial(t, r.keys[1])
	fast := r.dial(t, r.keys[0])
	_ = fast.Subscribe("trades:" + sym)
	next(t, fast, ofType("ack"))
	// the slow client asks for snapshot after snapshot and reads nothing
	for i := 0; i < 400 && r.server.SlowConsumers() == 0; i++ {
		if err := slow.Subscribe("orderbook:" + sym); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.server.SlowConsumers() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.server.SlowConsumers() != 1 {
		t.Fatalf("slow consumers %d", r.server.SlowConsumers())
	}
	// the others still get their messages at once
	place(t, r, 1, engine.Sell, 100000, 100)
	if m := next(t, fast, ofType("trades")); m.Channel != "trades:"+sym {
		t.Fatalf("%+v", m)
	}
	// and the slow one finds the reason when it finally reads
	_ = slow.Conn().SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, err := slow.Next()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseTryAgainLater) {
				t.Fatalf("slow client: %v", err)
			}
			t.Logf("slow client closed: %v", err)
			break
		}
	}
}
