package engine

import (
	"cmp"
	"slices"
)

// market is one symbol's state machine: validation, risk (reserve on accept, settle from
// fills and cancels), and matching in the book. It is single-threaded: only its runner
// (or Apply, or a test) calls it. It touches accounts only under their mutexes.
type market struct {
	stream
	pair  *pair
	book  *book
	accts accountCache
	pool  orderPool

	closed    []*order // recently closed orders, oldest evicted first
	closedPos int

	countdowns map[countdownKey]int64 // armed countdowns: deadline, unix ns (countdown.go)

	scratch []*order

	ahead ahead // the look-ahead's state (lookahead.go)
}

func newMarket(p *pair, accts *accountTable, closedCap int) *market {
	if closedCap < 1 {
		closedCap = 1
	}
	return &market{
		stream: stream{symbol: p.Symbol},
		pair:   p,
		book:   newBook(p.TickSize),
		accts:  accountCache{table: accts, m: make(map[uint64]*account)},
		closed: make([]*order, closedCap),
	}
}

func (m *market) exec(c *Command, r *Result) {
	switch c.Kind {
	case CmdPlace:
		m.place(c, r)
	case CmdCancel:
		m.cancel(c, r)
	case CmdCancelAll:
		m.cancelAll(c, r)
	case CmdAmend:
		m.amend(c, r)
	case CmdCountdown:
		m.countdown(c, r)
	case CmdTick:
		m.tick(c, r)
	default:
		r.Code = RejectInvalidCommand
	}
}

// validate checks a place command against the pair and returns the normalized time in
// force and, for limit orders, the notional.
func (m *market) validate(c *Command) (ResultCode, TimeInForce) {
	p := m.pair
	if (c.Side != Buy && c.Side != Sell) || c.TIF > FOK || c.STP > STPCancelBoth || len(c.Metadata) > MaxMetadata {
		return RejectInvalidCommand, 0
	}
	tif := c.TIF
	checkQty := func() ResultCode {
		switch {
		case c.Qty <= 0 || c.Qty > p.maxQty || (p.StepSize != 1 && c.Qty%p.StepSize != 0): // a division costs more than the test
			return RejectInvalidQuantity
		case c.Qty < p.MinQty:
			return RejectBelowMinQty
		}
		return OK
	}
	switch c.Type {
	case Limit:
		if c.Price <= 0 || c.Price > p.maxPrice || (p.TickSize != 1 && c.Price%p.TickSize != 0) {
			return RejectInvalidPrice, 0
		}
		if c.QuoteQty != 0 {
			return RejectInvalidQuantity, 0
		}
		if code := checkQty(); code != OK {
			return code, 0
		}
		if p.notional(c.Price, c.Qty) < p.MinNotional {
			return RejectBelowMinNotional, 0
		}
	case Market:
		if c.PostOnly {
			return RejectInvalidCommand, 0
		}
		if tif == GTC {
			tif = IOC
		}
		if c.Side == Buy && c.Qty == 0 && c.QuoteQty != 0 {
			if tif == FOK {
				return RejectInvalidCommand, 0
			}
			if c.QuoteQty < 0 || c.QuoteQty > p.notional(p.maxPrice, p.maxQty) {
				return RejectInvalidQuantity, 0
			}
			if c.QuoteQty < p.MinNotional {
				return RejectBelowMinNotional, 0
			}
			return OK, tif
		}
		if c.QuoteQty != 0 {
			return RejectInvalidQuantity, 0
		}
		if code := checkQty(); code != OK {
			return code, 0
		}
	default:
		return RejectInvalidCommand, 0
	}
	return OK, tif
}

// taker accumulates the taker's own balance changes during one command; they are
// applied under its account mutex once, at the end.
type taker struct {
	baseAvail, quoteAvail, locked int64
	filled                        Qty
	stop                          CancelReason // why matching stopped early, if it did
	budgetDone                    bool         // a market buy ran out of reservation
}

