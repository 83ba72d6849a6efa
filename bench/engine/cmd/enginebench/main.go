// Command enginebench drives the engine through its public API (rings, runners,
// journal) with fixed-seed workloads and prints throughput and per-command latency
// (submit to result, HdrHistogram p50/p99/p99.99).
//
//	go run ./bench/engine/cmd/enginebench -n 2000000 -rounds 5
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"svc/engine"
)

func main() {
	n := flag.Int("n", 1_000_000, "commands per producer per scenario")
	rounds := flag.Int("rounds", 5, "repetitions; the median is reported")
	window := flag.Int("window", 4096, "commands a producer keeps in flight")
	flag.Parse()
	fmt.Printf("enginebench: GOMAXPROCS=%d n=%d rounds=%d window=%d\n", runtime.GOMAXPROCS(0), *n, *rounds, *window)
	scenarios := []struct {
		name      string
		symbols   int
		producers int
	}{
		{"ring, 1 symbol, 1 producer", 1, 1},
		{"ring, 1 symbol, 3 producers", 1, 3},
		{"ring, 2 symbols, 3 producers", 2, 3},
		{"ring, 3 symbols, 3 producers", 3, 3},
	}
	for _, sc := range scenarios {
		var tputs []float64
		var last *hdrhistogram.Histogram
		for r := 0; r < *rounds; r++ {
			tp, h, err := run(sc.symbols, sc.producers, *n, *window, uint64(r+1))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			tputs = append(tputs, tp)
			last = h
		}
		sort.Float64s(tputs)
		fmt.Printf("%-30s median %10.0f cmds/s (min %.0f max %.0f)  latency p50 %6d ns  p99 %7d ns  p99.99 %8d ns (last round)\n",
			sc.name, tputs[len(tputs)/2], tputs[0], tputs[len(tputs)-1],
			last.ValueAtQuantile(50), last.ValueAtQuantile(99), last.ValueAtQuantile(99.99))
	}
}

// timed is one in-flight command's Completer: it records submit-to-result latency.
// Results of one producer come back from one runner, so its histogram needs no lock.
type timed struct {
	t0   time.Time
	h    *hdrhistogram.Histogram
	busy atomic.Bool
}

func (t *timed) Complete(r engine.Result, err error) {
	if err != nil {
		panic(err)
	}
	t.h.RecordValue(int64(time.Since(t.t0)))
	t.busy.Store(false)
}

func run(nsym, producers, n, window int, seed uint64) (float64, *hdrhistogram.Histogram, error) {
	j := &engine.DiscardJournal{}
	e, err := engine.New(engine.Config{Journal: j, RingSize: 1 << 15})
	if err != nil {
		return 0, nil, err
	}
	if err := e.Start(); err != nil {
		return 0, nil, err
	}
	defer e.Stop()
	syms := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}[:nsym]
	work := make([][]engine.Command, producers)
	for p := range work {
		work[p] = workload(e, syms[p%nsym], n, seed<<8|uint64(p))
	}
	hists := make([]*hdrhistogram.Histogram, producers)
	var wg sync.WaitGroup
	start := time.Now()
	for p := 0; p < producers; p++ {
		h := hdrhistogram.New(1, int64(10*time.Second), 3)
		hists[p] = h
		wg.Add(1)
		go func(cmds []engine.Command) {
			defer wg.Done()
			slots := make([]timed, window) // a sliding window of in-flight commands
			for i := range cmds {
				s := &slots[i%window]
				for s.busy.Load() { // its previous command's result has not come back yet
					runtime.Gosched()
				}
				s.h, s.t0 = h, time.Now()
				s.busy.Store(true)
				for {
					err := e.SubmitAsync(&cmds[i], s)
					if err == nil {
						break
					}
					if err != engine.ErrBusy {
						panic(err)
					}
					runtime.Gosched()
				}
			}
			for i := range slots {
				for slots[i].busy.Load() {
					runtime.Gosched()
				}
			}
		}(work[p])
	}
	wg.Wait()
	el := time.Since(start)
	total := hdrhistogram.New(1, int64(10*time.Second), 3)
	for _, h := range hists {
		total.Merge(h)
	}
	return float64(n*producers) / el.Seconds(), total, nil
}

func id16(hi, lo uint64) (b [16]byte) {
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return
}

// workload funds 64 accounts and returns n commands for symbol: passive limit adds
// near the touch (50%), cancels of the oldest of them (40%), IOC takers (7%) and
// market orders (3%).
func workload(e *engine.Engine, symbol string, n int, tag uint64) []engine.Command {
	const accts = 64
	for i := 0; i < accts; i++ {
		for _, as := range []engine.Asset{engine.NGN, engine.USDT, engine.USDC, engine.USD} {
			c := engine.Command{Kind: engine.CmdCredit, Account: id16(tag, uint64(i)), Asset: as, Amount: 1 << 58, TransferID: id16(tag, uint64(i)<<8|uint64(as))}
			if _, err := e.Submit(&c); err != nil {
				panic(err)
			}
		}
	}
	r := rand.New(rand.NewPCG(tag, 9))
	cmds := make([]engine.Command, 0, n)
	var pending []engine.Command
	id := uint64(0)
	acct := func() engine.AccountID { return id16(tag, uint64(r.IntN(accts))) }
	for len(cmds) < n {
		k := r.IntN(100)
		id++
		switch {
		case k < 50 || len(pending) == 0:
			s := engine.Side(1 + r.IntN(2))
			off := engine.Price(1 + r.IntN(20)*r.IntN(20))
			p := 150000 - off
			if s == engine.Sell {
				p = 150000 + off
			}
			c := engine.Command{Kind: engine.CmdPlace, Symbol: symbol, Account: acct(), OrderID: id16(tag, id), Side: s, Type: engine.Limit, Price: p, Qty: 100 + engine.Qty(r.IntN(10))*100}
			cmds = append(cmds, c)
			pending = append(pending, c)
		case k < 90:
			c := pending[0]
			pending = pending[1:]
			cmds = append(cmds, engine.Command{Kind: engine.CmdCancel, Symbol: symbol, Account: c.Account, OrderID: c.OrderID})
		case k < 97:
			cmds = append(cmds, engine.Command{Kind: engine.CmdPlace, Symbol: symbol, Account: acct(), OrderID: id16(tag, id), Side: engine.Side(1 + r.IntN(2)), Type: engine.Limit, TIF: engine.IOC, Price: 150000, Qty: 100})
		default:
			cmds = append(cmds, engine.Command{Kind: engine.CmdPlace, Symbol: symbol, Account: acct(), OrderID: id16(tag, id), Side: engine.Side(1 + r.IntN(2)), Type: engine.Market, Qty: 100})
		}
	}
	return cmds
}
