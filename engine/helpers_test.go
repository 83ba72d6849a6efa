package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// testSeed is taken from ENGINE_SEED when set, so a failing random run can be replayed.
func testSeed(t testing.TB, def uint64) uint64 {
	if s := os.Getenv("ENGINE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			t.Logf("ENGINE_SEED=%d", v)
			return v
		}
	}
	return def
}

func acc(n int) AccountID {
	var a AccountID
	a[0] = 0xAC
	binary.BigEndian.PutUint32(a[12:], uint32(n))
	return a
}

func oid(n uint64) OrderID {
	var o OrderID
	binary.BigEndian.PutUint64(o[8:], n)
	return o
}

func ptr[T any](v T) *T { return &v }

func tid(n uint64) TransferID {
	var o TransferID
	o[0] = 0x7F
	binary.BigEndian.PutUint64(o[8:], n)
	return o
}

// tc drives a core synchronously, as a runner would, and keeps the journal.
type tc struct {
	t      testing.TB
	c      *core
	events []Event
	net    [numAssets]int64 // credits minus debits per asset
	now    int64
}

func newTC(t testing.TB, closed int) *tc {
	c, err := newCore(DefaultPairs(), closed)
	if err != nil {
		t.Fatal(err)
	}
	return &tc{t: t, c: c, now: 1_700_000_000_000_000_000}
}

func (x *tc) exec(cmd Command) Result {
	x.now++
	cmd.Time = x.now
	var r Result
	x.c.exec(&cmd, &r)
	x.flush()
	if r.Code == OK {
		switch cmd.Kind {
		case CmdCredit:
			x.net[cmd.Asset] += cmd.Amount
		case CmdDebit:
			x.net[cmd.Asset] -= cmd.Amount
		}
	}
	return r
}

func (x *tc) flush() {
	for _, m := range x.c.markets {
		x.events = append(x.events, m.ev...)
		m.ev = m.ev[:0]
	}
	x.events = append(x.events, x.c.funds.ev...)
	x.c.funds.ev = x.c.funds.ev[:0]
}

func (x *tc) credit(a AccountID, asset Asset, amount int64) {
	x.t.Helper()
	x.now++
	r := x.exec(Command{Kind: CmdCredit, Account: a, Asset: asset, Amount: amount, TransferID: tid(uint64(x.now))})
	if r.Code != OK {
		x.t.Fatalf("credit: %v", r.Code)
	}
}

func (x *tc) limit(a AccountID, id uint64, side Side, price Price, qty Qty) Result {
	return x.exec(Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(id), Side: side, Type: Limit, Price: price, Qty: qty})
}

func (x *tc) bal(a AccountID, asset Asset) Balance {
	acct := x.c.accts.get(a)
	if acct == nil {
		return Balance{}
	}
	return acct.bal[asset]
}

// check verifies every invariant of the engine's state.
func (x *tc) check() {
	x.t.Helper()
	if err := checkCore(x.c, &x.net); err != nil {
		x.t.Fatal(err)
	}
}

