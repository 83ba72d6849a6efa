package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func (x *tc) amend(a AccountID, id uint64, price Price, qty Qty) Result {
	return x.exec(Command{Kind: CmdAmend, Account: a, OrderID: oid(id), Price: price, Qty: qty})
}

// queue lists the order ids (their counter) resting at price on side s, front first.
func queue(x *tc, s Side, price Price) []uint64 {
	var out []uint64
	for l := range x.c.bySymbol["USDT-NGN"].book.levelsFrom(s) {
		if l.price != price {
			continue
		}
		for o := l.head; o != nil; o = o.next {
			out = append(out, uint64(o.id[15])|uint64(o.id[14])<<8)
		}
	}
	return out
}

func TestAmendPriorityRules(t *testing.T) {
	for _, tt := range []struct {
		name      string
		price     Price
		qty       Qty
		wantQueue []uint64
		wantLock  int64 // NGN locked by order 1 afterwards
	}{
		{"reduce keeps its place", 0, 2 * one, []uint64{1, 2, 3}, 2 * 1500 * ngn},
		{"raise goes to the back", 0, 6 * one, []uint64{2, 3, 1}, 6 * 1500 * ngn},
		{"same price and qty changes nothing", 1500 * px, 5 * one, []uint64{1, 2, 3}, 5 * 1500 * ngn},
		{"new price goes to the back there", 1499 * px, 0, nil, 5 * 1499 * ngn},
		{"new price and smaller qty still lose priority", 1499 * px, 4 * one, nil, 4 * 1499 * ngn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x, a, b := funded(t)
			x.limit(a, 1, Buy, 1500*px, 5*one)
			x.limit(b, 2, Buy, 1500*px, one)
			x.limit(b, 3, Buy, 1500*px, one)
			x.limit(b, 4, Buy, 1499*px, one)
			before := len(x.events)
			r := x.amend(a, 1, tt.price, tt.qty)
			if r.Code != OK || r.State != Open {
				t.Fatalf("amend: %+v", r)
			}
			if tt.wantQueue != nil {
				if got := queue(x, Buy, 1500*px); !slices.Equal(got, tt.wantQueue) {
					t.Fatalf("queue at 1500 = %v, want %v", got, tt.wantQueue)
				}
			} else if got := queue(x, Buy, 1499*px); !slices.Equal(got, []uint64{4, 1}) {
				t.Fatalf("queue at 1499 = %v, want [4 1]", got)
			}
			wantBal(t, x, a, NGN, 10_000_000*ngn-tt.wantLock, tt.wantLock)
			if tt.price == 1500*px && tt.qty == 5*one && len(x.events) != before {
				t.Fatalf("a no-op amend journaled %d events", len(x.events)-before)
			}
			x.check()
			sameState(t, "replay", x.c, replay(t, x.events, 64, rand.New(rand.NewPCG(1, 2))))
		})
	}
}

func TestAmendAtOrBelowFilledCancelsTheRest(t *testing.T) {
	for _, qty := range []Qty{2 * one, one + 50} {
		x, a, b := funded(t)
		x.limit(a, 1, Sell, 1500*px, 5*one)
		x.limit(b, 2, Buy, 1500*px, 2*one) // fills 2 of order 1
		r := x.amend(a, 1, 0, qty)
		if r.Code != OK || r.State != Cancelled || r.Reason != ReasonUser || r.Filled != 2*one {
			t.Fatalf("amend to %d: %+v", qty, r)
		}
		wantBal(t, x, a, USDT, (10_000-2)*usdt, 0)
		if r := x.amend(a, 1, 0, 4*one); r.Code != RejectNotCancellable {
			t.Fatalf("amend of a closed order: %v", r.Code)
		}
		x.check()
	}
}

func TestAmendCrossingPriceTradesAsTaker(t *testing.T) {
	x, a, b := funded(t)
	x.limit(b, 1, Sell, 1510*px, one)
	x.limit(b, 2, Sell, 1520*px, 3*one)
	x.limit(a, 3, Buy, 1500*px, 2*one)
	from := len(x.events)
	r := x.amend(a, 3, 1515*px, 0) // takes order 1 at 1510, rests 1 at 1515
	if r.Code != OK || r.State != PartiallyFilled || r.Filled != one {
		t.Fatalf("amend: %+v", r)
	}
	var kinds []EventKind
	for _, e := range x.events[from:] {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, []EventKind{EventAmended, EventTrade}) {
		t.Fatalf("events %v", kinds)
	}
	if tr := x.events[from+1]; tr.OrderID != oid(3) || tr.MakerOrderID != oid(1) || tr.Price != 1510*px {
		t.Fatalf("trade %+v", tr)
	}
	// a bought 1 at 1510 and still locks 1 at 1515
	wantBal(t, x, a, NGN, (10_000_000-1510-1515)*ngn, 1515*ngn)
	wantBal(t, x, a, USDT, 10_001*usdt, 0)
	x.check()

	// a post-only order whose new price would take is refused and left alone
	x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(4), Side: Buy, Type: Limit, Price: 1500 * px, Qty: one, PostOnly: true})
	if r := x.amend(a, 4, 1520*px, 0); r.Code != RejectPostOnlyWouldTake || r.State != Open {
		t.Fatalf("post-only amend: %+v", r)
	}
	// self-trade prevention (cancel taker) cancels the amended order instead of trading
	x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(5), Side: Buy, Type: Limit, Price: 1400 * px, Qty: one, STP: STPCancelTaker})
	if r := x.amend(b, 5, 1520*px, 0); r.Code != OK || r.State != Cancelled || r.Reason != ReasonSelfTrade {
		t.Fatalf("stp amend: %+v", r)
	}
	x.check()
	sameState(t, "replay", x.c, replay(t, x.events, 64, rand.New(rand.NewPCG(3, 4))))
}

