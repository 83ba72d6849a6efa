package engine

import (
	"fmt"
	"slices"
	"testing"
)

// refBook is a naive reference book: sorted slices, linear scans, no indexes. It
// implements the matching rules (price-time priority, maker price, IOC/FOK, post-only,
// self-trade prevention, market buys with a budget) for accounts that never lack funds.
type refBook struct {
	bids, asks []*refOrder // best first; FIFO within a price
	p          *pair
}

type refOrder struct {
	id    OrderID
	acct  AccountID
	side  Side
	price Price
	rem   Qty
	// for amends: the total quantity, what is filled, and the order's own flags
	qty, filled Qty
	stp         STPMode
	postOnly    bool
}

type refTrade struct {
	maker, taker OrderID
	price        Price
	qty          Qty
}

func (b *refBook) side(s Side) *[]*refOrder {
	if s == Buy {
		return &b.bids
	}
	return &b.asks
}

func (b *refBook) insert(o *refOrder) {
	q := b.side(o.side)
	i := 0
	for i < len(*q) && !better(o.side, o.price, (*q)[i].price) {
		i++
	}
	*q = slices.Insert(*q, i, o)
}

func better(s Side, a, b Price) bool {
	if s == Buy {
		return a > b
	}
	return a < b
}

func (b *refBook) remove(id OrderID) *refOrder {
	for _, q := range []*[]*refOrder{&b.bids, &b.asks} {
		for i, o := range *q {
			if o.id == id {
				*q = slices.Delete(*q, i, i+1)
				return o
			}
		}
	}
	return nil
}

// place returns the outcome of a valid, funded place command.
func (b *refBook) place(c *Command) (code ResultCode, state OrderState, filled Qty, trades []refTrade) {
	p := b.p
	opp := b.side(opposite(c.Side))
	limit := c.Type == Limit
	cross := func(lp Price) bool { return !limit || crosses(c.Side, c.Price, lp) }
	if c.PostOnly && len(*opp) > 0 && cross((*opp)[0].price) {
		return RejectPostOnlyWouldTake, 0, 0, nil
	}
	tif := c.TIF
	if !limit && tif == GTC {
		tif = IOC
	}
	byAmount := c.Type == Market && c.Side == Buy && c.Qty == 0
	rem := c.Qty
	if byAmount {
		rem = p.maxQty
	}
	var budget int64 = -1
	if c.Type == Market && c.Side == Buy {
		if byAmount {
			budget = c.QuoteQty
		} else {
			need := rem
			budget = 0
			for _, o := range *opp {
				q := min(need, o.rem)
				budget += p.notional(o.price, q)
				need -= q
				if need == 0 {
					break
				}
			}
		}
	}
	if tif == FOK {
		need, bud := rem, budget
		ok := false
	walk:
		for _, o := range *opp {
			if !cross(o.price) {
				break
			}
			if o.acct == c.Account {
				if c.STP == STPCancelResting {
					continue
				}
				break walk
			}
			q := min(need, o.rem)
			if bud >= 0 {
				cost := p.notional(o.price, q)
				if cost > bud {
					break
				}
				bud -= cost
			}
			need -= q
			if need == 0 {
				ok = true
				break
			}
		}
		if !ok {
			return OK, Cancelled, 0, nil
		}
	}
	stpStop, budgetDone := false, false
	for rem > 0 && len(*opp) > 0 && cross((*opp)[0].price) {
		mk := (*opp)[0]
		if mk.acct == c.Account {
			if c.STP != STPCancelTaker {
				*opp = (*opp)[1:]
			}
			if c.STP == STPCancelResting {
				continue
			}
			stpStop = true
			break
		}
		q := min(rem, mk.rem)
		if budget >= 0 {
			afford := Qty(budget / p.notional(mk.price, 1))
			afford -= afford % p.StepSize
			q = min(q, afford)
			if q == 0 {
				budgetDone = true
				break
			}
			budget -= p.notional(mk.price, q)
		}
		trades = append(trades, refTrade{mk.id, c.OrderID, mk.price, q})
		rem -= q
		filled += q
		mk.rem -= q
		mk.filled += q
		if mk.rem == 0 {
			*opp = (*opp)[1:]
		}
	}
	switch {
	case stpStop:
		state = Cancelled
	case byAmount && budgetDone && filled > 0:
		state = Filled
	case !byAmount && rem == 0:
		state = Filled
	case limit && tif == GTC:
		state = Open
		if filled > 0 {
			state = PartiallyFilled
		}
		b.insert(&refOrder{id: c.OrderID, acct: c.Account, side: c.Side, price: c.Price, rem: rem,
			qty: c.Qty, filled: filled, stp: c.STP, postOnly: c.PostOnly})
	default:
		state = Cancelled
	}
	return OK, state, filled, trades
}

// find returns acct's resting order id, or nil.
func (b *refBook) find(acct AccountID, id OrderID) *refOrder {
	for _, q := range []*[]*refOrder{&b.bids, &b.asks} {
		for _, o := range *q {
			if o.id == id && o.acct == acct {
				return o
			}
		}
	}
	return nil
}

