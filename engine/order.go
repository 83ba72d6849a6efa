package engine

// order is a live or recently closed order. The runner of its symbol owns it.
//
// Fields above the line are the book's and the matcher's. Fields below are also read
// by views (GetOrder, OpenOrders) from other goroutines: once an order is published in
// its account's order map, the runner writes them only while holding that account's
// mutex, and readers read them only while holding it.
//
// Layout: orders come from 64-byte aligned chunks (orderPool) and the struct is three
// cache lines. The first line holds what finding, queueing and filling a resting order
// touches (links, level, account, id, remaining, reserved); the second what a cancel or
// a fill also reads or writes (side, state, filled, market, price); the third what only
// views and recovery read. A deep book's cancel therefore misses on two adjacent lines
// of the order, not three or four scattered ones.
type order struct {
	prev, next *order // FIFO neighbours within the level
	lvl        *level // the level the order rests in, nil when not in the book
	acct       *account
	id         OrderID
	remaining  Qty   // quantity still open (book-owned)
	reserved   int64 // amount of the locked asset still held for this order

	// line 2
	side     Side
	typ      OrderType
	tif      TimeInForce
	stp      STPMode
	postOnly bool
	state    OrderState   // view field
	reason   CancelReason // view field
	filled   Qty          // view field
	mkt      *market
	price    Price  // limit price; 0 for market orders
	seq      uint64 // sequence of its EventAccepted: FIFO order within a level
	qty      Qty    // view field: original quantity; for a market buy by amount, the filled quantity at the end
	time     int64
	quoteQty int64 // market buy by quote amount: the amount

	// line 3: immutable after accept, read by views
	clientID  string
	clientKey uint64 // clientKey(clientID), set by addOrder: the client id index's key (clientid.go)
	meta      string // the place command's Metadata, "" for none

	_ [orderPad]byte
}

// orderPad pads order to three cache lines (checked by TestOrderLayout).
const orderPad = 192 - 168

// OrderView is a copy of an order's public fields.
type OrderView struct {
	ID            OrderID
	ClientOrderID string
	Account       AccountID
	Symbol        string
	Side          Side
	Type          OrderType
	TIF           TimeInForce
	PostOnly      bool
	Price         Price // 0 for market orders
	Qty           Qty   // original quantity (filled quantity for a completed market buy by amount)
	QuoteQty      int64 // market buy by amount: the amount, in quote units
	Filled        Qty
	State         OrderState
	Reason        CancelReason
	Time          int64  // unix nanoseconds of the place command
	Metadata      string // the place command's Metadata ("": none)
}

// view copies o; the caller holds o.acct.mu.
func (o *order) view() OrderView {
	return OrderView{
		ID: o.id, ClientOrderID: o.clientID, Account: o.acct.id, Symbol: o.mkt.pair.Symbol,
		Side: o.side, Type: o.typ, TIF: o.tif, PostOnly: o.postOnly, Price: o.price,
		Qty: o.qty, QuoteQty: o.quoteQty, Filled: o.filled, State: o.state, Reason: o.reason,
		Time: o.time, Metadata: o.meta,
	}
}

// orderPool is a free list of orders owned by one runner. New orders are cut from
// chunks of orderChunk, each a single allocation larger than 32 KiB and so page aligned:
// every order starts on a cache line.
type orderPool struct {
	free  []*order
	chunk []order
}

const orderChunk = 256

func (p *orderPool) get() *order {
	if n := len(p.free); n > 0 {
		o := p.free[n-1]
		p.free = p.free[:n-1]
		return o
	}
	if len(p.chunk) == 0 {
		p.chunk = make([]order, orderChunk)
	}
	o := &p.chunk[0]
	p.chunk = p.chunk[1:]
	return o
}

func (p *orderPool) put(o *order) {
	*o = order{}
	p.free = append(p.free, o)
}