func TestAmendRejectionsChangeNothing(t *testing.T) {
	x, a, _ := funded(t)
	x.limit(a, 1, Buy, 1500*px, 2*one)
	snap := x.c.snapshot(nil, 0)
	n := len(x.events)
	for _, tt := range []struct {
		price Price
		qty   Qty
		code  ResultCode
	}{
		{-1, 0, RejectInvalidPrice},
		{0, -5, RejectInvalidQuantity},
		{0, 99, RejectBelowMinQty},
		{50 * px, 0, RejectBelowMinNotional},
		{0, 100_000 * one, RejectInsufficientFunds}, // 150M NGN > 10M available
	} {
		if r := x.amend(a, 1, tt.price, tt.qty); r.Code != tt.code || r.State != Open {
			t.Fatalf("amend %d/%d: %+v, want %v", tt.price, tt.qty, r, tt.code)
		}
	}
	if r := x.amend(acc(2), 1, 0, one); r.Code != RejectUnknownOrder {
		t.Fatalf("someone else's order: %v", r.Code)
	}
	if len(x.events) != n || !bytes.Equal(snap, x.c.snapshot(nil, 0)) {
		t.Fatal("a rejected amend changed the state")
	}
}

func TestCountdownFiresOnTickAndSurvivesRestart(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Buy, 1500*px, one)
	x.limit(a, 2, Sell, 1600*px, one)
	x.limit(b, 3, Buy, 1400*px, one)
	t0 := x.now
	r := x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 1000}, t0+1)
	x.flush()
	if r.Code != OK {
		t.Fatalf("countdown: %+v", r)
	}
	// a snapshot and a replay both keep the armed countdown
	snap := x.c.snapshot(nil, 0)
	c2, _ := newCore(DefaultPairs(), 64)
	if _, err := c2.restore(snap); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*core{c2, replay(t, x.events, 64, rand.New(rand.NewPCG(5, 6)))} {
		if got := c.countdownsOf(a, TransferID{}); got["USDT-NGN"] != t0+1001 {
			t.Fatalf("restored countdowns %v", got)
		}
	}
	// a tick before the deadline does nothing; renewing moves it
	if r := x.c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+1000); r.Cancelled != 0 {
		t.Fatalf("early tick cancelled %d", r.Cancelled)
	}
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 1000}, t0+1000)
	if r := x.c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+1500); r.Cancelled != 0 {
		t.Fatalf("tick before the renewed deadline cancelled %d", r.Cancelled)
	}
	x.flush()
	// the restored core fires it as the live one does
	for _, c := range []*core{x.c, c2} {
		r := c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+5000)
		if r.Cancelled != 2 {
			t.Fatalf("tick cancelled %d, want a's 2 orders", r.Cancelled)
		}
		if len(c.countdownsOf(a, TransferID{})) != 0 {
			t.Fatal("a fired countdown stays armed")
		}
		if v, _ := orderOfCore(c, a, oid(1)); v.State != Cancelled || v.Reason != ReasonCountdown {
			t.Fatalf("order 1 %+v", v)
		}
		if v, _ := orderOfCore(c, b, oid(3)); v.State != Open {
			t.Fatalf("b's order %+v", v)
		}
	}
	x.flush()
	x.check()
	// clearing with 0
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: b, Amount: 10}, t0+6000)
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: b, Amount: 0}, t0+6001)
	if r := x.c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+9000); r.Cancelled != 0 {
		t.Fatalf("a cleared countdown cancelled %d", r.Cancelled)
	}
	x.flush()
	sameState(t, "replay", x.c, replay(t, x.events, 64, rand.New(rand.NewPCG(7, 8))))
}

// execAt runs cmd at time now (tests).
func (c *core) execAt(cmd Command, now int64) Result {
	cmd.Time = now
	var r Result
	c.exec(&cmd, &r)
	return r
}

