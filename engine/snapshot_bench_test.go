package engine

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// snapBenchSize reads a size of the snapshot benchmark from the environment.
func snapBenchSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// snapshotState builds, in an engine that is not started, the state svcbench conversions
// leaves behind: orders resting across the three markets, each market's closed-order
// history full, accounts holding every asset, and a few house accounts with one transfer id
// per credit they ever took (the engine keeps every transfer id for idempotency, so a busy
// treasury account holds hundreds of thousands).
func snapshotState(b testing.TB, resting, accounts, houseTransfers int) *Engine {
	b.Helper()
	c, err := newCore(DefaultPairs(), defaultClosedOrders)
	if err != nil {
		b.Fatal(err)
	}
	var r Result
	exec := func(cmd *Command) {
		r = Result{}
		c.exec(cmd, &r)
		if r.Code != OK {
			b.Fatalf("%v: %v", cmd.Kind, r.Code)
		}
		c.funds.ev = c.funds.ev[:0]
		for _, m := range c.markets {
			m.ev = m.ev[:0]
		}
	}
	var xfer uint64
	for i := 0; i < accounts; i++ {
		for as := NGN; as < numAssets; as++ {
			xfer++
			exec(&Command{Kind: CmdCredit, Account: acc(i + 1), Asset: as, Amount: 1 << 50, TransferID: tid(xfer)})
		}
	}
	const houses = 8
	for i := 0; i < houseTransfers; i++ {
		xfer++
		exec(&Command{Kind: CmdCredit, Account: acc(accounts + 1 + i%houses), Asset: NGN, Amount: 1, TransferID: tid(xfer * 0x9E3779B97F4A7C15)})
	}
	var id uint64
	place := func(sym string, a AccountID, s Side, p Price) {
		id++
		exec(&Command{Kind: CmdPlace, Symbol: sym, Account: a, OrderID: oid(id), Side: s, Type: Limit,
			Price: p, Qty: one + Qty(id%10)*one, Time: int64(id), ClientOrderID: "c" + strconv.FormatUint(id, 10)})
	}
	for i := 0; i < resting; i++ {
		m := c.markets[i%len(c.markets)]
		s, p := Buy, 1500*px-Price(1+i%2000)
		if i%2 == 1 {
			s, p = Sell, 1500*px+Price(1+i%2000)
		}
		place(m.symbol, acc(1+i%accounts), s, p)
	}
	for _, m := range c.markets { // fill the closed-order history: place and cancel
		for i := 0; i < len(m.closed); i++ {
			a := acc(1 + i%accounts)
			place(m.symbol, a, Buy, 1000*px)
			exec(&Command{Kind: CmdCancel, Account: a, OrderID: oid(id)})
		}
	}
	// A bare core has no runners' ordering to satisfy; the engine gets its state as
	// recovery gives it one.
	e, err := New(Config{Journal: &MemJournal{}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Restore(c.snapshot(nil, 0)); err != nil {
		b.Fatal(err)
	}
	if err := e.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Stop)
	return e
}

// BenchmarkSnapshotPause times what a snapshot costs the runners: from the barrier being
// requested until they resume (pause-ms, the median of the iterations, and max-pause-ms,
// which is the first: its buffer is not sized yet),
// and the whole Snapshot call (ns/op), on the state of snapshotState. The image is built
// in a buffer sized from the previous one, as svcd does. Sizes: SNAP_BENCH_ORDERS
// (200,000), SNAP_BENCH_ACCOUNTS (20,000), SNAP_BENCH_TRANSFERS (house transfer ids,
// 1,000,000).
func BenchmarkSnapshotPause(b *testing.B) {
	e := snapshotState(b, snapBenchSize("SNAP_BENCH_ORDERS", 200_000),
		snapBenchSize("SNAP_BENCH_ACCOUNTS", 20_000), snapBenchSize("SNAP_BENCH_TRANSFERS", 1_000_000))
	var (
		pauses []time.Duration
		last   int
		start  time.Time
	)
	resumed := func() { pauses = append(pauses, time.Since(start)) }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf := make([]byte, 0, last+last/8) // svcd makes it before calling Snapshot
		start = time.Now()
		data, _, err := e.snapshot(buf, resumed)
		if err != nil {
			b.Fatal(err)
		}
		last = len(data)
	}
	b.StopTimer()
	slices.Sort(pauses)
	b.ReportMetric(float64(pauses[len(pauses)/2].Microseconds())/1e3, "pause-ms")
	b.ReportMetric(float64(pauses[len(pauses)-1].Microseconds())/1e3, "max-pause-ms")
	b.ReportMetric(float64(last)/1e6, "MB")
}
