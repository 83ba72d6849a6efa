package engine

import "testing"

const (
	ngn  = 10_000     // 1 NGN in engine units
	usdt = 1_000_000  // 1 USDT in engine units
	px   = Price(100) // 1.00 NGN in price units
	one  = Qty(100)   // 1 base in lots
)

func funded(t *testing.T) (*tc, AccountID, AccountID) {
	x := newTC(t, 64)
	a, b := acc(1), acc(2)
	for _, id := range []AccountID{a, b} {
		x.credit(id, NGN, 10_000_000*ngn)
		x.credit(id, USDT, 10_000*usdt)
	}
	return x, a, b
}

func wantBal(t *testing.T, x *tc, a AccountID, asset Asset, avail, locked int64) {
	t.Helper()
	if got := x.bal(a, asset); got.Available != avail || got.Locked != locked {
		t.Fatalf("%v balance = %+v, want avail %d locked %d", asset, got, avail, locked)
	}
}

func TestLimitOrdersLockFunds(t *testing.T) {
	x, a, _ := funded(t)
	r := x.limit(a, 1, Buy, 1500*px, 2*one)
	if r.Code != OK || r.State != Open {
		t.Fatalf("buy: %+v", r)
	}
	wantBal(t, x, a, NGN, (10_000_000-3000)*ngn, 3000*ngn)
	r = x.limit(a, 2, Sell, 1600*px, 3*one)
	if r.Code != OK || r.State != Open {
		t.Fatalf("sell: %+v", r)
	}
	wantBal(t, x, a, USDT, 9997*usdt, 3*usdt)
	x.check()

	poor := acc(9)
	x.credit(poor, NGN, 1000*ngn)
	if r := x.limit(poor, 3, Buy, 1500*px, one); r.Code != RejectInsufficientFunds {
		t.Fatalf("poor buy: %v", r.Code)
	}
	if r := x.limit(poor, 4, Sell, 1500*px, one); r.Code != RejectInsufficientFunds {
		t.Fatalf("poor sell: %v", r.Code)
	}
	wantBal(t, x, poor, NGN, 1000*ngn, 0)
	x.check()
}

func TestTradeAtMakerPriceReleasesDifference(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Sell, 1500*px, 2*one)
	r := x.limit(b, 2, Buy, 1510*px, one)
	if r.Code != OK || r.State != Filled || r.Filled != one {
		t.Fatalf("taker: %+v", r)
	}
	// b paid 1500 for 1 USDT; the 10 NGN above the maker price came back.
	wantBal(t, x, b, NGN, (10_000_000-1500)*ngn, 0)
	wantBal(t, x, b, USDT, 10_001*usdt, 0)
	wantBal(t, x, a, NGN, (10_000_000+1500)*ngn, 0)
	wantBal(t, x, a, USDT, 9998*usdt, usdt)
	var trade *Event
	for i := range x.events {
		if x.events[i].Kind == EventTrade {
			trade = &x.events[i]
		}
	}
	if trade == nil || trade.Price != 1500*px || trade.Qty != one || trade.MakerOrderID != oid(1) || trade.OrderID != oid(2) {
		t.Fatalf("trade event %+v", trade)
	}
	if trade.NDeltas != 4 || trade.Deltas[0].Available != 10*ngn || trade.Deltas[0].Locked != -1510*ngn {
		t.Fatalf("trade deltas %+v", trade.Deltas)
	}
	v, _ := x.c.accts.get(a).orders.get(ptr(oid(1))), 0
	if v.state != PartiallyFilled || v.filled != one {
		t.Fatalf("maker state %v filled %d", v.state, v.filled)
	}
	x.check()
}

func TestPriceTimePriority(t *testing.T) {
	x, a, b := funded(t)
	c := acc(3)
	x.credit(c, USDT, 100*usdt)
	x.limit(a, 1, Sell, 1501*px, one) // worse price, first
	x.limit(b, 2, Sell, 1500*px, one) // best price, earlier
	x.limit(c, 3, Sell, 1500*px, one) // best price, later
	x.events = nil
	buyer := acc(4)
	x.credit(buyer, NGN, 100_000*ngn)
	r := x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: buyer, OrderID: oid(10), Side: Buy, Type: Limit, Price: 1501 * px, Qty: 2*one + one/2})
	if r.State != Filled {
		t.Fatalf("%+v", r)
	}
	var makers []OrderID
	for _, e := range x.events {
		if e.Kind == EventTrade {
			makers = append(makers, e.MakerOrderID)
		}
	}
	if len(makers) != 3 || makers[0] != oid(2) || makers[1] != oid(3) || makers[2] != oid(1) {
		t.Fatalf("fill order %x", makers)
	}
	x.check()
}