func orderOfCore(c *core, acct AccountID, id OrderID) (OrderView, bool) {
	a := c.accts.get(acct)
	if a == nil {
		return OrderView{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o := a.orders.get(&id); o != nil {
		return o.view(), true
	}
	return OrderView{}, false
}

// TestAmendAndCountdownRecovery runs amends (by order id and by client order id) and a
// countdown through a running engine, then rebuilds a second engine from the journal
// alone and from a snapshot plus the journal's tail: same orders, balances, queues.
func TestAmendAndCountdownRecovery(t *testing.T) {
	j, e, submit := startFundedPair(t)
	a, b := acc(1), acc(2)
	place := func(acct AccountID, id uint64, side Side, price Price, qty Qty, cid string) {
		if r := submit(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: acct, OrderID: oid(id), ClientOrderID: cid,
			Side: side, Type: Limit, Price: price, Qty: qty}); r.Code != OK {
			t.Fatalf("place %d: %+v", id, r)
		}
	}
	place(a, 1, Buy, 1500*px, 3*one, "bot-1")
	place(b, 2, Buy, 1500*px, one, "")
	place(a, 3, Sell, 1520*px, one, "")
	if r := submit(Command{Kind: CmdAmend, Account: a, ClientOrderID: "bot-1", Qty: 2 * one}); r.Code != OK || r.OrderID != oid(1) {
		t.Fatalf("amend by client id: %+v", r)
	}
	if r := submit(Command{Kind: CmdAmend, Account: b, OrderID: oid(2), Price: 1520 * px}); r.Code != OK || r.State != Filled {
		t.Fatalf("crossing amend: %+v", r)
	}
	snap, off, err := e.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	submit(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 5})
	if r := submit(Command{Kind: CmdAmend, Account: a, OrderID: oid(1), Qty: 4 * one}); r.Code != OK {
		t.Fatalf("raise: %+v", r)
	}
	want, _ := e.Order(a, oid(1))
	e.Stop()
	live := e.core.snapshot(nil, 0)

	full, _ := New(Config{Journal: &MemJournal{}})
	if err := full.Apply(j.Events()); err != nil {
		t.Fatal(err)
	}
	tail, _ := New(Config{Journal: &MemJournal{}})
	if _, err := tail.Restore(snap); err != nil {
		t.Fatal(err)
	}
	evs := j.Events()
	if err := tail.Apply(evs[min(int(off), len(evs)):]); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Engine{"journal": full, "snapshot+tail": tail} {
		if got := r.core.snapshot(nil, 0); !bytes.Equal(got, live) {
			t.Fatalf("%s: recovered state differs from the live one", name)
		}
		if v, _ := r.Order(a, oid(1)); v != want || v.Qty != 4*one {
			t.Fatalf("%s: order %+v, want %+v", name, v, want)
		}
		if cd := r.core.countdownsOf(a, TransferID{}); cd["USDT-NGN"] == 0 {
			t.Fatalf("%s: countdown lost", name)
		}
	}
}

// Countdowns of one account with different owners are independent: clearing one leaves
// the other armed, and whichever runs out cancels all the account's orders on the symbol.
func TestCountdownOwners(t *testing.T) {
	x, a, _ := funded(t)
	x.limit(a, 1, Buy, 1500*px, one)
	session := TransferID{9}
	t0 := x.now
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 1000}, t0)
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 5000, TransferID: session}, t0)
	x.c.execAt(Command{Kind: CmdCountdown, Symbol: "USDT-NGN", Account: a, Amount: 0}, t0+1)
	if r := x.c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+2000); r.Cancelled != 0 {
		t.Fatalf("the cleared countdown fired: %d", r.Cancelled)
	}
	if r := x.c.execAt(Command{Kind: CmdTick, Symbol: "USDT-NGN"}, t0+6000); r.Cancelled != 1 {
		t.Fatalf("the session's lease cancelled %d, want 1", r.Cancelled)
	}
	x.flush()
	if len(x.c.countdownsOf(a, session)) != 0 || len(x.c.countdownsOf(a, TransferID{})) != 0 {
		t.Fatal("countdowns left armed")
	}
	x.check()
	sameState(t, "replay", x.c, replay(t, x.events, 64, rand.New(rand.NewPCG(9, 10))))
}

// startFundedPair starts an engine on a memory journal with accounts 1 and 2 funded with
// 10,000,000 NGN and 10,000 USDT each, for the recovery tests; submit stamps each command
// with a time that grows with the journal and fails the test on an engine error.
func startFundedPair(t *testing.T) (*MemJournal, *Engine, func(Command) Result) {
	t.Helper()
	j := &MemJournal{}
	e, err := New(Config{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	submit := func(c Command) Result {
		t.Helper()
		c.Time = 1_700_000_000_000_000_000 + int64(j.Len())
		r, err := e.Submit(&c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i, id := range []AccountID{acc(1), acc(2)} {
		submit(Command{Kind: CmdCredit, Account: id, Asset: NGN, Amount: 10_000_000 * ngn, TransferID: tid(uint64(10 + i))})
		submit(Command{Kind: CmdCredit, Account: id, Asset: USDT, Amount: 10_000 * usdt, TransferID: tid(uint64(20 + i))})
	}
	return j, e, submit
}