func (m *market) place(c *Command, r *Result) {
	r.OrderID = c.OrderID
	code, tif := m.validate(c)
	if code != OK {
		r.Code = code
		return
	}
	p := m.pair
	side, opp := c.Side, opposite(c.Side)
	byAmount := c.Type == Market && c.Side == Buy && c.Qty == 0
	price := c.Price
	if c.Type == Market {
		price = 0
	}
	if c.PostOnly {
		if bl := m.book.bestLevel(opp); bl != nil && crosses(side, price, bl.price) {
			r.Code = RejectPostOnlyWouldTake
			return
		}
	}

	var (
		lockAsset Asset
		reserve   int64
		capped    bool // reserve may be cut to what is available (market buy by quantity)
	)
	switch {
	case side == Sell:
		lockAsset, reserve = p.Base, p.baseUnits(c.Qty)
	case c.Type == Limit:
		lockAsset, reserve = p.Quote, p.notional(c.Price, c.Qty)
	case byAmount:
		lockAsset, reserve = p.Quote, c.QuoteQty
	default:
		lockAsset, reserve, capped = p.Quote, m.buyCost(c.Qty), true
	}

	acct := m.accts.get(c.Account)
	acct.mu.Lock()
	m.accts.follow(acct) // after other runners' changes to acct in the journal (sequence.go)
	// One probe for the duplicate check and the insert (addOrderAt below).
	dup, idKey, idSlot := acct.orders.find(&c.OrderID)
	if dup != nil {
		acct.mu.Unlock()
		r.Code = RejectDuplicateOrderID
		return
	}
	if acct.clientIDTaken(c, r) {
		acct.mu.Unlock()
		return
	}
	b := &acct.bal[lockAsset]
	if capped && reserve > b.Available {
		if b.Available <= 0 {
			acct.mu.Unlock()
			r.Code = RejectInsufficientFunds
			return
		}
		reserve = b.Available
	}
	if b.Available < reserve {
		acct.mu.Unlock()
		r.Code = RejectInsufficientFunds
		return
	}
	b.Available -= reserve
	b.Locked += reserve
	o := m.pool.get()
	o.acct, o.mkt = acct, m
	o.id, o.clientID, o.time, o.meta = c.OrderID, c.ClientOrderID, c.Time, c.Metadata
	o.price, o.quoteQty = price, c.QuoteQty
	o.side, o.typ, o.tif, o.stp, o.postOnly = side, c.Type, tif, c.STP, c.PostOnly
	o.qty, o.remaining, o.reserved = c.Qty, c.Qty, reserve
	if byAmount {
		o.remaining = p.maxQty
	}
	o.state = Open
	acct.addOrderAt(o, idKey, idSlot)
	acct.mu.Unlock()

	e := m.event(EventAccepted, c.Time)
	o.seq = e.Seq
	e.Account, e.OrderID, e.ClientOrderID, e.Metadata = acct.id, o.id, o.clientID, o.meta
	e.Side, e.Type, e.TIF, e.STP, e.PostOnly = side, o.typ, tif, o.stp, o.postOnly
	e.Price, e.Qty, e.QuoteQty = price, c.Qty, c.QuoteQty
	e.addDelta(acct.id, lockAsset, -reserve, reserve)

	var t taker
	if tif == FOK && !m.fillable(o) {
		t.stop = ReasonFOKUnfillable
	} else {
		m.match(o, &t, c.Time)
	}

	// Finish the taker: rest, fill or cancel what is left.
	state, reason := Open, ReasonNone
	switch {
	case t.stop != ReasonNone:
		state, reason = Cancelled, t.stop
	case byAmount && t.budgetDone && t.filled > 0:
		state = Filled
	case !byAmount && o.remaining == 0:
		state = Filled
	case o.typ == Limit && tif == GTC:
		state = Open
	case t.budgetDone:
		state, reason = Cancelled, ReasonInsufficientFunds
	default:
		state, reason = Cancelled, ReasonIOCRemainder
	}
	if state == Open && t.filled > 0 {
		state = PartiallyFilled
	}
	switch {
	case state == Cancelled:
		rel := o.reserved
		left := o.remaining
		if byAmount {
			left = 0
		}
		e := m.event(EventCancelled, c.Time)
		e.Account, e.OrderID, e.Side, e.Reason, e.Qty, e.Price = acct.id, o.id, side, reason, left, o.price
		e.addDelta(acct.id, lockAsset, rel, -rel)
		t.locked -= rel
		if lockAsset == p.Base {
			t.baseAvail += rel
		} else {
			t.quoteAvail += rel
		}
		o.reserved = 0
	case state == Filled && o.typ == Market && side == Buy:
		rel := o.reserved
		e := m.event(EventDone, c.Time)
		e.Account, e.OrderID, e.Side, e.Qty = acct.id, o.id, side, t.filled
		e.addDelta(acct.id, lockAsset, rel, -rel)
		t.locked -= rel
		t.quoteAvail += rel
		o.reserved = 0
	case !state.Closed():
		m.book.add(o)
	}

	if state != Open || t != (taker{}) { // a passive order that rested untouched changed nothing more
		acct.mu.Lock()
		acct.bal[p.Base].Available += t.baseAvail
		acct.bal[p.Quote].Available += t.quoteAvail
		acct.bal[lockAsset].Locked += t.locked
		o.filled = t.filled
		if byAmount {
			o.qty = t.filled
		}
		o.state, o.reason = state, reason
		acct.mu.Unlock()
	}
	if state.Closed() {
		m.retire(o)
	}
	r.Code, r.State, r.Reason, r.Filled, r.Seq = OK, state, reason, t.filled, m.seq
}

