package ws

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/persistence/projection"
)

// The private channels (orders, balances, trades) of one account share a sequence,
// account_seq, carried by every message; it grows by one per message of the account's.
// The hub keeps the account's last ResumeWindow messages from its first private
// subscription on, and for ResumeKeep after its last subscriber left (a reconnect), so a
// client that subscribes again with "since": <the last account_seq it read> gets what it
// missed, in order, before anything new:
//
//	{"type":"resume","status":"replayed","since":N,"count":k,"account_seq":S}  then the k messages
//	{"type":"resume","status":"snapshot","since":N,"account_seq":S,"reason":"..."} then a snapshot
//
// When the window no longer reaches back to N+1 (more than ResumeWindow messages, the
// hub restarted, or no subscriber for longer than ResumeKeep), the answer says so and
// sends a snapshot first: {"type":"snapshot","channel":"orders","data":[open orders]} and
// {"type":"snapshot","channel":"balances","data":[balances]} (trades have no snapshot:
// GET /v1/trading/trades). Sequences start at the hub's clock in microseconds when an
// account's window is made, so a sequence from a window that is gone is never mistaken
// for one of the next.
const (
	// ResumeWindow is how many private messages per account a resume can replay.
	ResumeWindow = 1024
	// ResumeKeep is how long an account's window outlives its last subscriber.
	ResumeKeep = 5 * time.Minute
)

// PrivateState is what the hub reads of an account for a resume snapshot
// (*engine.Engine has it); an Exchange without it sends no snapshot data.
type PrivateState interface {
	OpenOrders(acct engine.AccountID, symbol string, dst []engine.OrderView) []engine.OrderView
	Balances(acct engine.AccountID) engine.Balances
}

type privateSubs struct {
	orders, balances, trades subSet

	seq       uint64    // account_seq of the last message
	win       []privMsg // ring of the last ResumeWindow messages
	head      int       // index of the oldest message in win once it is full
	idleSince time.Time // when the last subscriber left; zero while subscribed
}

type privMsg struct {
	seq  uint64
	kind byte // 'o', 'B', 'T'
	b    []byte
}

func (ps *privateSubs) subscribers() int {
	return ps.orders.len() + ps.balances.len() + ps.trades.len()
}

// add numbers and keeps one message of kind built by enc, and returns its bytes.
func (ps *privateSubs) add(kind byte, enc func(seq uint64) []byte) []byte {
	ps.seq++
	m := privMsg{seq: ps.seq, kind: kind, b: enc(ps.seq)}
	if len(ps.win) < ResumeWindow {
		ps.win = append(ps.win, m)
	} else {
		ps.win[ps.head] = m
		ps.head = (ps.head + 1) % ResumeWindow
	}
	return m.b
}

// since returns the kept messages after seq, oldest first, and whether they are all of
// them (the window reaches back to seq+1).
func (ps *privateSubs) since(seq uint64) ([]privMsg, bool) {
	if seq > ps.seq {
		return nil, false
	}
	if seq == ps.seq {
		return nil, true
	}
	n := len(ps.win)
	if n == 0 {
		return nil, false
	}
	oldest := ps.win[ps.head%n].seq
	if seq+1 < oldest {
		return nil, false
	}
	out := make([]privMsg, 0, ps.seq-seq)
	for i := 0; i < n; i++ {
		m := ps.win[(ps.head+i)%n]
		if m.seq > seq {
			out = append(out, m)
		}
	}
	return out, true
}

// account returns acct's private state, making it (and its sequence) on first use.
func (h *Hub) account(acct engine.AccountID) *privateSubs {
	ps := h.private[acct]
	if ps == nil {
		ps = &privateSubs{seq: uint64(h.cfg.Now().UnixMicro())}
		h.private[acct] = ps
	}
	return ps
}

// privateEvent sends the order, trade and balance updates of an event to the accounts it
// concerns (only the merchant's own connections of this environment) and keeps them for
// resumes.
func (h *Hub) privateEvent(e *engine.Event) {
	if e.Kind == engine.EventTrade {
		other := engine.Sell
		if e.Side == engine.Sell {
			other = engine.Buy
		}
		h.orderUpdate(e.Account, e, e.OrderID, e.Side, "taker")
		h.orderUpdate(e.MakerAccount, e, e.MakerOrderID, other, "maker")
		h.tradeUpdate(e.Account, e, e.OrderID, e.Side, "taker")
		h.tradeUpdate(e.MakerAccount, e, e.MakerOrderID, other, "maker")
	} else if e.Symbol != "" && e.Kind != engine.EventCountdown {
		h.orderUpdate(e.Account, e, e.OrderID, e.Side, "")
	}
	for i := 0; i < int(e.NDeltas); i++ {
		d := &e.Deltas[i]
		ps := h.private[d.Account]
		if ps == nil {
			continue
		}
		msg := ps.add('B', func(seq uint64) []byte {
			b, _ := json.Marshal(balanceMsg{Type: "balance", Channel: "balances", Data: balanceData{
				Asset: d.Asset.String(), AvailableDelta: engine.FormatAmount(d.Asset, d.Available),
				LockedDelta: engine.FormatAmount(d.Asset, d.Locked), Cause: e.Kind.String(),
				Symbol: e.Symbol, Sequence: e.Seq,
			}, Timestamp: e.Time / 1e6, AccountSeq: seq})
			return b
		})
		ps.balances.each(func(c *conn) { c.sendBytes(msg) })
	}
}