func TestTimeInForce(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Sell, 1500*px, one)
	x.limit(a, 2, Sell, 1502*px, one)

	r := x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(3), Side: Buy, Type: Limit, TIF: IOC, Price: 1501 * px, Qty: 3 * one})
	if r.State != Cancelled || r.Reason != ReasonIOCRemainder || r.Filled != one {
		t.Fatalf("IOC: %+v", r)
	}
	wantBal(t, x, b, NGN, (10_000_000-1500)*ngn, 0)

	before := x.c.bySymbol["USDT-NGN"].book.orders
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(4), Side: Buy, Type: Limit, TIF: FOK, Price: 1502 * px, Qty: 2 * one})
	if r.State != Cancelled || r.Reason != ReasonFOKUnfillable || r.Filled != 0 {
		t.Fatalf("FOK unfillable: %+v", r)
	}
	if x.c.bySymbol["USDT-NGN"].book.orders != before {
		t.Fatal("FOK touched the book")
	}
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(5), Side: Buy, Type: Limit, TIF: FOK, Price: 1502 * px, Qty: one})
	if r.State != Filled {
		t.Fatalf("FOK fillable: %+v", r)
	}
	x.check()
}

func TestPostOnly(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Sell, 1500*px, one)
	cmd := Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(2), Side: Buy, Type: Limit, PostOnly: true, Price: 1500 * px, Qty: one}
	n := len(x.events)
	if r := x.exec(cmd); r.Code != RejectPostOnlyWouldTake {
		t.Fatalf("%v", r.Code)
	}
	if len(x.events) != n {
		t.Fatal("rejection produced events")
	}
	cmd.Price = 1499 * px
	if r := x.exec(cmd); r.Code != OK || r.State != Open {
		t.Fatalf("%+v", r)
	}
	x.check()
}

func TestSelfTradePrevention(t *testing.T) {
	for _, tt := range []struct {
		mode       STPMode
		makerState OrderState
		takerState OrderState
		filled     Qty
	}{
		{STPCancelResting, Cancelled, Filled, one},
		{STPCancelTaker, Open, Cancelled, 0},
		{STPCancelBoth, Cancelled, Cancelled, 0},
	} {
		t.Run(tt.mode.String(), func(t *testing.T) {
			x, a, b := funded(t)
			x.limit(a, 1, Sell, 1500*px, one) // own order first in the queue
			x.limit(b, 2, Sell, 1500*px, one)
			r := x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(3), Side: Buy, Type: Limit, STP: tt.mode, Price: 1500 * px, Qty: one})
			if r.State != tt.takerState || r.Filled != tt.filled {
				t.Fatalf("taker %+v", r)
			}
			if tt.takerState == Cancelled && r.Reason != ReasonSelfTrade {
				t.Fatalf("reason %v", r.Reason)
			}
			if s := x.c.accts.get(a).orders.get(ptr(oid(1))).state; s != tt.makerState {
				t.Fatalf("own maker %v", s)
			}
			for _, e := range x.events {
				if e.Kind == EventTrade && e.MakerAccount == e.Account {
					t.Fatal("self trade")
				}
			}
			x.check()
		})
	}
}

func TestMarketOrders(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Sell, 1500*px, one)
	x.limit(a, 2, Sell, 1510*px, one)
	x.limit(a, 3, Buy, 1490*px, one)

	// market buy by quantity: reserves what the book costs, releases the rest.
	r := x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(4), Side: Buy, Type: Market, Qty: one + one/2})
	if r.State != Filled || r.Filled != one+one/2 {
		t.Fatalf("market buy %+v", r)
	}
	wantBal(t, x, b, NGN, (10_000_000-1500-755)*ngn, 0)
	// market sell into the bid; the rest has nowhere to go.
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(5), Side: Sell, Type: Market, Qty: 2 * one})
	if r.State != Cancelled || r.Reason != ReasonIOCRemainder || r.Filled != one {
		t.Fatalf("market sell %+v", r)
	}
	wantBal(t, x, b, USDT, (10_000+1.5-1)*usdt, 0)
	x.check()

	// market buy by quote amount: 1000 NGN at 1510 buys 0.66 USDT (step 0.01).
	x.limit(a, 20, Sell, 1510*px, 5*one)
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: b, OrderID: oid(6), Side: Buy, Type: Market, QuoteQty: 1000 * ngn})
	if r.State != Filled || r.Filled != 66 {
		t.Fatalf("market buy by amount %+v", r)
	}
	v, _ := x.c.accts.get(b).orders.get(ptr(oid(6))), 0
	if v.qty != 66 {
		t.Fatalf("qty of amount order = %d", v.qty)
	}
	x.check()

	// a market buy limited by funds cancels the rest for insufficient funds.
	poor := acc(7)
	x.credit(poor, NGN, 1000*ngn)
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: poor, OrderID: oid(8), Side: Buy, Type: Market, Qty: 10 * one})
	if r.State != Cancelled || r.Reason != ReasonInsufficientFunds || r.Filled != 66 {
		t.Fatalf("poor market buy %+v", r)
	}
	wantBal(t, x, poor, NGN, (1000-1510*0.66)*ngn, 0)
	x.check()

	// empty book: accepted then cancelled as IOC remainder.
	x.credit(b, USDC, 10*usdt)
	r = x.exec(Command{Kind: CmdPlace, Symbol: "USDC-NGN", Account: b, OrderID: oid(9), Side: Sell, Type: Market, Qty: one})
	if r.Code != OK || r.State != Cancelled || r.Reason != ReasonIOCRemainder {
		t.Fatalf("empty book %+v", r)
	}
	x.check()
}

