// Command journal benchmarks persistence/journal end to end: group commit
// throughput and ack latency of the file and Kafka (kfake, in process)
// journals under many concurrent appenders, replay speed, and one fdatasync
// for reference. Each figure is the median of -runs runs.
//
//	go run ./bench/journal -runs 5
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"svc/persistence/journal"
)

type config struct {
	runs       int
	duration   time.Duration
	appenders  int
	minBatch   int
	maxBatch   int
	minPayload int
	maxPayload int
	replay     int
	seed       uint64
	dir        string
	which      string
	epoch      uint64
	guard      bool
}

func main() {
	var c config
	flag.IntVar(&c.runs, "runs", 5, "runs per figure; the median is reported")
	flag.DurationVar(&c.duration, "duration", 3*time.Second, "length of one append run")
	flag.IntVar(&c.appenders, "appenders", 64, "concurrent appenders (symbol runners)")
	flag.IntVar(&c.minBatch, "min-batch", 1, "smallest batch, events")
	flag.IntVar(&c.maxBatch, "max-batch", 64, "largest batch, events")
	flag.IntVar(&c.minPayload, "min-payload", 64, "smallest event, bytes")
	flag.IntVar(&c.maxPayload, "max-payload", 128, "largest event, bytes")
	flag.IntVar(&c.replay, "replay-events", 2_000_000, "events in the replay run")
	flag.Uint64Var(&c.seed, "seed", 1, "generator seed")
	flag.StringVar(&c.dir, "dir", "", "scratch directory (default: a temporary one)")
	flag.StringVar(&c.which, "only", "all", "all, fsync, file, kafka or replay")
	flag.Uint64Var(&c.epoch, "epoch", 0, "stamp this epoch on every record (0: none, the original frames)")
	flag.BoolVar(&c.guard, "guard", false, "check a lease-like guard (time.Now against a deadline) before and after each group")
	flag.Parse()
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "journal bench:", err)
		os.Exit(1)
	}
}

