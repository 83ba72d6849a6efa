package engine

import (
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// benchClosed is the closed-order history of the core benchmarks: the engine's default
// Config.ClosedOrders unless ENGINE_BENCH_CLOSED says otherwise.
var benchClosed = func() int {
	if v, err := strconv.Atoi(os.Getenv("ENGINE_BENCH_CLOSED")); err == nil && v > 0 {
		return v
	}
	return defaultClosedOrders
}()

// benchCore is a core with nAccts richly funded accounts, driven synchronously as a
// runner drives it (events handed off every 256 commands).
type benchCore struct {
	c     *core
	m     *market
	accts []AccountID
	n     int
	cmd   Command
	res   Result
}

func newBenchCore(b testing.TB, nAccts int) *benchCore {
	c, err := newCore(DefaultPairs(), benchClosed)
	if err != nil {
		b.Fatal(err)
	}
	bc := &benchCore{c: c, m: c.bySymbol["USDT-NGN"]}
	for i := 0; i < nAccts; i++ {
		a := acc(i + 1)
		bc.accts = append(bc.accts, a)
		for as := NGN; as < numAssets; as++ {
			cmd := Command{Kind: CmdCredit, Account: a, Asset: as, Amount: 1 << 60, TransferID: tid(uint64(i*8) + uint64(as))}
			c.exec(&cmd, &bc.res)
		}
	}
	c.funds.ev = c.funds.ev[:0]
	return bc
}

func (bc *benchCore) run(cmd *Command) *Result {
	bc.res = Result{}
	bc.m.exec(cmd, &bc.res)
	bc.n++
	if bc.n&255 == 0 {
		bc.m.ev = bc.m.ev[:0]
	}
	return &bc.res
}

// addCancel reproduces the shape of geseq/orderbook's BenchmarkThroughput: every four
// operations cancel the two oldest resting orders and add a buy and a sell that do not
// cross, around a mid price that moves by a tick at random.
type addCancel struct {
	bc    *benchCore
	r     *rand.Rand
	fifo  []OrderID // resting ids, oldest first (ring)
	head  int
	owner []AccountID
	next  uint64
	mid   Price
	cmd   Command // cancels
	add1  Command // places

	la                  [4]Command // the look-ahead's view of the next three ops, by op number mod 4
	next1, next2, next3 Command    // the same for BenchmarkAddCancelDeepWindow
}

func newAddCancel(b testing.TB, resting int) *addCancel {
	w := &addCancel{bc: newBenchCore(b, benchAccounts), r: rand.New(rand.NewPCG(1, 2)), mid: 150000}
	size := 1
	for size < resting+8 {
		size <<= 1
	}
	w.fifo = make([]OrderID, 0, resting+8)
	for i := 0; i < resting; i++ {
		w.add(Side(1 + i%2))
	}
	return w
}

func (w *addCancel) add(s Side) {
	w.next++
	off := Price(1 + w.r.IntN(500))
	p := w.mid - off
	bk := w.bc.m.book
	if s == Sell {
		p = w.mid + off
		if bl := bk.bestLevel(Buy); bl != nil && p <= bl.price {
			p = bl.price + 1
		}
	} else if al := bk.bestLevel(Sell); al != nil && p >= al.price {
		p = al.price - 1
	}
	a := w.bc.accts[w.next%uint64(len(w.bc.accts))]
	w.place(a, s, p, 100+Qty(w.r.IntN(10))*100)
}

// place runs a GTC limit order with the next id; only the fields that change are
// written, so the harness costs little beside the engine.
func (w *addCancel) place(a AccountID, s Side, p Price, q Qty) {
	c := &w.add1
	if c.Kind == 0 {
		*c = Command{Kind: CmdPlace, Symbol: "USDT-NGN", Type: Limit}
	}
	c.Account, c.OrderID, c.Side, c.Price, c.Qty, c.Time = a, oid(w.next), s, p, q, int64(w.next)
	w.bc.run(c)
	w.fifo = append(w.fifo, c.OrderID)
	w.owner = append(w.owner, a)
}

func (w *addCancel) cancel() {
	id, a := w.fifo[w.head], w.owner[w.head]
	w.head++
	if w.head >= 1<<12 && w.head*2 >= len(w.fifo) { // compact now and then, amortized O(1)
		n := copy(w.fifo, w.fifo[w.head:])
		copy(w.owner, w.owner[w.head:])
		w.fifo, w.owner, w.head = w.fifo[:n], w.owner[:n], 0
	}
	w.cmd.Kind, w.cmd.Account, w.cmd.OrderID = CmdCancel, a, id
	if r := w.bc.run(&w.cmd); r.Code != OK {
		panic(r.Code.String())
	}
}

// benchAccounts is the number of accounts of the add/cancel workloads.
const benchAccounts = 64

// benchLookahead says whether the harnesses hand the market the next three commands
// before each one, as the runner does with its batch (lookahead.go);
// ENGINE_BENCH_LOOKAHEAD=0 turns it off.
var benchLookahead = os.Getenv("ENGINE_BENCH_LOOKAHEAD") != "0"

// ahead hands the market what ops i+1, i+2 and i+3 will be (only the kind, account and
// id matter to the look-ahead), as the runner hands it the next commands of its batch:
// la holds the ops ahead by op number mod 4, each written once, when it comes within
// three of the op run.
func (w *addCancel) ahead(i int) {
	// The runner hands over pointers to commands already in its ring, at no cost; the
	// harness has to write them, so it skips that when the market would ignore them.
	if !benchLookahead || w.bc.m.book.orders < lookaheadMin {
		w.la[(i+3)&3].Kind = 0
		return
	}
	for k := 1; k <= 2; k++ {
		if c := &w.la[(i+k)&3]; c.Kind == 0 || i == 0 {
			w.peek(i, k, c)
		}
	}
	c3 := &w.la[(i+3)&3]
	w.peek(i, 3, c3)
	w.bc.m.lookahead(&w.la[(i+1)&3], &w.la[(i+2)&3], c3)
}

// peek writes into c the kind, account and id of op i+k (k from 1 to 3), before op i
// runs: ops 0 and 1 of every four cancel the oldest, ops 2 and 3 add the next ids.
func (w *addCancel) peek(i, k int, c *Command) {
	cancels, adds := 0, 0 // ops i to i+k-1
	for t := i; t < i+k; t++ {
		if t&3 < 2 {
			cancels++
		} else {
			adds++
		}
	}
	if (i+k)&3 < 2 {
		c.Kind, c.Account, c.OrderID = CmdCancel, w.owner[w.head+cancels], w.fifo[w.head+cancels]
		return
	}
	n := w.next + uint64(adds) + 1
	c.Kind, c.Account, c.OrderID = CmdPlace, w.bc.accts[n%benchAccounts], oid(n)
}

func (w *addCancel) op(i int) {
	switch i & 3 {
	case 0:
		switch w.r.IntN(3) {
		case 0:
			w.mid++
		case 1:
			w.mid--
		}
		w.cancel()
	case 1:
		w.cancel()
	case 2:
		w.add(Buy)
	case 3:
		w.add(Sell)
	}
}

func benchAddCancel(b *testing.B, resting int) {
	w := newAddCancel(b, resting)
	// the FIFO slices shift; keep them from reallocating by a large initial capacity
	w.fifo = append(make([]OrderID, 0, resting*4+1024), w.fifo...)
	w.owner = append(make([]AccountID, 0, resting*4+1024), w.owner...)
	for i := 0; i < 4096; i++ { // warm up pools, maps and the closed-order ring
		w.ahead(i)
		w.op(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		w.ahead(i)
		w.op(i)
	}
	b.StopTimer()
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkAddCancelShallow: add/cancel with ~100 resting orders, risk checks on.
func BenchmarkAddCancelShallow(b *testing.B) { benchAddCancel(b, 100) }

// BenchmarkAddCancelDeep: add/cancel with 50,000 resting orders, risk checks on.
func BenchmarkAddCancelDeep(b *testing.B) { benchAddCancel(b, 50_000) }

// BenchmarkAddCancelDeepWindow has the shape of geseq/orderbook's ThroughputDeep: a
// window of 50,000 resting orders; each pair of operations adds one order (buys and
// sells alternate, prices cycling over 100 ticks on each side of a fixed mid, fixed
// quantity) and cancels the oldest. Risk checks and events on, 64 accounts.
func BenchmarkAddCancelDeepWindow(b *testing.B) {
	const window, steps = 50_000, 100
	w := &addCancel{bc: newBenchCore(b, benchAccounts), mid: 150000}
	w.fifo = make([]OrderID, 0, 1<<20)
	w.owner = make([]AccountID, 0, 1<<20)
	add := func() {
		w.next++
		s, p := Buy, w.mid-Price(w.next%steps+1)
		if w.next&1 == 1 {
			s, p = Sell, w.mid+Price(w.next%steps+1)
		}
		w.place(w.bc.accts[w.next%uint64(len(w.bc.accts))], s, p, 1000)
	}
	for i := 0; i < window; i++ {
		add()
	}
	for i := 0; i < 4096; i++ {
		add()
		w.cancel()
	}
	b.ReportAllocs()
	b.ResetTimer()
	// The look-ahead as the runner does it: before each op, the next three (adds of the
	// next ids and cancels of the oldest alternate).
	ahead := func(addNext bool) {
		if !benchLookahead {
			return
		}
		c1, c2, c3 := &w.next1, &w.next2, &w.next3
		n := w.next + 1
		if addNext { // before a cancel: add, cancel, add
			c1.Kind, c1.Account, c1.OrderID = CmdPlace, w.bc.accts[n%benchAccounts], oid(n)
			c2.Kind, c2.Account, c2.OrderID = CmdCancel, w.owner[w.head+1], w.fifo[w.head+1]
			c3.Kind, c3.Account, c3.OrderID = CmdPlace, w.bc.accts[(n+1)%benchAccounts], oid(n+1)
		} else { // before an add (of n): cancel, add, cancel
			c1.Kind, c1.Account, c1.OrderID = CmdCancel, w.owner[w.head], w.fifo[w.head]
			c2.Kind, c2.Account, c2.OrderID = CmdPlace, w.bc.accts[(n+1)%benchAccounts], oid(n+1)
			c3.Kind, c3.Account, c3.OrderID = CmdCancel, w.owner[w.head+1], w.fifo[w.head+1]
		}
		w.bc.m.lookahead(c1, c2, c3)
	}
	cpu := startCPU()
	for i := 0; i < b.N; i += 2 {
		ahead(false) // next: cancel, then add
		add()
		ahead(true) // next: add, then cancel
		w.cancel()
	}
	b.StopTimer()
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// mixed is the exchange-core-like workload: about 1,000 resting orders over about 750
// levels; limit adds near the touch, cancels, IOC and market takers.
type mixed struct {
	bc    *benchCore
	r     *rand.Rand
	live  []OrderID
	owner []AccountID
	next  uint64
	mid   Price
	cmd   Command
}

func newMixed(b testing.TB) *mixed {
	w := &mixed{bc: newBenchCore(b, 256), r: rand.New(rand.NewPCG(7, 7)), mid: 150000}
	w.live = make([]OrderID, 0, 4096)
	w.owner = make([]AccountID, 0, 4096)
	for len(w.live) < 1000 {
		w.limit(GTC, false)
	}
	return w
}

func (w *mixed) limit(tif TimeInForce, aggressive bool) {
	w.next++
	s := Side(1 + w.r.IntN(2))
	// spread offsets so ~1,000 orders cover ~750 levels: dense near the touch
	off := Price(1 + w.r.IntN(40)*w.r.IntN(20))
	if aggressive {
		off = -Price(w.r.IntN(5))
	}
	p := w.mid - off
	if s == Sell {
		p = w.mid + off
	}
	a := w.bc.accts[w.r.IntN(len(w.bc.accts))]
	w.cmd = Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(w.next), Side: s, Type: Limit, TIF: tif, Price: p, Qty: 100 + Qty(w.r.IntN(20))*50, Time: int64(w.next)}
	r := w.bc.run(&w.cmd)
	if tif == GTC && !r.State.Closed() {
		w.live = append(w.live, w.cmd.OrderID)
		w.owner = append(w.owner, a)
	}
}

func (w *mixed) op() {
	n := w.r.IntN(100)
	switch {
	case n < 80 && w.bc.m.book.orders < 1000: // passive add near the touch
		w.limit(GTC, false)
	case n < 80: // cancel, keeping the book near 1,000 orders
		if len(w.live) == 0 {
			w.limit(GTC, false)
			return
		}
		i := w.r.IntN(len(w.live))
		w.cmd = Command{Kind: CmdCancel, Account: w.owner[i], OrderID: w.live[i]}
		last := len(w.live) - 1
		w.live[i], w.owner[i] = w.live[last], w.owner[last]
		w.live, w.owner = w.live[:last], w.owner[:last]
		w.bc.run(&w.cmd) // may be NOT_CANCELLABLE after a fill: still a command
	case n < 85: // aggressive GTC: takes, may rest
		w.limit(GTC, true)
	case n < 93:
		w.limit(IOC, true)
	default:
		w.next++
		a := w.bc.accts[w.r.IntN(len(w.bc.accts))]
		w.cmd = Command{Kind: CmdPlace, Symbol: "USDT-NGN", Account: a, OrderID: oid(w.next), Side: Side(1 + w.r.IntN(2)), Type: Market, Qty: 100 + Qty(w.r.IntN(10))*100, Time: int64(w.next)}
		w.bc.run(&w.cmd)
	}
	if w.r.IntN(64) == 0 {
		w.mid += Price(w.r.IntN(3) - 1)
	}
}

// BenchmarkMixed: the mixed workload, matching and risk checks on.
func BenchmarkMixed(b *testing.B) {
	w := newMixed(b)
	for i := 0; i < 20000; i++ {
		w.op()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		w.op()
	}
	b.StopTimer()
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
	b.ReportMetric(float64(w.bc.m.book.orders), "resting")
	b.ReportMetric(float64(w.bc.m.book.levels(Buy)+w.bc.m.book.levels(Sell)), "levels")
}

// BenchmarkMixedLatency: the mixed workload with each command timed into an HdrHistogram.
func BenchmarkMixedLatency(b *testing.B) {
	w := newMixed(b)
	for i := 0; i < 20000; i++ {
		w.op()
	}
	h := hdrhistogram.New(1, int64(time.Second), 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		w.op()
		h.RecordValue(int64(time.Since(t0)))
	}
	b.StopTimer()
	b.ReportMetric(float64(h.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99)), "p99-ns")
	b.ReportMetric(float64(h.ValueAtQuantile(99.99)), "p99.99-ns")
}

// completion counts results delivered back by the runner.
type completion struct {
	done  chan struct{}
	n     int64
	codes [16]int64
	want  int64
}

func (c *completion) Complete(r Result, err error) {
	c.codes[r.Code&15]++
	c.n++
	if c.n == c.want {
		close(c.done)
	}
}

// BenchmarkRingOneProducer: one producer submits mixed commands through the ring of
// one symbol (journal: DiscardJournal); the runner delivers every result back.
func BenchmarkRingOneProducer(b *testing.B) {
	e, err := New(Config{Journal: &DiscardJournal{}, RingSize: 1 << 14})
	if err != nil {
		b.Fatal(err)
	}
	// fund through the engine itself
	e.Start()
	defer e.Stop()
	cmds := ringWorkload(b, e, "USDT-NGN", 1<<16, 1)
	c := &completion{done: make(chan struct{}), want: int64(b.N)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		cmd := &cmds[i&(len(cmds)-1)]
		for e.SubmitAsync(cmd, c) == ErrBusy {
		}
	}
	<-c.done
	b.StopTimer()
	cpu.report(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

// ringWorkload funds accounts and builds n commands (a power of two) cycling through
// passive limits, cancels of them, and IOC takers; ids are unique per round by tag.
func ringWorkload(b testing.TB, e *Engine, symbol string, n int, tag uint64) []Command {
	const accts = 64
	for i := 0; i < accts; i++ {
		for as := NGN; as < numAssets; as++ {
			if r, err := e.Submit(&Command{Kind: CmdCredit, Account: acc(int(tag)<<16 | i), Asset: as, Amount: 1 << 60, TransferID: tid(tag<<32 | uint64(i)<<8 | uint64(as))}); err != nil || (r.Code != OK && r.Code != AlreadyApplied) {
				b.Fatal(r.Code, err)
			}
		}
	}
	r := rand.New(rand.NewPCG(tag, 3))
	cmds := make([]Command, 0, n)
	var pending []Command
	id := tag << 40
	for len(cmds) < n {
		k := r.IntN(10)
		switch {
		case k < 5 || len(pending) == 0:
			id++
			s := Side(1 + r.IntN(2))
			off := Price(1 + r.IntN(300))
			p := 150000 - off
			if s == Sell {
				p = 150000 + off
			}
			c := Command{Kind: CmdPlace, Symbol: symbol, Account: acc(int(tag)<<16 | r.IntN(accts)), OrderID: oid(id), Side: s, Type: Limit, Price: p, Qty: 100 + Qty(r.IntN(10))*100}
			cmds = append(cmds, c)
			pending = append(pending, c)
		case k < 9:
			c := pending[0]
			pending = pending[1:]
			cmds = append(cmds, Command{Kind: CmdCancel, Symbol: symbol, Account: c.Account, OrderID: c.OrderID})
		default:
			id++
			cmds = append(cmds, Command{Kind: CmdPlace, Symbol: symbol, Account: acc(int(tag)<<16 | r.IntN(accts)), OrderID: oid(id), Side: Side(1 + r.IntN(2)), Type: Limit, TIF: IOC, Price: 150000, Qty: 100})
		}
	}
	return cmds
}

// BenchmarkRingSymbols: three producers spread over 1, 2 or 3 symbols.
func BenchmarkRingSymbols(b *testing.B) {
	for _, nsym := range []int{1, 2, 3} {
		b.Run(string(rune('0'+nsym)), func(b *testing.B) {
			e, _ := New(Config{Journal: &DiscardJournal{}, RingSize: 1 << 14})
			e.Start()
			defer e.Stop()
			syms := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}[:nsym]
			const producers = 3
			var work [producers][]Command
			for p := 0; p < producers; p++ {
				work[p] = ringWorkload(b, e, syms[p%nsym], 1<<15, uint64(p+1))
			}
			per := b.N/producers + 1
			done := make(chan struct{}, producers)
			b.ResetTimer()
			cpu := startCPU()
			for p := 0; p < producers; p++ {
				go func(p int) {
					c := &completion{done: make(chan struct{}), want: int64(per)}
					cmds := work[p]
					for i := 0; i < per; i++ {
						for e.SubmitAsync(&cmds[i&(len(cmds)-1)], c) == ErrBusy {
						}
					}
					<-c.done
					done <- struct{}{}
				}(p)
			}
			for p := 0; p < producers; p++ {
				<-done
			}
			b.StopTimer()
			cpu.report(b, per*producers)
			b.ReportMetric(float64(per*producers)/b.Elapsed().Seconds(), "cmds/s")
		})
	}
}

// cpuClock measures the process's CPU time (user+system, all threads). On this shared
// 2-core machine wall time depends on other people's builds; CPU time per operation
// does much less, so benchmarks report both.
type cpuClock struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{cpuNow()} }

func (c cpuClock) report(b *testing.B, n int) {
	b.ReportMetric(float64(cpuNow()-c.start)/float64(n), "cpu-ns/op")
}
