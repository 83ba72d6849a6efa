package engine

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkPlaceCancelClientID: the live path with client order ids, as the gateway sends
// them: each op places a resting order with a fresh client id (the duplicate check and
// the client id index insert) and cancels the one placed 100 ops earlier, whose closing
// evicts a closed order of 4,096 ago from both indexes. One account in 1,000 per op.
func BenchmarkPlaceCancelClientID(b *testing.B) {
	x := newTC(b, 4096)
	const accts, ids, window = 1000, 1 << 16, 100
	cids := make([]string, ids)
	for i := range cids {
		cids[i] = "cid-" + strconv.Itoa(i)
	}
	for i := 0; i < accts; i++ {
		x.credit(acc(i), NGN, 1<<50)
	}
	m := x.c.bySymbol["USDT-NGN"]
	op := func(i int) {
		var r Result
		c := Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: acc(i % accts), OrderID: oid(uint64(i + 1)),
			Side: Buy, Type: Limit, Price: Price(1000+i%50) * px, Qty: one, ClientOrderID: cids[i%ids], Time: int64(i)}
		x.c.exec(&c, &r)
		if r.Code != OK {
			b.Fatalf("place %d: %v", i, r.Code)
		}
		if i >= window {
			j := i - window
			c = Command{Kind: CmdCancel, Account: acc(j % accts), OrderID: oid(uint64(j + 1)), Time: int64(i)}
			x.c.exec(&c, &r)
			if r.Code != OK {
				b.Fatalf("cancel %d: %v", j, r.Code)
			}
		}
		m.ev = m.ev[:0]
	}
	const warm = 3 * 4096
	for i := 0; i < warm; i++ {
		op(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		op(warm + i)
	}
	b.StopTimer()
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkApply: the replay's apply alone (no journal, no decoding): a journal of 300,000
// events of three symbols and 1,000 accounts (limit orders around one price, about half
// crossing, a third cancelled, every order with a client id, as BenchmarkRecovery's
// generator writes) applied to a fresh engine in chunks of 4,096, as eventlog.Replay does.
func BenchmarkApply(b *testing.B) {
	events := benchJournal(b)
	b.ResetTimer()
	var cpuTotal, wall time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e, err := New(Config{Journal: &DiscardJournal{}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuNow()
		for k := 0; k < len(events); k += 4096 {
			if err := e.Apply(events[k:min(k+4096, len(events))]); err != nil {
				b.Fatal(err)
			}
		}
		wall += time.Since(start)
		cpuTotal += cpuNow() - cpu0
	}
	n := float64(len(events)) * float64(b.N)
	b.ReportMetric(n/wall.Seconds(), "events/s")
	b.ReportMetric(n/cpuTotal.Seconds(), "events/cpu-s")
}

// benchJournalOnce keeps BenchmarkApply's journal between the calls the benchmark
// framework makes (each b.N, each -count): building it takes longer than applying it.
var benchJournalOnce struct {
	sync.Once
	events []Event
}

func benchJournal(b *testing.B) []Event {
	benchJournalOnce.Do(func() { benchJournalOnce.events = replayJournal(b, 300_000) })
	return benchJournalOnce.events
}

// replayJournal runs a random command stream on a core until it journaled n events.
func replayJournal(b *testing.B, n int) []Event {
	x := newTC(b, 4096)
	const accts = 1000
	for i := 0; i < accts; i++ {
		for _, a := range []Asset{NGN, USDT, USDC, USD} {
			x.credit(acc(i), a, 1<<50)
		}
	}
	syms := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}
	type resting struct {
		a  AccountID
		id OrderID
	}
	var open []resting
	r := rand.New(rand.NewPCG(1, 2))
	for id := uint64(1); len(x.events) < n; id++ {
		if k := r.IntN(100); (k < 30 && len(open) > 0) || len(open) >= 20_000 {
			i := r.IntN(len(open))
			x.exec(Command{Kind: CmdCancel, Account: open[i].a, OrderID: open[i].id})
			open[i] = open[len(open)-1]
			open = open[:len(open)-1]
			continue
		}
		a := acc(r.IntN(accts))
		c := Command{Kind: CmdPlace, Symbol: syms[r.IntN(len(syms))], Account: a, OrderID: oid(id),
			Side: Side(1 + r.IntN(2)), Type: Limit, Price: Price(1495+r.IntN(11)) * px,
			Qty: Qty(1+r.IntN(10)) * one, ClientOrderID: "gen-" + strconv.Itoa(r.IntN(1_000_000))}
		if res := x.exec(c); res.Code == OK && res.State != Filled {
			open = append(open, resting{a, c.OrderID})
		}
	}
	return x.events
}