func (h *Hub) orderUpdate(acct engine.AccountID, e *engine.Event, id engine.OrderID, side engine.Side, liquidity string) {
	ps := h.private[acct]
	s := h.bySymbol[e.Symbol]
	if ps == nil || s == nil {
		return
	}
	msg := ps.add('o', func(seq uint64) []byte {
		d := orderData{Event: e.Kind.String(), OrderID: uuid.UUID(id).String(), Symbol: e.Symbol, Side: side.String(),
			Quantity: s.pair.FormatQty(e.Qty), Sequence: e.Seq, Liquidity: liquidity}
		if e.Price > 0 {
			p := s.pair.FormatPrice(e.Price)
			d.Price = &p
		}
		switch e.Kind {
		case engine.EventAccepted:
			d.Type, d.ClientOrderID, d.TimeInForce = e.Type.String(), e.ClientOrderID, e.TIF.String()
			d.Metadata = metadataJSON(e.Metadata)
		case engine.EventCancelled:
			d.Reason = e.Reason.String()
		case engine.EventAmended: // price and quantity are the new ones; quantity is what is open
			d.Type, d.TimeInForce = e.Type.String(), e.TIF.String()
		}
		b, _ := json.Marshal(orderMsg{Type: "order", Channel: "orders", Data: d, Timestamp: e.Time / 1e6, AccountSeq: seq})
		return b
	})
	ps.orders.each(func(c *conn) { c.sendBytes(msg) })
}

// tradeUpdate sends one side of a fill on the private trades channel.
func (h *Hub) tradeUpdate(acct engine.AccountID, e *engine.Event, id engine.OrderID, side engine.Side, liquidity string) {
	ps := h.private[acct]
	s := h.bySymbol[e.Symbol]
	if ps == nil || s == nil {
		return
	}
	msg := ps.add('T', func(seq uint64) []byte {
		b, _ := json.Marshal(myTradeMsg{Type: "trade", Channel: "trades", Data: myTradeData{
			TradeID: projection.TradeID(string(h.cfg.Env), e.Symbol, e.Seq, e.Time).String(),
			OrderID: uuid.UUID(id).String(), Symbol: e.Symbol, Side: side.String(),
			Price: s.pair.FormatPrice(e.Price), Quantity: s.pair.FormatQty(e.Qty), Liquidity: liquidity, Sequence: e.Seq,
		}, Timestamp: e.Time / 1e6, AccountSeq: seq})
		return b
	})
	ps.trades.each(func(c *conn) { c.sendBytes(msg) })
}

type myTradeMsg struct {
	Type       string      `json:"type"`
	Channel    string      `json:"channel"`
	Data       myTradeData `json:"data"`
	Timestamp  int64       `json:"timestamp"`
	AccountSeq uint64      `json:"account_seq"`
}

type myTradeData struct {
	TradeID   string `json:"trade_id"` // the id GET /v1/trading/trades gives this fill
	OrderID   string `json:"order_id"`
	Symbol    string `json:"symbol"`
	Side      string `json:"side"`
	Price     string `json:"price"`
	Quantity  string `json:"quantity"`
	Liquidity string `json:"liquidity"`
	Sequence  uint64 `json:"sequence"`
}

