package standby

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/journal/journaltest"
)

// memory is an in-memory journal that "refreshes" to what it holds.
type memory struct{ *journal.Memory }

func (m memory) Refresh(context.Context) (uint64, error) { return m.LastOffset(), nil }

// leader is an engine writing a memory journal, as the lease holder would.
type leader struct {
	t   testing.TB
	j   *journal.Memory
	eng *engine.Engine
	n   int
}

func newLeader(t testing.TB) *leader {
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return &leader{t: t, j: j, eng: eng}
}

var accounts = []engine.AccountID{{1}, {2}, {3}}

func (l *leader) submit(c *engine.Command) {
	l.t.Helper()
	if res, err := l.eng.Submit(c); err != nil || res.Code != engine.OK {
		l.t.Fatalf("%+v: %+v %v", c, res, err)
	}
}

// trade funds the accounts once and places crossing orders: fills, partial fills and
// resting orders on two symbols.
func (l *leader) trade(orders int) {
	l.t.Helper()
	if l.n == 0 {
		for i, a := range accounts {
			l.submit(&engine.Command{Kind: engine.CmdCredit, Account: a, Asset: engine.NGN, Amount: 1e15, TransferID: engine.TransferID{byte(i), 1}, Time: 1})
			l.submit(&engine.Command{Kind: engine.CmdCredit, Account: a, Asset: engine.USDT, Amount: 1e12, TransferID: engine.TransferID{byte(i), 2}, Time: 1})
			l.submit(&engine.Command{Kind: engine.CmdCredit, Account: a, Asset: engine.USDC, Amount: 1e12, TransferID: engine.TransferID{byte(i), 3}, Time: 1})
		}
	}
	for range orders {
		l.n++
		side := engine.Buy
		if l.n%2 == 0 {
			side = engine.Sell
		}
		sym := "USDT-NGN"
		if l.n%3 == 0 {
			sym = "USDC-NGN"
		}
		l.submit(&engine.Command{Kind: engine.CmdPlace, Account: accounts[l.n%len(accounts)], Symbol: sym,
			OrderID: engine.OrderID{byte(l.n), byte(l.n >> 8), 7}, Side: side, Type: engine.Limit, Price: engine.Price(150000 + l.n%5),
			Qty: engine.Qty(100 + l.n%7*10), Time: int64(l.n)})
	}
}

// state is what a user sees of an engine: balances, open orders and the books.
func state(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	out := ""
	for _, a := range accounts {
		out += fmt.Sprintf("%x %+v\n", a, eng.Balances(a))
		for _, sym := range []string{"USDT-NGN", "USDC-NGN"} {
			out += fmt.Sprintf("%+v\n", eng.OpenOrders(a, sym, nil))
		}
	}
	for _, sym := range []string{"USDT-NGN", "USDC-NGN"} {
		d, err := eng.Depth(sym, 50)
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%+v\n", d)
	}
	return out
}

// takeOver is what the process taking the lease does: a new engine over the journal,
// restored from the hand-over and caught up with the journal's records after it.
func takeOver(t *testing.T, j *journal.Memory, offset uint64, data []byte) *engine.Engine {
	t.Helper()
	eng, _ := journaltest.Recover(t, j, data, offset)
	return eng
}

func waitApplied(t *testing.T, s *Standby, want uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Applied() < want {
		if time.Now().After(deadline) {
			t.Fatalf("standby at offset %d, journal at %d", s.Applied(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestStandbyFollowsAndHandsOver(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fromSnapshot bool // start from a snapshot taken halfway
		caughtUp     bool // hand over after the copy applied everything, or while records are unread
	}{
		{"from the journal's start, caught up", false, true},
		{"from a snapshot, caught up", true, true},
		{"records left to replay at hand-over", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLeader(t)
			l.trade(200)
			cfg := Config{Journal: memory{l.j}, Poll: time.Millisecond}
			if tc.fromSnapshot {
				data, off, err := l.eng.Snapshot(nil)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Snapshot = func() (uint64, []byte, bool, error) { return off, data, true, nil }
				l.trade(100) // the snapshot is behind the journal, as a periodic one is
			}
			s, err := Start(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			l.trade(300) // while the copy follows
			if tc.caughtUp {
				waitApplied(t, s, l.j.LastOffset())
			} else {
				s.Close() // stop following: what the leader writes next is left to the new leader
				s, err = Start(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
			}
			off, data, err := s.Handover()
			if err != nil {
				t.Fatal(err)
			}
			if !tc.caughtUp {
				l.trade(50)
			}
			if off > l.j.LastOffset() {
				t.Fatalf("hand-over at %d, past the journal's end %d", off, l.j.LastOffset())
			}
			got := takeOver(t, l.j, off, data)
			if want, have := state(t, l.eng), state(t, got); want != have {
				t.Fatalf("the new leader's state differs from the old one's:\nold:\n%s\nnew:\n%s", want, have)
			}
			if got.Offset() != l.j.LastOffset() {
				t.Fatalf("new leader at offset %d, journal %d", got.Offset(), l.j.LastOffset())
			}
		})
	}
}

// A copy that cannot apply what it reads says so at hand-over, so the new leader recovers
// the usual way instead of from a wrong state.
func TestHandoverRefusesABrokenCopy(t *testing.T) {
	l := newLeader(t)
	l.trade(20)
	s, err := Start(context.Background(), Config{Journal: memory{l.j}, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A batch whose sequences leave a gap, as a journal the copy cannot follow would give.
	s.apply([]engine.Event{{Symbol: "USDT-NGN", Kind: engine.EventAccepted, Seq: 1 << 40}}, l.j.LastOffset()+1)
	if _, _, err := s.Handover(); !errors.Is(err, ErrBroken) {
		t.Fatalf("hand-over of a broken copy: %v", err)
	}
}

// BenchmarkTakeover compares what a new leader does before it can serve, for journals of
// different lengths and no snapshot: "cold" restores nothing and replays the whole journal
// (a cold standby, or a restart), "hot" takes this package's hand-over from a copy that
// followed the journal and replays what is left (nothing, here). The hot figure should not
// grow with the journal; it grows with the state handed over (the open orders).
func BenchmarkTakeover(b *testing.B) {
	for _, orders := range []int{20_000, 200_000, 1_000_000} {
		l := newLeader(b)
		l.trade(orders)
		b.Run(fmt.Sprintf("cold/orders=%d", orders), func(b *testing.B) {
			for b.Loop() {
				takeOverBench(b, l.j, 0, nil)
			}
			b.ReportMetric(float64(l.j.LastOffset()), "journal-records")
		})
		b.Run(fmt.Sprintf("hot/orders=%d", orders), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s, err := Start(context.Background(), Config{Journal: memory{l.j}})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				off, data, err := s.Handover()
				if err != nil {
					b.Fatal(err)
				}
				takeOverBench(b, l.j, off, data)
			}
			b.ReportMetric(float64(l.j.LastOffset()), "journal-records")
		})
		l.eng.Stop()
		l.j = nil // let the journal go before the next, longer one
	}
}

func takeOverBench(b *testing.B, j *journal.Memory, offset uint64, data []byte) {
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		b.Fatal(err)
	}
	if data != nil {
		if _, err := eng.Restore(data); err != nil {
			b.Fatal(err)
		}
	}
	last, _, err := eventlog.Replay(context.Background(), j, offset, eng, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Replayed(last); err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		b.Fatal(err)
	}
	eng.Stop()
}