func TestCancel(t *testing.T) {
	x, a, b := funded(t)
	x.limit(a, 1, Sell, 1500*px, 2*one)
	x.limit(b, 2, Buy, 1500*px, one)

	r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(1)})
	if r.Code != OK || r.State != Cancelled || r.Reason != ReasonUser || r.Filled != one {
		t.Fatalf("cancel %+v", r)
	}
	wantBal(t, x, a, USDT, 9999*usdt, 0)
	if r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(1)}); r.Code != RejectNotCancellable || r.State != Cancelled {
		t.Fatalf("cancel twice %+v", r)
	}
	if r := x.exec(Command{Kind: CmdCancel, Account: b, OrderID: oid(2)}); r.Code != RejectNotCancellable || r.State != Filled {
		t.Fatalf("cancel filled %+v", r)
	}
	x.limit(a, 3, Sell, 1500*px, one)
	if r := x.exec(Command{Kind: CmdCancel, Account: b, OrderID: oid(3)}); r.Code != RejectUnknownOrder {
		t.Fatalf("cancel other's order %+v", r)
	}
	if r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(99)}); r.Code != RejectUnknownOrder {
		t.Fatalf("cancel unknown %+v", r)
	}
	x.check()
}

func TestCancelAll(t *testing.T) {
	x, a, b := funded(t)
	for i := uint64(1); i <= 5; i++ {
		x.limit(a, i, Sell, Price(1500+i)*px, one)
	}
	x.limit(b, 6, Sell, 1500*px, one)
	x.exec(Command{Kind: CmdPlace, Symbol: "USDC-NGN", Account: a, OrderID: oid(7), Side: Buy, Type: Limit, Price: 1400 * px, Qty: one})
	if r := x.exec(Command{Kind: CmdCancelAll, Symbol: "USDT-NGN", Account: a}); r.Code != OK {
		t.Fatal(r.Code)
	}
	wantBal(t, x, a, USDT, 10_000*usdt, 0)
	if n := x.c.bySymbol["USDT-NGN"].book.orders; n != 1 {
		t.Fatalf("%d orders left", n)
	}
	if n := x.c.bySymbol["USDC-NGN"].book.orders; n != 1 {
		t.Fatal("cancel-all crossed symbols")
	}
	x.check()
}

func TestCreditDebitIdempotent(t *testing.T) {
	x := newTC(t, 8)
	a := acc(1)
	cr := Command{Kind: CmdCredit, Account: a, Asset: USDT, Amount: 5 * usdt, TransferID: tid(1)}
	if r := x.exec(cr); r.Code != OK || r.Seq != 1 {
		t.Fatalf("%+v", r)
	}
	if r := x.exec(cr); r.Code != AlreadyApplied {
		t.Fatalf("repeat: %v", r.Code)
	}
	wantBal(t, x, a, USDT, 5*usdt, 0)
	db := Command{Kind: CmdDebit, Account: a, Asset: USDT, Amount: 6 * usdt, TransferID: tid(2)}
	if r := x.exec(db); r.Code != RejectInsufficientFunds {
		t.Fatalf("overdraw: %v", r.Code)
	}
	db.Amount = 2 * usdt
	if r := x.exec(db); r.Code != OK {
		t.Fatal(r.Code)
	}
	if r := x.exec(db); r.Code != AlreadyApplied {
		t.Fatal(r.Code)
	}
	wantBal(t, x, a, USDT, 3*usdt, 0)
	for _, c := range []Command{
		{Kind: CmdCredit, Account: a, Asset: AssetNone, Amount: 1, TransferID: tid(3)},
		{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 0, TransferID: tid(3)},
		{Kind: CmdCredit, Account: a, Asset: NGN, Amount: 1<<62 + 1, TransferID: tid(3)},
	} {
		if r := x.exec(c); r.Code == OK {
			t.Fatalf("accepted %+v", c)
		}
	}
	x.check()
}