// match trades the taker o against the opposite side while prices cross.
func (m *market) match(o *order, t *taker, now int64) {
	p := m.pair
	side, opp := o.side, opposite(o.side)
	marketBuy := o.typ == Market && side == Buy
	for o.remaining > 0 {
		l := m.book.bestLevel(opp)
		if l == nil || (o.typ == Limit && !crosses(side, o.price, l.price)) {
			return
		}
		mk := l.head
		if mk.acct == o.acct {
			switch o.stp {
			case STPCancelResting:
				m.cancelResting(mk, ReasonSelfTrade, now)
				continue
			case STPCancelBoth:
				m.cancelResting(mk, ReasonSelfTrade, now)
			}
			t.stop = ReasonSelfTrade
			return
		}
		q := min(o.remaining, mk.remaining)
		px := l.price
		if marketBuy {
			afford := Qty(o.reserved / p.notional(px, 1))
			afford -= afford % p.StepSize
			if afford < q {
				q = afford
			}
			if q == 0 {
				t.budgetDone = true
				return
			}
		}
		notional := p.notional(px, q)
		base := p.baseUnits(q)
		e := m.event(EventTrade, now)
		e.Account, e.OrderID, e.Side = o.acct.id, o.id, side
		e.MakerOrderID, e.MakerAccount = mk.id, mk.acct.id
		e.Price, e.Qty, e.Amount = px, q, notional
		if side == Buy {
			mk.reserved -= base
		} else {
			mk.reserved -= notional
		}
		if side == Buy {
			used := notional
			if o.typ == Limit {
				used = p.notional(o.price, q)
			}
			refund := used - notional
			o.reserved -= used
			t.quoteAvail += refund
			t.locked -= used
			t.baseAvail += base
			e.addDelta(o.acct.id, p.Quote, refund, -used)
			e.addDelta(o.acct.id, p.Base, base, 0)
			e.addDelta(mk.acct.id, p.Base, 0, -base)
			e.addDelta(mk.acct.id, p.Quote, notional, 0)
		} else {
			o.reserved -= base
			t.locked -= base
			t.quoteAvail += notional
			e.addDelta(mk.acct.id, p.Quote, 0, -notional)
			e.addDelta(mk.acct.id, p.Base, base, 0)
			e.addDelta(o.acct.id, p.Base, 0, -base)
			e.addDelta(o.acct.id, p.Quote, notional, 0)
		}
		o.remaining -= q
		t.filled += q
		m.book.fill(mk, q)

		ma := mk.acct
		ma.mu.Lock()
		m.accts.touch(ma)
		if side == Buy {
			ma.bal[p.Base].Locked -= base
			ma.bal[p.Quote].Available += notional
		} else {
			ma.bal[p.Quote].Locked -= notional
			ma.bal[p.Base].Available += base
		}
		mk.filled += q
		if mk.remaining == 0 {
			mk.state = Filled
		} else {
			mk.state = PartiallyFilled
		}
		ma.mu.Unlock()
		if mk.remaining == 0 {
			m.book.remove(mk)
			m.retire(mk)
		}
	}
}

// buyCost is what buying qty at market would cost now, or less if the book is thinner.
func (m *market) buyCost(qty Qty) int64 {
	var cost int64
	for l := range m.book.levelsFrom(Sell) {
		q := min(qty, l.total)
		cost += m.pair.notional(l.price, q)
		qty -= q
		if qty == 0 {
			break
		}
	}
	return cost
}

