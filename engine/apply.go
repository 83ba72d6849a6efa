package engine

import (
	"errors"
	"fmt"
)

// ErrSequenceGap is returned by Apply when a stream's events skip a sequence number.
var ErrSequenceGap = errors.New("engine: event sequence gap")

// apply applies one event's effects without matching. Events at or below the stream's
// current sequence are skipped, so replay may start anywhere before the snapshot offset.
func (c *core) apply(e *Event) error {
	var s *stream
	var m *market
	accts := &c.funds.accts
	if e.Symbol == "" {
		s = &c.funds.stream
	} else {
		m = c.market(e.Symbol)
		if m == nil {
			return fmt.Errorf("engine: apply: unknown symbol %q", e.Symbol)
		}
		s, accts = &m.stream, &m.accts
	}
	if e.Seq <= s.seq {
		return nil
	}
	if e.Seq != s.seq+1 {
		return fmt.Errorf("%w: %q at %d, next is %d", ErrSequenceGap, e.Symbol, s.seq+1, e.Seq)
	}
	s.seq = e.Seq
	for i := 0; i < int(e.NDeltas); i++ {
		d := &e.Deltas[i]
		a := accts.get(d.Account) // the stream's cache, not the shared table: a replay's hot spot
		a.mu.Lock()
		a.apply(d.Asset, d.Available, d.Locked)
		a.mu.Unlock()
	}
	switch e.Kind {
	case EventCredit, EventDebit:
		a := accts.get(e.Account)
		a.mu.Lock()
		if a.transfers == nil {
			a.transfers = make(map[TransferID]struct{})
		}
		a.transfers[e.TransferID] = struct{}{}
		a.mu.Unlock()
		return nil
	}
	if m == nil {
		return fmt.Errorf("engine: apply: %v without symbol", e.Kind)
	}
	return m.apply(e)
}

// scanMarkets is the most markets found by a scan of their symbols rather than a map:
// a scan of a few symbols (the usual case) compares no more bytes than a map lookup hashes.
const scanMarkets = 8

// market returns the market of symbol, nil if none (a scan up to scanMarkets markets).
func (c *core) market(symbol string) *market {
	if len(c.markets) > scanMarkets {
		return c.bySymbol[symbol]
	}
	if k := c.marketIndex(symbol, nil); k >= 0 {
		return c.markets[k]
	}
	return nil
}

// apply replays one order event on the market; balances were already applied.
func (m *market) apply(e *Event) error {
	p := m.pair
	switch e.Kind {
	case EventAccepted:
		a := m.accts.get(e.Account)
		o := m.pool.get()
		o.acct, o.mkt = a, m
		o.id, o.clientID, o.time, o.seq, o.meta = e.OrderID, e.ClientOrderID, e.Time, e.Seq, e.Metadata
		o.price, o.quoteQty = e.Price, e.QuoteQty
		o.side, o.typ, o.tif, o.stp, o.postOnly = e.Side, e.Type, e.TIF, e.STP, e.PostOnly
		o.qty, o.remaining, o.reserved = e.Qty, e.Qty, e.Deltas[0].Locked
		if o.typ == Market && o.side == Buy && o.qty == 0 {
			o.remaining = p.maxQty
		}
		o.state = Open
		a.mu.Lock()
		a.addOrder(o)
		a.mu.Unlock()
		if o.typ == Limit && o.tif == GTC {
			m.book.add(o)
		}
	case EventTrade:
		mk := m.orderOf(e.MakerAccount, e.MakerOrderID)
		tk := m.orderOf(e.Account, e.OrderID)
		if mk == nil || tk == nil {
			return fmt.Errorf("engine: apply: trade %d on %q: unknown order", e.Seq, e.Symbol)
		}
		q := e.Qty
		base := p.baseUnits(q)
		if e.Side == Buy {
			mk.reserved -= base
			tk.reserved += e.Deltas[0].Locked // negative: what the fill used
		} else {
			mk.reserved -= e.Amount
			tk.reserved -= base
		}
		m.book.fill(mk, q)
		fillView(mk, q)
		if mk.remaining == 0 {
			m.book.remove(mk)
			m.retire(mk)
		}
		if tk.lvl != nil {
			m.book.fill(tk, q)
		} else {
			tk.remaining -= q
		}
		fillView(tk, q)
		// A market buy is closed by its EventDone or EventCancelled, anything else when
		// nothing remains.
		if tk.remaining == 0 && !(tk.typ == Market && tk.side == Buy) {
			if tk.lvl != nil {
				m.book.remove(tk)
			}
			m.retire(tk)
		}
	case EventCancelled, EventDone:
		o := m.orderOf(e.Account, e.OrderID)
		if o == nil {
			return fmt.Errorf("engine: apply: %v %d on %q: unknown order", e.Kind, e.Seq, e.Symbol)
		}
		if o.lvl != nil {
			m.book.remove(o)
		}
		o.reserved = 0
		a := o.acct
		a.mu.Lock()
		if o.typ == Market && o.side == Buy && o.quoteQty != 0 {
			o.qty = o.filled
		}
		if e.Kind == EventDone {
			o.state, o.reason = Filled, ReasonNone
		} else {
			o.state, o.reason = Cancelled, e.Reason
		}
		a.mu.Unlock()
		m.retire(o)
	case EventAmended:
		return m.applyAmended(e)
	case EventCountdown:
		m.setCountdown(countdownKey{e.Account, e.TransferID}, e.Amount)
	default:
		return fmt.Errorf("engine: apply: unknown event kind %v", e.Kind)
	}
	return nil
}

// fillView records a fill of q on o's view fields.
func fillView(o *order, q Qty) {
	a := o.acct
	a.mu.Lock()
	o.filled += q
	if o.remaining == 0 && !(o.typ == Market && o.side == Buy) {
		o.state = Filled
	} else {
		o.state = PartiallyFilled
	}
	a.mu.Unlock()
}

// orderOf finds an order of this market by account and id, resting or not.
func (m *market) orderOf(acct AccountID, id OrderID) *order {
	a := m.accts.lookup(acct)
	if a == nil {
		return nil
	}
	a.mu.Lock()
	o := a.orders.get(&id)
	a.mu.Unlock()
	if o == nil || o.mkt != m {
		return nil
	}
	return o
}