// checkCore: available >= 0; locked == sum of open orders' reservations; per-asset totals
// equal net credits; books uncrossed, FIFO by time, levels and index consistent.
func checkCore(c *core, net *[numAssets]int64) error {
	locked := map[AccountID]*[numAssets]int64{}
	for _, m := range c.markets {
		p := m.pair
		b := m.book
		seen := 0
		for _, s := range [2]Side{Buy, Sell} {
			i := sideIdx(s)
			var first *level
			nl := 0
			for l := range b.levelsFrom(s) {
				if first == nil {
					first = l
				}
				nl++
			}
			if b.sides[i].best != first || nl != b.levels(s) {
				return fmt.Errorf("%s: best cache or level count of %v wrong", m.symbol, s)
			}
			var prev *level
			for l := range b.levelsFrom(s) {
				if prev != nil && !(key(s, prev.price) < key(s, l.price)) {
					return fmt.Errorf("%s: levels out of order", m.symbol)
				}
				prev = l
				var tot Qty
				cnt := 0
				var lastSeq uint64
				for o := l.head; o != nil; o = o.next {
					if o.lvl != l || o.price != l.price || o.side != s {
						return fmt.Errorf("%s: order %x in wrong level", m.symbol, o.id)
					}
					if o.seq <= lastSeq {
						return fmt.Errorf("%s: FIFO broken at %v %d", m.symbol, s, l.price)
					}
					lastSeq = o.seq
					if o.remaining <= 0 || o.state.Closed() || o.acct.orders.get(&o.id) != o {
						return fmt.Errorf("%s: bad resting order %x rem %d state %v", m.symbol, o.id, o.remaining, o.state)
					}
					if o.remaining+o.filled != o.qty {
						return fmt.Errorf("%s: order %x qty %d != filled %d + remaining %d", m.symbol, o.id, o.qty, o.filled, o.remaining)
					}
					want := p.baseUnits(o.remaining)
					asset := p.Base
					if s == Buy {
						want, asset = p.notional(o.price, o.remaining), p.Quote
					}
					if o.reserved != want {
						return fmt.Errorf("%s: order %x reserves %d, want %d", m.symbol, o.id, o.reserved, want)
					}
					if locked[o.acct.id] == nil {
						locked[o.acct.id] = new([numAssets]int64)
					}
					locked[o.acct.id][asset] += o.reserved
					tot += o.remaining
					cnt++
					seen++
				}
				if tot != l.total || cnt != l.count || cnt == 0 {
					return fmt.Errorf("%s: level %d total %d/%d count %d/%d", m.symbol, l.price, l.total, tot, l.count, cnt)
				}
			}
		}
		if seen != b.orders {
			return fmt.Errorf("%s: book counts %d orders, holds %d", m.symbol, b.orders, seen)
		}
		if bb, ba := b.sides[0].best, b.sides[1].best; bb != nil && ba != nil && bb.price >= ba.price {
			return fmt.Errorf("%s: crossed book %d >= %d", m.symbol, bb.price, ba.price)
		}
	}
	var total [numAssets]int64
	for _, a := range c.accts.sorted() {
		for as := NGN; as < numAssets; as++ {
			bal := a.bal[as]
			if bal.Available < 0 {
				return fmt.Errorf("account %x %v available %d < 0", a.id[12:], as, bal.Available)
			}
			var want int64
			if l := locked[a.id]; l != nil {
				want = l[as]
			}
			if bal.Locked != want {
				return fmt.Errorf("account %x %v locked %d, open orders hold %d", a.id[12:], as, bal.Locked, want)
			}
			total[as] += bal.Available + bal.Locked
		}
		n := 0
		for o := range a.orders.all {
			n++
			if a.orders.get(&o.id) != o || o.acct != a {
				return fmt.Errorf("account order map inconsistent")
			}
		}
		if n != a.orders.len() {
			return fmt.Errorf("account order index holds %d, counts %d", n, a.orders.len())
		}
	}
	if net != nil && total != *net {
		return fmt.Errorf("asset totals %v != net credits %v", total, *net)
	}
	return nil
}

// replay builds a fresh core from events, taking the streams in a random interleaving
// that keeps each stream's own order.
func replay(t testing.TB, events []Event, closed int, r *rand.Rand) *core {
	t.Helper()
	c, err := newCore(DefaultPairs(), closed)
	if err != nil {
		t.Fatal(err)
	}
	streams := map[string][]Event{}
	var names []string
	for _, e := range events {
		if _, ok := streams[e.Symbol]; !ok {
			names = append(names, e.Symbol)
		}
		streams[e.Symbol] = append(streams[e.Symbol], e)
	}
	for len(names) > 0 {
		i := r.IntN(len(names))
		s := streams[names[i]]
		n := 1 + r.IntN(min(len(s), 8))
		for k := 0; k < n; k++ {
			if err := c.apply(&s[k]); err != nil {
				t.Fatal(err)
			}
		}
		if s = s[n:]; len(s) == 0 {
			names = append(names[:i], names[i+1:]...)
		} else {
			streams[names[i]] = s
		}
	}
	return c
}

func sameState(t testing.TB, what string, a, b *core) {
	t.Helper()
	sa, sb := a.snapshot(nil, 0), b.snapshot(nil, 0)
	if !bytes.Equal(sa, sb) {
		t.Fatalf("%s: states differ (%d vs %d bytes)", what, len(sa), len(sb))
	}
}
