package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func init() {
	commands["conversions"] = command{summary: "order placement load against svcd in alternating rounds without and with a steady flow of conversions (sandbox onramps paid by deposits, which the treasury hedges on the book); prints the orders/s ratio", run: runConversions}
}

// runConversions is `svcbench conversions [--conversion-rate N] <svcbench orders flags>`:
// issue 27's check that the order path is not slowed by the payments trading on the book.
// Each round runs the orders load twice on the same svcd, alone and while conversions
// arrive at --conversion-rate per second (the run alone goes first in odd rounds, second
// in even ones); each conversion is an onramp created and paid by a sandbox deposit: the
// deposit's conversion posts against system:fx, and the treasury places its hedge on the
// book. The per-round ratios' median is printed.
func runConversions(args []string, stdout, stderr io.Writer) error {
	rate := 20.0
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--conversion-rate="):
			v, err := strconv.ParseFloat(strings.TrimPrefix(a, "--conversion-rate="), 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("--conversion-rate: want a positive number")
			}
			rate = v
		case a == "--conversion-rate" && i+1 < len(args):
			v, err := strconv.ParseFloat(args[i+1], 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("--conversion-rate: want a positive number")
			}
			rate, i = v, i+1
		default:
			rest = append(rest, a)
		}
	}
	cfg, err := parseOrdersFlags(rest, false, stderr)
	if err != nil {
		return err
	}
	keys, addr, err := prepareKeys(cfg, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "svcbench conversions: %s, %d conns, %s (+%s warm-up) per run, %d key(s), %d round(s), %.0f conversions/s in one run of each round (alternately the second and the first)\n",
		cfg.URL, cfg.Conns, cfg.Duration, cfg.Warmup, len(keys), cfg.Rounds, rate)
	// The flow's first conversions pay what a steady flow does not: the ledger's system
	// accounts created per shard, each pooled connection preparing its statements, the
	// maker's and the treasury's first rounds. Item 6 is about a steady flow: warm it first.
	warm := startConversionFlow(addr, keys[0], rate)
	time.Sleep(max(cfg.Warmup, 5*time.Second))
	done, failed := warm.stop()
	fmt.Fprintf(stdout, "conversion warm-up: %d conversions (%d failed), not measured\n\n", done, failed)
	var ratios []float64
	var without, with []*runResult
	for r := 0; r < cfg.Rounds; r++ {
		// The runs alternate which goes first (alone, with; then with, alone; ...): the
		// resting book, the heap and the engine's snapshots grow through the whole run, so a
		// fixed order would always give the second run the bigger state.
		var a, b *runResult
		var done, failed int64
		var flow *conversionFlow
		alone := func() {
			a = runLoad(context.Background(), "svcd alone", newWorkload(cfg, addr, keys), cfg.Rate)
			printResult(stdout, a)
		}
		withFlow := func() {
			flow = startConversionFlow(addr, keys[0], rate)
			b = runLoad(context.Background(), "svcd + conversions", newWorkload(cfg, addr, keys), cfg.Rate)
			done, failed = flow.stop()
			printResult(stdout, b)
		}
		if r%2 == 0 {
			alone()
			withFlow()
		} else {
			withFlow()
			alone()
		}
		ratio := b.RPS() / a.RPS()
		ratios = append(ratios, ratio)
		without, with = append(without, a), append(with, b)
		fmt.Fprintf(stdout, "round %d: %d conversions (%d failed) during the run; orders/s with/without = %.1f%% (load %s)\n",
			r+1, done, failed, 100*ratio, loadAvg())
		if err, ok := flow.firstErr.Load().(error); ok {
			fmt.Fprintf(stdout, "  first failed conversion: %v\n", err)
		}
		fmt.Fprintln(stdout)
	}
	sort.Float64s(ratios)
	m := ratios[len(ratios)/2]
	fmt.Fprintf(stdout, "== orders/s without conversions %.0f, with %.0f (medians of %d); median per-round ratio %.1f%% (target >= 95%%)\n",
		medianRun(without).RPS(), medianRun(with).RPS(), cfg.Rounds, 100*m)
	if cfg.CancelAtEnd {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cancelAll(ctx, addr, keys, cfg.Symbols, stdout)
		cancel()
	}
	return nil
}

// conversionFlow creates and pays sandbox onramps at a steady rate until stopped.
type conversionFlow struct {
	stopCh       chan struct{}
	wg           sync.WaitGroup
	done, failed atomic.Int64
	firstErr     atomic.Value // the first failure's error, to say why
}

func startConversionFlow(addr, key string, rate float64) *conversionFlow {
	f := &conversionFlow{stopCh: make(chan struct{})}
	c := &fasthttp.HostClient{Addr: addr, MaxConns: 8, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	every := time.Duration(float64(time.Second) / rate)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		var inflight sync.WaitGroup
		defer inflight.Wait()
		for {
			select {
			case <-f.stopCh:
				return
			case <-t.C:
			}
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				if err := f.one(c, addr, key); err != nil {
					f.failed.Add(1)
					f.firstErr.CompareAndSwap(nil, err)
					return
				}
				f.done.Add(1)
			}()
		}
	}()
	return f
}

func (f *conversionFlow) one(c *fasthttp.HostClient, addr, key string) error {
	code, body, err := call(c, addr, key, "POST", "/v1/payments/onramps", []byte(`{"type":"TEMPORARY","amount":50000}`))
	if err != nil || code != 201 {
		return fmt.Errorf("onramp: %d %v %.200s", code, err, body)
	}
	var o struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return err
	}
	code, body, err = call(c, addr, key, "POST", "/v1/payments/sandbox/deposits", []byte(`{"onramp_id":"`+o.Data.ID+`"}`))
	if err != nil || code >= 300 {
		return fmt.Errorf("deposit: %d %v %.200s", code, err, body)
	}
	return nil
}

func (f *conversionFlow) stop() (done, failed int64) {
	close(f.stopCh)
	f.wg.Wait()
	return f.done.Load(), f.failed.Load()
}