// resume runs on the hub goroutine right after subscribe: for a subscribe with "since",
// it replays the private messages after since on the channels just subscribed, or says
// it cannot and sends a snapshot.
func (h *Hub) resume(c *conn, chs []channel, since *uint64) {
	if since == nil {
		return
	}
	kinds := map[byte]bool{}
	for _, ch := range chs {
		if ch.kind == 'o' || ch.kind == 'B' || ch.kind == 'T' {
			kinds[ch.kind] = true
		}
	}
	if len(kinds) == 0 {
		return
	}
	acct := engine.AccountID(c.principal.MerchantID)
	ps := h.account(acct)
	msgs, ok := ps.since(*since)
	if ok {
		n := 0
		for _, m := range msgs {
			if kinds[m.kind] {
				n++
			}
		}
		c.sendBytes([]byte(`{"type":"resume","status":"replayed","since":` + strconv.FormatUint(*since, 10) +
			`,"count":` + strconv.Itoa(n) + `,"account_seq":` + strconv.FormatUint(ps.seq, 10) + `}`))
		for _, m := range msgs {
			if kinds[m.kind] {
				c.sendBytes(m.b)
			}
		}
		return
	}
	reason := "the window no longer holds the messages after since (it keeps the last " + strconv.Itoa(ResumeWindow) + ")"
	if *since > ps.seq {
		reason = "since is ahead of this stream (a sequence from before a restart of the server)"
	}
	c.sendBytes([]byte(`{"type":"resume","status":"snapshot","since":` + strconv.FormatUint(*since, 10) +
		`,"account_seq":` + strconv.FormatUint(ps.seq, 10) + `,"reason":` + strconv.Quote(reason) + `}`))
	st, _ := h.cfg.Exchange.(PrivateState)
	if st == nil {
		return
	}
	if kinds['o'] {
		views := st.OpenOrders(acct, "", nil)
		items := make([]snapOrder, 0, len(views))
		for _, v := range views {
			s := h.bySymbol[v.Symbol]
			if s == nil {
				continue
			}
			o := snapOrder{ID: uuid.UUID(v.ID).String(), Symbol: v.Symbol, Side: v.Side.String(), Type: v.Type.String(),
				TimeInForce: v.TIF.String(), Quantity: s.pair.FormatQty(v.Qty), FilledQuantity: s.pair.FormatQty(v.Filled), Status: v.State.String(),
				Metadata: metadataJSON(v.Metadata)}
			if o.Metadata == nil {
				o.Metadata = json.RawMessage(`{}`)
			}
			if v.ClientOrderID != "" {
				o.ClientOrderID = &v.ClientOrderID
			}
			if v.Type == engine.Limit {
				p := s.pair.FormatPrice(v.Price)
				o.Price = &p
			}
			items = append(items, o)
		}
		b, _ := json.Marshal(struct {
			Type       string      `json:"type"`
			Channel    string      `json:"channel"`
			Data       []snapOrder `json:"data"`
			AccountSeq uint64      `json:"account_seq"`
		}{"snapshot", "orders", items, ps.seq})
		c.sendBytes(b)
	}
	if kinds['B'] {
		bal := st.Balances(acct)
		items := []snapBalance{}
		for a := engine.NGN; int(a) < engine.NumAssets; a++ {
			items = append(items, snapBalance{Asset: a.String(), Available: engine.FormatAmount(a, bal[a].Available), Locked: engine.FormatAmount(a, bal[a].Locked)})
		}
		b, _ := json.Marshal(struct {
			Type       string        `json:"type"`
			Channel    string        `json:"channel"`
			Data       []snapBalance `json:"data"`
			AccountSeq uint64        `json:"account_seq"`
		}{"snapshot", "balances", items, ps.seq})
		c.sendBytes(b)
	}
}

type snapOrder struct {
	ID             string  `json:"id"`
	ClientOrderID  *string `json:"client_order_id"`
	Symbol         string  `json:"symbol"`
	Side           string  `json:"side"`
	Type           string  `json:"type"`
	TimeInForce    string  `json:"time_in_force"`
	Quantity       string  `json:"quantity"`
	FilledQuantity string  `json:"filled_quantity"`
	Price          *string `json:"price"`
	Status         string  `json:"status"`
	// Metadata is the order's ({} for none), as on the REST order.
	Metadata json.RawMessage `json:"metadata"`
}

// metadataJSON is an order's metadata as a message carries it: the engine's bytes are the
// gateway's JSON object, but a journal another producer wrote could hold anything, and a
// value that is not JSON would make the whole message fail to encode.
func metadataJSON(m string) json.RawMessage {
	if m == "" || m[0] != '{' || !json.Valid([]byte(m)) {
		return nil
	}
	return json.RawMessage(m)
}

type snapBalance struct {
	Asset     string `json:"asset"`
	Available string `json:"available"`
	Locked    string `json:"locked"`
}

// prunePrivate marks c's account idle when its last private subscriber left; its window
// is kept for ResumeKeep (evictPrivate).
func (h *Hub) prunePrivate(c *conn) {
	acct := engine.AccountID(c.principal.MerchantID)
	if ps := h.private[acct]; ps != nil && ps.subscribers() == 0 && ps.idleSince.IsZero() {
		ps.idleSince = h.cfg.Now()
	}
}

// evictPrivate drops the windows of accounts without subscribers for ResumeKeep (ticker).
func (h *Hub) evictPrivate() {
	now := h.cfg.Now()
	for acct, ps := range h.private {
		if ps.subscribers() == 0 && !ps.idleSince.IsZero() && now.Sub(ps.idleSince) > ResumeKeep {
			delete(h.private, acct)
		}
	}
}