// amend is the reference of CmdAmend on a resting order (found false if acct holds no
// such resting order), for accounts that never lack funds: the priority rules spelled
// out with slices, and a requeued order matched as a new GTC limit order at the back.
func (b *refBook) amend(c *Command) (found bool, code ResultCode, state OrderState, filled Qty, trades []refTrade) {
	p := b.p
	o := b.find(c.Account, c.OrderID)
	if o == nil {
		return false, 0, 0, 0, nil
	}
	stateOf := func(o *refOrder) OrderState {
		if o.filled > 0 {
			return PartiallyFilled
		}
		return Open
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
		return true, RejectInvalidPrice, stateOf(o), o.filled, nil
	case c.Qty < 0 || qty > p.maxQty || qty%p.StepSize != 0:
		return true, RejectInvalidQuantity, stateOf(o), o.filled, nil
	case qty <= o.filled:
		b.remove(o.id)
		return true, OK, Cancelled, o.filled, nil
	case qty < p.MinQty:
		return true, RejectBelowMinQty, stateOf(o), o.filled, nil
	case p.notional(price, qty) < p.MinNotional:
		return true, RejectBelowMinNotional, stateOf(o), o.filled, nil
	case price == o.price && qty == o.qty:
		return true, OK, stateOf(o), o.filled, nil
	}
	opp := *b.side(opposite(o.side))
	if price != o.price && o.postOnly && len(opp) > 0 && crosses(o.side, price, opp[0].price) {
		return true, RejectPostOnlyWouldTake, stateOf(o), o.filled, nil
	}
	open := qty - o.filled
	if price == o.price && open < o.rem { // keeps its place
		o.rem, o.qty = open, qty
		return true, OK, stateOf(o), o.filled, nil
	}
	b.remove(o.id)
	code, state, f, trades := b.place(&Command{Kind: CmdPlace, Account: o.acct, OrderID: o.id, Side: o.side, Type: Limit,
		Price: price, Qty: open, STP: o.stp})
	if n := b.find(o.acct, o.id); n != nil {
		n.qty, n.filled, n.postOnly = qty, o.filled+f, o.postOnly
	}
	if state == Open && o.filled+f > 0 {
		state = PartiallyFilled
	}
	return true, code, state, o.filled + f, trades
}

func (b *refBook) levels(s Side) []string {
	var out []string
	for _, o := range *b.side(s) {
		out = append(out, fmt.Sprintf("%d:%x:%d", o.price, o.id[8:], o.rem))
	}
	return out
}

func bookOrders(m *market, s Side) []string {
	var out []string
	for l := range m.book.levelsFrom(s) {
		for o := l.head; o != nil; o = o.next {
			out = append(out, fmt.Sprintf("%d:%x:%d", o.price, o.id[8:], o.remaining))
		}
	}
	return out
}

// TestDifferentialAgainstReferenceBook feeds the same fixed-seed commands to the engine
// and to the naive book and compares results, trades and the whole book after each one.
func TestDifferentialAgainstReferenceBook(t *testing.T) {
	seeds, steps := 12, 3000
	if testing.Short() || raceEnabled {
		seeds, steps = 4, 1000
	}
	base := testSeed(t, 100)
	for s := 0; s < seeds; s++ {
		seed := base + uint64(s)
		x := newTC(t, 1<<14)
		g := newGen(seed, 4)
		g.rich, g.single = true, true
		for _, c := range g.funding() {
			x.exec(c)
		}
		m := x.c.bySymbol["USDT-NGN"]
		ref := &refBook{p: m.pair}
		for i := 0; i < steps; i++ {
			c := g.cmd()
			x.events = x.events[:0]
			r := x.exec(c)
			switch c.Kind {
			case CmdPlace:
				code, state, filled, trades := ref.place(&c)
				var got []refTrade
				for _, e := range x.events {
					if e.Kind == EventTrade {
						got = append(got, refTrade{e.MakerOrderID, e.OrderID, e.Price, e.Qty})
					}
				}
				if code != r.Code || (code == OK && (state != r.State || filled != r.Filled)) || !slices.Equal(got, trades) {
					t.Fatalf("seed %d step %d %+v:\nengine %v %v %d %v\nref    %v %v %d %v", seed, i, c, r.Code, r.State, r.Filled, got, code, state, filled, trades)
				}
			case CmdAmend:
				found, code, state, filled, trades := ref.amend(&c)
				if !found {
					if r.Code == OK {
						t.Fatalf("seed %d step %d: engine amended %+v that ref does not hold", seed, i, c)
					}
					break
				}
				var got []refTrade
				for _, e := range x.events {
					if e.Kind == EventTrade {
						got = append(got, refTrade{e.MakerOrderID, e.OrderID, e.Price, e.Qty})
					}
				}
				if code != r.Code || state != r.State || filled != r.Filled || !slices.Equal(got, trades) {
					t.Fatalf("seed %d step %d amend %+v:\nengine %v %v %d %v\nref    %v %v %d %v", seed, i, c, r.Code, r.State, r.Filled, got, code, state, filled, trades)
				}
			case CmdCancel:
				if r.Code == OK {
					if ref.remove(c.OrderID) == nil {
						t.Fatalf("seed %d step %d: engine cancelled what ref does not hold", seed, i)
					}
				}
			case CmdCancelAll:
				if r.Code != OK {
					break
				}
				for _, q := range []*[]*refOrder{&ref.bids, &ref.asks} {
					*q = slices.DeleteFunc(*q, func(o *refOrder) bool { return o.acct == c.Account })
				}
			}
			for _, sd := range []Side{Buy, Sell} {
				if a, b := bookOrders(m, sd), ref.levels(sd); !slices.Equal(a, b) {
					t.Fatalf("seed %d step %d %+v -> %+v: %v book differs\nengine %v\nref    %v", seed, i, c, r, sd, a, b)
				}
			}
		}
		x.check()
	}
}