func run(c config, out io.Writer) error {
	if c.dir == "" {
		d, err := os.MkdirTemp("", "journal-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	fmt.Fprintf(out, "appenders=%d batch=%d-%d events payload=%d-%d bytes duration=%v runs=%d seed=%d epoch=%d guard=%v\n",
		c.appenders, c.minBatch, c.maxBatch, c.minPayload, c.maxPayload, c.duration, c.runs, c.seed, c.epoch, c.guard)
	var guard func() error
	if c.guard {
		valid := time.Now().Add(24 * time.Hour)
		guard = func() error {
			if time.Now().After(valid) {
				return fmt.Errorf("expired")
			}
			return nil
		}
	}
	do := func(name string) bool { return c.which == "all" || c.which == name }
	if do("fsync") {
		var p50, p99 []float64
		for i := range c.runs {
			a, b, err := fsyncRef(filepath.Join(c.dir, fmt.Sprintf("fsync-%d", i)))
			if err != nil {
				return err
			}
			p50, p99 = append(p50, a), append(p99, b)
		}
		fmt.Fprintf(out, "fdatasync (1.8 KB write + fdatasync, 2000x): p50 %.0f µs, p99 %.0f µs\n", median(p50), median(p99))
	}
	if do("file") {
		res, err := repeat(c, func(i int) (journal.Journal, func(), error) {
			j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(c.dir, fmt.Sprintf("file-%d", i)), Epoch: c.epoch, Guard: guard})
			return j, func() {}, err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "file group commit: %s\n", res)
	}
	if do("kafka") {
		res, err := repeat(c, func(i int) (journal.Journal, func(), error) {
			cl, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
			if err != nil {
				return nil, nil, err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			j, err := journal.OpenKafka(ctx, journal.KafkaOptions{Brokers: cl.ListenAddrs(), Topic: "journal", Dev: true, Epoch: c.epoch, Guard: guard})
			if err != nil {
				cl.Close()
				return nil, nil, err
			}
			return j, cl.Close, nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "kafka (kfake in process) group commit: %s\n", res)
	}
	if do("replay") {
		var rates []float64
		dir := filepath.Join(c.dir, "replay")
		if err := fill(c, dir); err != nil {
			return err
		}
		for range c.runs {
			r, err := replay(dir, c.replay)
			if err != nil {
				return err
			}
			rates = append(rates, r)
		}
		fmt.Fprintf(out, "file replay of %d events (page cache warm): %.2f M events/s\n", c.replay, median(rates)/1e6)
	}
	return nil
}

type result struct {
	rate, p50, p99, p999 []float64
}

func (r result) String() string {
	return fmt.Sprintf("%.2f M events/s, ack p50 %.0f µs, p99 %.0f µs, p99.9 %.0f µs (runs: %s M events/s)",
		median(r.rate)/1e6, median(r.p50), median(r.p99), median(r.p999), fmtRates(r.rate))
}

func fmtRates(r []float64) string {
	s := ""
	for i, v := range r {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", v/1e6)
	}
	return s
}

func repeat(c config, open func(run int) (journal.Journal, func(), error)) (result, error) {
	var res result
	for i := range c.runs {
		j, cleanup, err := open(i)
		if err != nil {
			return res, err
		}
		if err := j.Start(); err != nil {
			return res, err
		}
		rate, h, err := appendRun(c, j, uint64(i))
		j.Close()
		cleanup()
		if err != nil {
			return res, err
		}
		res.rate = append(res.rate, rate)
		res.p50 = append(res.p50, float64(h.ValueAtQuantile(50))/1e3)
		res.p99 = append(res.p99, float64(h.ValueAtQuantile(99))/1e3)
		res.p999 = append(res.p999, float64(h.ValueAtQuantile(99.9))/1e3)
	}
	return res, nil
}

// appendRun runs c.appenders closed-loop appenders for c.duration, each
// appending batches of random size and payloads of random length from a
// fixed seed, and returns events/s and the ack latency histogram (ns).
func appendRun(c config, j journal.Journal, run uint64) (float64, *hdrhistogram.Histogram, error) {
	var (
		events atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		first  error
	)
	all := hdrhistogram.New(1, int64(30*time.Second), 3)
	deadline := time.Now().Add(c.duration)
	start := time.Now()
	for a := range c.appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(c.seed, run<<32|uint64(a)))
			h := hdrhistogram.New(1, int64(30*time.Second), 3)
			pool := make([]byte, c.maxBatch*c.maxPayload)
			for i := range pool {
				pool[i] = byte(rng.Uint32())
			}
			batch := make([][]byte, 0, c.maxBatch)
			var n int64
			for time.Now().Before(deadline) {
				batch = batch[:0]
				size := c.minBatch + rng.IntN(c.maxBatch-c.minBatch+1)
				for k := range size {
					l := c.minPayload + rng.IntN(c.maxPayload-c.minPayload+1)
					batch = append(batch, pool[k*c.maxPayload:k*c.maxPayload+l])
				}
				t0 := time.Now()
				if _, err := j.Append(context.Background(), batch); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				h.RecordValue(int64(time.Since(t0)))
				n += int64(size)
			}
			events.Add(n)
			mu.Lock()
			all.Merge(h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(events.Load()) / time.Since(start).Seconds(), all, first
}

func fsyncRef(path string) (p50, p99 float64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, 16*112)
	h := hdrhistogram.New(1, int64(10*time.Second), 3)
	for range 2000 {
		if _, err := f.Write(buf); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, 0, err
		}
		h.RecordValue(int64(time.Since(t0)))
	}
	return float64(h.ValueAtQuantile(50)) / 1e3, float64(h.ValueAtQuantile(99)) / 1e3, nil
}

// fill writes c.replay events in batches of 1-64 from 64 appenders.
func fill(c config, dir string) error {
	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		return err
	}
	if err := j.Start(); err != nil {
		return err
	}
	defer j.Close()
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(c.replay))
	errs := make(chan error, c.appenders)
	for a := range c.appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(c.seed, 1<<40|uint64(a)))
			payload := make([]byte, c.maxPayload)
			batch := make([][]byte, 0, c.maxBatch)
			for {
				size := int64(c.minBatch + rng.IntN(c.maxBatch-c.minBatch+1))
				if rem := left.Add(-size); rem < 0 {
					size += rem
					if size <= 0 {
						return
					}
				}
				batch = batch[:0]
				for range size {
					batch = append(batch, payload[:c.minPayload+rng.IntN(c.maxPayload-c.minPayload+1)])
				}
				if _, err := j.Append(context.Background(), batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func replay(dir string, want int) (float64, error) {
	t0 := time.Now()
	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		return 0, err
	}
	defer j.Close()
	n := 0
	err = j.ReadFrom(context.Background(), 1, func(uint64, []byte) error { n++; return nil })
	if err != nil {
		return 0, err
	}
	if n != want {
		return 0, fmt.Errorf("replayed %d events, want %d", n, want)
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