// fillable reports whether the FOK order o can be filled entirely now, counting what
// self-trade prevention would let it trade.
func (m *market) fillable(o *order) bool {
	need := o.remaining
	budget := o.reserved
	marketBuy := o.typ == Market && o.side == Buy
	for l := range m.book.levelsFrom(opposite(o.side)) {
		if o.typ == Limit && !crosses(o.side, o.price, l.price) {
			return false
		}
		for mk := l.head; mk != nil; mk = mk.next {
			if mk.acct == o.acct {
				if o.stp == STPCancelResting {
					continue
				}
				return false
			}
			q := min(need, mk.remaining)
			if marketBuy {
				cost := m.pair.notional(l.price, q)
				if cost > budget {
					return false
				}
				budget -= cost
			}
			need -= q
			if need == 0 {
				return true
			}
		}
	}
	return false
}

// cancelResting takes a resting order out of the book and releases what it holds.
func (m *market) cancelResting(o *order, reason CancelReason, now int64) {
	a := o.acct
	a.mu.Lock()
	m.cancelLocked(o, reason, now)
	a.mu.Unlock()
	m.retire(o)
}

// cancelLocked is cancelResting without retire, with o.acct.mu held.
func (m *market) cancelLocked(o *order, reason CancelReason, now int64) {
	p := m.pair
	asset := p.Base
	if o.side == Buy {
		asset = p.Quote
	}
	m.accts.touch(o.acct)
	rel := o.reserved
	e := m.event(EventCancelled, now)
	e.Account, e.OrderID, e.Side, e.Reason, e.Qty, e.Price = o.acct.id, o.id, o.side, reason, o.remaining, o.price
	e.addDelta(o.acct.id, asset, rel, -rel)
	m.book.remove(o)
	o.reserved = 0
	b := &o.acct.bal[asset]
	b.Available += rel
	b.Locked -= rel
	o.state, o.reason = Cancelled, reason
}

// retire remembers a closed order for views, evicting (and recycling) the oldest.
func (m *market) retire(o *order) {
	if old := m.closed[m.closedPos]; old != nil {
		a := old.acct
		a.mu.Lock()
		m.accts.touch(a) // frees its client order id
		a.removeOrder(old)
		a.mu.Unlock()
		m.pool.put(old)
	}
	m.closed[m.closedPos] = o
	m.closedPos++
	if m.closedPos == len(m.closed) {
		m.closedPos = 0
	}
	if m.book.orders >= lookaheadMin {
		m.prefetchEvictee()
	}
}

func (m *market) cancel(c *Command, r *Result) {
	r.OrderID = c.OrderID
	r.Code = RejectUnknownOrder
	a := m.accts.get(c.Account)
	a.mu.Lock()
	o := a.orders.get(&c.OrderID)
	if o == nil || o.mkt != m {
		a.mu.Unlock()
		return
	}
	if o.lvl == nil {
		r.Code, r.State, r.Reason, r.Filled = RejectNotCancellable, o.state, o.reason, o.filled
		a.mu.Unlock()
		return
	}
	reason := userReason(c)
	m.cancelLocked(o, reason, c.Time)
	a.mu.Unlock()
	m.retire(o)
	r.Code, r.State, r.Reason, r.Filled, r.Seq = OK, Cancelled, reason, o.filled, m.seq
}

func (m *market) cancelAll(c *Command, r *Result) {
	r.Code = OK
	a := m.accts.table.get(c.Account)
	if a == nil {
		return
	}
	m.scratch = m.scratch[:0]
	a.mu.Lock()
	for o := range a.orders.all {
		if o.mkt == m && o.lvl != nil {
			m.scratch = append(m.scratch, o)
		}
	}
	a.mu.Unlock()
	// Cancel in time priority so the events do not depend on map order.
	slices.SortFunc(m.scratch, func(x, y *order) int { return cmp.Compare(x.seq, y.seq) })
	for _, o := range m.scratch {
		m.cancelResting(o, userReason(c), c.Time)
	}
	r.Cancelled = len(m.scratch)
	clear(m.scratch)
	if len(m.scratch) > 0 {
		r.Seq = m.seq
	}
}

// userReason is the reason a cancel command gives: ReasonDisconnect when it says so
// (cancel-on-disconnect), else ReasonUser.
func userReason(c *Command) CancelReason {
	if c.Reason == ReasonDisconnect {
		return ReasonDisconnect
	}
	return ReasonUser
}

func compareIDs(a, b OrderID) int {
	return compareID((*[16]byte)(&a), (*[16]byte)(&b))
}
