package engine

// order is a live or recently closed order. The runner of its symbol owns it.
//
// Fields above the line are the book's and the matcher's. Fields below are also read
// by views (GetOrder, OpenOrders) from other goroutines: once an order is published in
// its account's order map, the runner writes them only while holding that account's
// mutex, and readers read them only while holding it.
type order struct {
	prev, next *order // FIFO neighbours within the level
	lvl        *level // the level the order rests in, nil when not in the book
	acct       *account
	remaining  Qty   // quantity still open (book-owned)
	reserved   int64 // amount of the locked asset still held for this order
	mkt        *market

	// immutable after accept
	seq      uint64 // sequence of its EventAccepted: FIFO order within a level
	id       OrderID
	clientID string
	time     int64
	price    Price // limit price; 0 for market orders
	quoteQty int64 // market buy by quote amount: the amount
	side     Side
	typ      OrderType
	tif      TimeInForce
	stp      STPMode
	postOnly bool

	// view fields, written under acct.mu once published
	qty    Qty // original quantity; for a market buy by amount, the filled quantity at the end
	filled Qty
	state  OrderState
	reason CancelReason
}

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
	Time          int64 // unix nanoseconds of the place command
}

// view copies o; the caller holds o.acct.mu.
func (o *order) view() OrderView {
	return OrderView{
		ID: o.id, ClientOrderID: o.clientID, Account: o.acct.id, Symbol: o.mkt.pair.Symbol,
		Side: o.side, Type: o.typ, TIF: o.tif, PostOnly: o.postOnly, Price: o.price,
		Qty: o.qty, QuoteQty: o.quoteQty, Filled: o.filled, State: o.state, Reason: o.reason,
		Time: o.time,
	}
}

// orderPool is a free list of orders owned by one runner.
type orderPool struct{ free []*order }

func (p *orderPool) get() *order {
	if n := len(p.free); n > 0 {
		o := p.free[n-1]
		p.free = p.free[:n-1]
		return o
	}
	return new(order)
}

func (p *orderPool) put(o *order) {
	*o = order{}
	p.free = append(p.free, o)
}