func TestValidation(t *testing.T) {
	x, a, _ := funded(t)
	base := Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, Side: Buy, Type: Limit, Price: 1500 * px, Qty: one}
	cases := []struct {
		name string
		mod  func(*Command)
		want ResultCode
	}{
		{"unknown symbol", func(c *Command) { c.Symbol = "BTC-NGN" }, RejectUnknownSymbol},
		{"bad side", func(c *Command) { c.Side = 0 }, RejectInvalidCommand},
		{"bad type", func(c *Command) { c.Type = 9 }, RejectInvalidCommand},
		{"bad tif", func(c *Command) { c.TIF = 7 }, RejectInvalidCommand},
		{"zero price", func(c *Command) { c.Price = 0 }, RejectInvalidPrice},
		{"price too high", func(c *Command) { c.Price = 1 << 40 }, RejectInvalidPrice},
		{"zero qty", func(c *Command) { c.Qty = 0 }, RejectInvalidQuantity},
		{"below min qty", func(c *Command) { c.Qty = 99 }, RejectBelowMinQty},
		{"below min notional", func(c *Command) { c.Price = 999 * px }, RejectBelowMinNotional},
		{"market post-only", func(c *Command) { c.Type = Market; c.PostOnly = true }, RejectInvalidCommand},
		{"market by amount FOK", func(c *Command) { c.Type = Market; c.Qty = 0; c.QuoteQty = 2000 * ngn; c.TIF = FOK }, RejectInvalidCommand},
		{"market by amount too small", func(c *Command) { c.Type = Market; c.Qty = 0; c.QuoteQty = 999 * ngn }, RejectBelowMinNotional},
	}
	for i, tt := range cases {
		c := base
		c.OrderID = oid(uint64(100 + i))
		tt.mod(&c)
		if r := x.exec(c); r.Code != tt.want {
			t.Errorf("%s: got %v want %v", tt.name, r.Code, tt.want)
		}
	}
	c := base
	c.OrderID = oid(1)
	c.ClientOrderID = "my-1"
	if r := x.exec(c); r.Code != OK {
		t.Fatal(r.Code)
	}
	if r := x.exec(c); r.Code != RejectDuplicateOrderID {
		t.Fatalf("duplicate: %v", r.Code)
	}
	if o := x.c.accts.get(a).orders.get(ptr(oid(1))); o.view().ClientOrderID != "my-1" {
		t.Fatal("client order id lost")
	}
	x.check()
}

func TestClosedOrdersAreForgottenOldestFirst(t *testing.T) {
	x, a, _ := funded(t)
	x.c.bySymbol["USDT-NGN"].closed = make([]*order, 2)
	for i := uint64(1); i <= 3; i++ {
		x.limit(a, i, Sell, 1500*px, one)
		x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(i)})
	}
	orders := &x.c.accts.get(a).orders
	if orders.get(ptr(oid(1))) != nil || orders.get(ptr(oid(2))) == nil || orders.get(ptr(oid(3))) == nil {
		t.Fatal("eviction order")
	}
	if r := x.exec(Command{Kind: CmdCancel, Account: a, OrderID: oid(1)}); r.Code != RejectUnknownOrder {
		t.Fatal(r.Code)
	}
}

func TestPairParsing(t *testing.T) {
	p := DefaultPairs()[0]
	if v, err := p.ParsePrice("1520.50"); err != nil || v != 152050 {
		t.Fatal(v, err)
	}
	if _, err := p.ParseQty("0.5"); err == nil {
		t.Fatal("below min qty accepted")
	}
	q := p
	q.TickSize = 5
	if _, err := q.ParsePrice("1520.51"); err == nil {
		t.Fatal("off tick accepted")
	}
	if v, err := ParseAmount(NGN, "10.50"); err != nil || v != 105_000 {
		t.Fatal(v, err)
	}
	if _, err := ParseAmount(NGN, "10.505"); err == nil {
		t.Fatal("3 dp NGN accepted")
	}
	if s := FormatAmount(NGN, 150_001); s != "15.0001" {
		t.Fatal(s)
	}
	if s := FormatAmount(NGN, 15_000_000); s != "1500.00" {
		t.Fatal(s)
	}
	pp, _ := newPair(p)
	if _, ok := pp.Notional(1<<40, 1<<40); ok {
		t.Fatal("overflow not detected")
	}
	if n, ok := pp.Notional(150000, 100); !ok || n != 1500*ngn {
		t.Fatal(n)
	}
}
