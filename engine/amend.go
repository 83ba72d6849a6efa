package engine

import "fmt"

// Amend (CmdAmend) changes a resting limit order's price and/or quantity in place of a
// cancel and a new order, keeping its id, client order id and fills:
//
//   - Qty is the new total quantity (filled included), Price the new limit price; 0 keeps
//     the order's. Both are validated like a place (tick, step, maximum, minimum quantity
//     and notional on the new total).
//   - A new total at or below what is already filled cancels the rest (ReasonUser).
//   - The same price and a smaller quantity keep the order's place in its queue. A new
//     price, or a larger quantity, sends it to the back of the queue at that price, and a
//     new price that crosses the book trades at once as a taker, under the order's own
//     self-trade prevention mode; a post-only order whose new price would take is
//     rejected and left as it was.
//   - The reservation follows: the difference between what the new open quantity needs
//     (price x open for a buy, open for a sell) and what the order holds is locked or
//     released in the same command; RejectInsufficientFunds if more is needed than is
//     available (nothing changes).
//   - Only an order resting in the book can be amended: a closed one is
//     RejectNotCancellable; an amend that changes nothing is OK without events.
//
// The effects are journaled as EventAmended (then trades and a cancel, if any), which
// replay applies without matching (apply.go).
func (m *market) amend(c *Command, r *Result) {
	r.OrderID = c.OrderID
	r.Code = RejectUnknownOrder
	p := m.pair
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
	price, qty := o.price, o.qty
	if c.Price != 0 {
		price = c.Price
	}
	if c.Qty != 0 {
		qty = c.Qty
	}
	switch {
	case c.Price < 0 || price > p.maxPrice || price%p.TickSize != 0:
		r.Code = RejectInvalidPrice
	case c.Qty < 0 || qty > p.maxQty || qty%p.StepSize != 0:
		r.Code = RejectInvalidQuantity
	case qty <= o.filled: // nothing left to trade: cancel the rest
		m.cancelLocked(o, ReasonUser, c.Time)
		a.mu.Unlock()
		m.retire(o)
		r.Code, r.State, r.Reason, r.Filled, r.Seq = OK, Cancelled, ReasonUser, o.filled, m.seq
		return
	case qty < p.MinQty:
		r.Code = RejectBelowMinQty
	case p.notional(price, qty) < p.MinNotional:
		r.Code = RejectBelowMinNotional
	case price == o.price && qty == o.qty:
		r.Code, r.State, r.Filled = OK, o.state, o.filled
	case price != o.price && o.postOnly && m.wouldTake(o.side, price):
		r.Code = RejectPostOnlyWouldTake
	default:
		r.Code = OK
	}
	if r.Code != OK || (price == o.price && qty == o.qty) {
		r.State, r.Filled = o.state, o.filled
		a.mu.Unlock()
		return
	}
	open := qty - o.filled
	asset, need := p.Base, p.baseUnits(open)
	if o.side == Buy {
		asset, need = p.Quote, p.notional(price, open)
	}
	m.accts.follow(a) // may release a.mu; the order is this runner's, so it is unchanged
	delta := need - o.reserved
	b := &a.bal[asset]
	if delta > b.Available {
		a.mu.Unlock()
		r.Code, r.State, r.Filled = RejectInsufficientFunds, o.state, o.filled
		return
	}
	b.Available -= delta
	b.Locked += delta
	keep := price == o.price && open < o.remaining
	e := m.event(EventAmended, c.Time)
	e.Account, e.OrderID, e.Side, e.Type, e.TIF = a.id, o.id, o.side, o.typ, o.tif
	e.Price, e.Qty, e.Amount, e.QuoteQty = price, open, int64(o.price), int64(o.remaining)
	e.addDelta(a.id, asset, -delta, delta)
	o.reserved = need
	o.qty = qty
	if keep {
		m.book.fill(o, o.remaining-open) // the level's total follows; the order keeps its place
		a.mu.Unlock()
		r.Code, r.State, r.Filled, r.Seq = OK, o.state, o.filled, m.seq
		return
	}
	o.price = price
	a.mu.Unlock()
	m.book.remove(o)
	o.remaining, o.seq = open, e.Seq

	var t taker
	m.match(o, &t, c.Time)
	state, reason := Open, ReasonNone
	switch {
	case t.stop != ReasonNone:
		state, reason = Cancelled, t.stop
	case o.remaining == 0:
		state = Filled
	case o.filled+t.filled > 0:
		state = PartiallyFilled
	}
	switch state {
	case Cancelled:
		rel := o.reserved
		e := m.event(EventCancelled, c.Time)
		e.Account, e.OrderID, e.Side, e.Reason, e.Qty, e.Price = a.id, o.id, o.side, reason, o.remaining, o.price
		e.addDelta(a.id, asset, rel, -rel)
		t.locked -= rel
		if asset == p.Base {
			t.baseAvail += rel
		} else {
			t.quoteAvail += rel
		}
		o.reserved = 0
	case Open, PartiallyFilled:
		m.book.add(o)
	}
	a.mu.Lock()
	a.bal[p.Base].Available += t.baseAvail
	a.bal[p.Quote].Available += t.quoteAvail
	a.bal[asset].Locked += t.locked
	o.filled += t.filled
	o.state, o.reason = state, reason
	a.mu.Unlock()
	if state.Closed() {
		m.retire(o)
	}
	r.Code, r.State, r.Reason, r.Filled, r.Seq = OK, state, reason, o.filled, m.seq
}

// wouldTake reports whether a limit order on side s at price would trade at once.
func (m *market) wouldTake(s Side, price Price) bool {
	bl := m.book.bestLevel(opposite(s))
	return bl != nil && crosses(s, price, bl.price)
}

// applyAmended replays an EventAmended (balances were already applied).
func (m *market) applyAmended(e *Event) error {
	o := m.orderOf(e.Account, e.OrderID)
	if o == nil || o.lvl == nil {
		return fmt.Errorf("engine: apply: amend %d on %q: unknown or closed order", e.Seq, e.Symbol)
	}
	o.reserved += e.Deltas[0].Locked
	a := o.acct
	if e.Price == o.price && e.Qty < o.remaining {
		m.book.fill(o, o.remaining-e.Qty)
	} else {
		m.book.remove(o)
		o.remaining, o.seq = e.Qty, e.Seq
		a.mu.Lock()
		o.price = e.Price
		a.mu.Unlock()
		m.book.add(o)
	}
	a.mu.Lock()
	o.qty = o.filled + e.Qty
	a.mu.Unlock()
	return nil
}
