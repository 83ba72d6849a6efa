package marketdata

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"svc/engine"
)

// tapJournal keeps every durable batch in order, like svcd's eventlog.OnDurable sees them.
type tapJournal struct {
	mu     sync.Mutex
	events []engine.Event
	n      uint64
}

func (j *tapJournal) Append(batch []engine.Event) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, batch...)
	j.n += uint64(len(batch))
	return j.n, nil
}

func (j *tapJournal) take() []engine.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.events
	j.events = nil
	return out
}

func seed(t *testing.T) uint64 {
	s := uint64(rand.Uint32())
	if v := os.Getenv("SEED"); v != "" {
		s, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("SEED=%d", s)
	return s
}

func newEngine(t *testing.T, accounts int) (*engine.Engine, *tapJournal, []engine.AccountID) {
	t.Helper()
	j := &tapJournal{}
	eng, err := engine.New(engine.Config{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	accts := make([]engine.AccountID, accounts)
	for i := range accts {
		accts[i][0], accts[i][15] = 0xAA, byte(i+1)
		for k, a := range []engine.Asset{engine.NGN, engine.USDT} {
			var tid engine.TransferID
			tid[0], tid[1] = byte(i+1), byte(k+1)
			res, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: accts[i], Asset: a, Amount: 1 << 50, TransferID: tid})
			if err != nil || res.Code != engine.OK {
				t.Fatalf("credit: %v %v", res.Code, err)
			}
		}
	}
	j.take()
	return eng, j, accts
}

// TestBookFollowsEngine: after every command, the replica fed with the durable events
// equals the engine's own depth, and a client that only applies TakeChanges does too.
func TestBookFollowsEngine(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 7))
	eng, j, accts := newEngine(t, 4)
	const sym = "USDT-NGN"
	b := NewBook()
	client := map[levelKey]engine.Qty{}
	var open []struct {
		acct engine.AccountID
		id   engine.OrderID
	}
	var nextID uint64
	var bids, asks []Level
	for step := 0; step < 3000; step++ {
		acct := accts[r.IntN(len(accts))]
		cmd := engine.Command{Kind: engine.CmdPlace, Symbol: sym, Account: acct, Time: int64(step) * 1e6}
		switch k := r.IntN(10); {
		case k < 6:
			nextID++
			cmd.OrderID[0], cmd.OrderID[8] = byte(nextID>>8), byte(nextID)
			cmd.OrderID[15] = byte(nextID >> 16)
			cmd.Type, cmd.Side = engine.Limit, engine.Side(1+r.IntN(2))
			cmd.Price = engine.Price(150000 + r.IntN(40) - 20)
			cmd.Qty = engine.Qty(100 * (1 + r.IntN(5)))
			switch r.IntN(8) {
			case 0:
				cmd.TIF = engine.IOC
			case 1:
				cmd.TIF = engine.FOK
			case 2:
				cmd.PostOnly = true
			}
			open = append(open, struct {
				acct engine.AccountID
				id   engine.OrderID
			}{acct, cmd.OrderID})
		case k < 7:
			nextID++
			cmd.OrderID[0], cmd.OrderID[8] = byte(nextID>>8), byte(nextID)
			cmd.OrderID[15] = byte(nextID >> 16)
			cmd.Type, cmd.Side, cmd.Qty = engine.Market, engine.Side(1+r.IntN(2)), engine.Qty(100*(1+r.IntN(8)))
		default:
			if len(open) == 0 {
				continue
			}
			i := r.IntN(len(open))
			cmd = engine.Command{Kind: engine.CmdCancel, Account: open[i].acct, OrderID: open[i].id, Time: int64(step) * 1e6}
			open = slices.Delete(open, i, i+1)
		}
		if _, err := eng.Submit(&cmd); err != nil {
			t.Fatal(err)
		}
		for _, e := range j.take() {
			if e.Symbol != sym {
				continue
			}
			if _, err := b.Apply(&e); err != nil {
				t.Fatal(err)
			}
		}
		bids, asks = b.TakeChanges(bids[:0], asks[:0])
		for _, l := range bids {
			client[levelKey{engine.Buy, l.Price}] = l.Qty
		}
		for _, l := range asks {
			client[levelKey{engine.Sell, l.Price}] = l.Qty
		}
		d, err := eng.Depth(sym, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if d.Seq != b.Seq() {
			t.Fatalf("step %d: seq %d, engine %d", step, b.Seq(), d.Seq)
		}
		gb, ga := b.Depth(0, nil, nil)
		if !sameLevels(gb, d.Bids) || !sameLevels(ga, d.Asks) {
			t.Fatalf("step %d: replica\n bids %v asks %v\nengine\n bids %v asks %v", step, gb, ga, d.Bids, d.Asks)
		}
		n := 0
		for k, q := range client {
			if q == 0 {
				delete(client, k)
				continue
			}
			n++
			lv, _ := b.sides[sideIdx(k.side)].Get(key(k.side, k.price))
			if lv != q {
				t.Fatalf("step %d: client level %v = %d, replica %d", step, k, q, lv)
			}
		}
		if n != len(gb)+len(ga) {
			t.Fatalf("step %d: client has %d levels, replica %d", step, n, len(gb)+len(ga))
		}
	}
}

func sameLevels(a []Level, b []engine.Level) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Price != b[i].Price || a[i].Qty != b[i].Qty {
			return false
		}
	}
	return true
}

func TestBookSkipsOldAndRefusesGaps(t *testing.T) {
	b := NewBook()
	b.Reset(engine.Depth{Seq: 10, Bids: []engine.Level{{Price: 100, Qty: 5}}})
	old := engine.Event{Seq: 9, Kind: engine.EventAccepted, Type: engine.Limit, Side: engine.Buy, Price: 100, Qty: 7}
	if ok, err := b.Apply(&old); ok || err != nil {
		t.Fatalf("old event: applied %v err %v", ok, err)
	}
	gap := old
	gap.Seq = 12
	if _, err := b.Apply(&gap); err == nil {
		t.Fatal("gap accepted")
	}
	next := old
	next.Seq = 11
	if ok, err := b.Apply(&next); !ok || err != nil {
		t.Fatalf("next event: %v %v", ok, err)
	}
	bids, _ := b.Depth(0, nil, nil)
	if len(bids) != 1 || bids[0].Qty != 12 {
		t.Fatalf("bids %v", bids)
	}
}

func TestTransientLevelIsNotAChange(t *testing.T) {
	b := NewBook()
	evs := []engine.Event{
		{Seq: 1, Kind: engine.EventAccepted, Type: engine.Limit, Side: engine.Sell, Price: 100, Qty: 5},
		// a buy at 101 crossing the ask, filled entirely
		{Seq: 2, Kind: engine.EventAccepted, Type: engine.Limit, Side: engine.Buy, Price: 101, Qty: 5, OrderID: engine.OrderID{1}},
		{Seq: 3, Kind: engine.EventTrade, Side: engine.Buy, Price: 100, Qty: 5, OrderID: engine.OrderID{1}},
	}
	for i := range evs {
		if _, err := b.Apply(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	bids, asks := b.TakeChanges(nil, nil)
	if len(bids) != 0 || len(asks) != 0 {
		t.Fatalf("changes bids %v asks %v, want none", bids, asks)
	}
}
