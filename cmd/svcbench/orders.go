package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svc/cmd/internal/cli"
)

func init() {
	commands["orders"] = command{summary: "HTTP order placement load against svcd, in alternating rounds with a bare fasthttp server and a durable bare one (journal group commit)", run: runOrders}
	commands["bare"] = command{summary: "the same load against only the in-process bare fasthttp server (the ceiling)", run: runBare}
}

// ordersConfig is everything `svcbench orders` was asked to do.
type ordersConfig struct {
	URL           string
	Keys          []string
	KeysFrom      string // a file holding svcd --demo output ("API key:  ...")
	SeedMerchants int    // create (or reuse) this many bench merchants through the database
	DatabaseURL   string
	Conns         int
	Duration      time.Duration
	Warmup        time.Duration
	Mix           string  // place or place-cancel
	Rate          float64 // requests/s; 0 = closed loop
	MaxRequests   int64   // per run; 0 = only the duration bounds it
	Timeout       time.Duration
	CompareBare   bool
	Durable       bool     // also the durable bare server (the body through the journal's group commit)
	DurableDir    string   // its journal folder ("" = a temporary one)
	HalfPeak      bool     // after the closed-loop run, an open-loop run at half its rate
	Rounds        int      // bare+svcd pairs, alternated; medians reported
	Symbols       []string // connection i trades Symbols[i % len]
	Mid           int64    // mid price in price units (0.01 quote)
	Spread        int64    // ticks either side of mid an order is placed within
	Fund          bool
	CancelAtEnd   bool
	Plot          string
	FailOnErrors  bool
}

const (
	mixPlace       = "place"
	mixPlaceCancel = "place-cancel"
)

func defaultPlotPath() string {
	dir := os.Getenv("BENCH_OUT")
	if dir == "" {
		dir = filepath.Join("bench", "out")
	}
	return filepath.Join(dir, "orders-latency.png")
}

// parseOrdersFlags reads the flags of `svcbench orders` (bare: of `svcbench bare`, which
// needs no server or keys).
func parseOrdersFlags(args []string, bare bool, stderr io.Writer) (ordersConfig, error) {
	c := ordersConfig{}
	name := "svcbench orders"
	if bare {
		name = "svcbench bare"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var keys string
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "svcd base URL")
	fs.StringVar(&keys, "keys", os.Getenv("SVCBENCH_KEYS"), "comma-separated sandbox API keys (also SVCBENCH_KEYS); connections use them in turn")
	fs.StringVar(&c.KeysFrom, "keys-from", "", "file with svcd --demo output: every 'API key:' line in it is used")
	fs.IntVar(&c.SeedMerchants, "seed-merchants", 0, "create (or reuse) N bench merchants svcbench-N@svcbench.local in --database-url with a 10M/min rate limit and a fresh sandbox key each")
	c.DatabaseURL = os.Getenv("DATABASE_URL")
	fs.Var(cli.NewDSN(&c.DatabaseURL), "database-url", "PostgreSQL URL for --seed-merchants (also DATABASE_URL); shown with its password redacted")
	fs.IntVar(&c.Conns, "conns", 32, "keep-alive connections (one client goroutine each)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&c.Warmup, "warmup", time.Second, "unmeasured time before each run")
	fs.StringVar(&c.Mix, "mix", mixPlace, "place (limit orders only) or place-cancel (each resting order is cancelled by the next request of its connection)")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop at this many requests/s in total (latency from the scheduled time); 0 = closed loop")
	fs.Int64Var(&c.MaxRequests, "max-requests", 5_000_000, "upper bound on requests per run (0: the duration only)")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Second, "per-request timeout")
	fs.BoolVar(&c.CompareBare, "compare-bare", true, "run the same load against an in-process bare fasthttp server answering a fixed body, and print the ratio")
	fs.BoolVar(&c.Durable, "durable", true, "also run the same load against an in-process durable bare server: a bare fasthttp handler that appends each body to the project's file journal (group commit, fdatasync) and answers after the sync; ratios to it are printed")
	fs.StringVar(&c.DurableDir, "durable-dir", "", "the durable bare server's journal folder, emptied first (default: a temporary folder; give one on svcd's journal disk)")
	fs.BoolVar(&c.HalfPeak, "half-peak", false, "then run open loop against svcd at half the closed-loop peak and report its p99 (the 'p99 at half of the peak rate' figure)")
	fs.IntVar(&c.Rounds, "rounds", 1, "alternating bare/svcd rounds; medians are reported")
	var symbols string
	fs.StringVar(&symbols, "symbols", "USDT-NGN", "comma-separated trading pairs; connection i trades pair i mod n (each pair has its own engine runner; all share one journal group commit)")
	fs.Int64Var(&c.Mid, "mid", 150000, "mid price in price units (150000 = 1500.00)")
	fs.Int64Var(&c.Spread, "spread", 20, "orders are placed within this many ticks of mid; buys reach 2 ticks above mid and sells 2 below, so some match")
	fs.BoolVar(&c.Fund, "fund", true, "top up each key's sandbox balances first (POST /v1/trading/sandbox/fund)")
	fs.BoolVar(&c.CancelAtEnd, "cancel-at-end", true, "cancel each key's open orders on the symbol when done")
	fs.StringVar(&c.Plot, "plot", defaultPlotPath(), "latency distribution PNG ('' = none)")
	fs.BoolVar(&c.FailOnErrors, "fail-on-errors", true, "exit 1 when svcd answered anything but 2xx or a request failed")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	c.Keys = splitKeys(keys)
	c.Symbols = splitKeys(symbols)
	if len(c.Symbols) == 0 {
		return c, errors.New("--symbols is empty")
	}
	switch {
	case c.Conns < 1 || c.Conns > 10_000:
		return c, errors.New("--conns must be 1..10000")
	case c.Duration <= 0 || c.Duration > time.Hour:
		return c, errors.New("--duration must be in (0, 1h]")
	case c.Warmup < 0 || c.Warmup > 10*time.Minute:
		return c, errors.New("--warmup must be in [0, 10m]")
	case c.Mix != mixPlace && c.Mix != mixPlaceCancel:
		return c, fmt.Errorf("--mix must be %s or %s", mixPlace, mixPlaceCancel)
	case c.Rate < 0:
		return c, errors.New("--rate must be >= 0")
	case c.MaxRequests < 0:
		return c, errors.New("--max-requests must be >= 0")
	case c.Timeout <= 0:
		return c, errors.New("--timeout must be > 0")
	case c.Rounds < 1 || c.Rounds > 100:
		return c, errors.New("--rounds must be 1..100")
	case c.Mid <= 0 || c.Spread < 3 || c.Spread >= c.Mid:
		return c, errors.New("--mid must be > 0 and --spread in [3, mid)")
	case c.SeedMerchants < 0 || c.SeedMerchants > 100:
		return c, errors.New("--seed-merchants must be 0..100")
	}
	if bare {
		return c, nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return c, fmt.Errorf("--url must be http://host:port (got %q)", c.URL)
	}
	if c.SeedMerchants > 0 && c.DatabaseURL == "" {
		return c, errors.New("--seed-merchants needs --database-url (or DATABASE_URL)")
	}
	if len(c.Keys) == 0 && c.KeysFrom == "" && c.SeedMerchants == 0 {
		return c, errors.New("no API keys: give --keys, --keys-from (svcd --demo output) or --seed-merchants")
	}
	return c, nil
}

func splitKeys(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func runBare(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseOrdersFlags(args, true, stderr)
	if err != nil {
		return err
	}
	bare, err := startBare()
	if err != nil {
		return err
	}
	defer bare.Close()
	w := newWorkload(cfg, bare.Addr(), []string{"bare"})
	res := runLoad(context.Background(), "bare", w, cfg.Rate)
	printResult(stdout, res)
	return writePlot(cfg.Plot, stdout, []*runResult{res})
}

func runOrders(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseOrdersFlags(args, false, stderr)
	if err != nil {
		return err
	}
	keys, addr, err := prepareKeys(cfg, stdout)
	if err != nil {
		return err
	}
	mode := "closed loop"
	if cfg.Rate > 0 {
		mode = fmt.Sprintf("open loop at %.0f req/s", cfg.Rate)
	}
	fmt.Fprintf(stdout, "svcbench orders: %s, %d conns, %s (+%s warm-up), mix %s, %s, %d key(s), symbols %s, %d round(s)\n",
		cfg.URL, cfg.Conns, cfg.Duration, cfg.Warmup, cfg.Mix, mode, len(keys), strings.Join(cfg.Symbols, ","), cfg.Rounds)

	var bare *bareServer
	if cfg.CompareBare {
		if bare, err = startBare(); err != nil {
			return err
		}
		defer bare.Close()
	}
	var durable *durableServer
	if cfg.Durable {
		if durable, err = startDurable(cfg.DurableDir); err != nil {
			return fmt.Errorf("durable bare server: %w", err)
		}
		defer durable.Close()
		fmt.Fprintf(stdout, "%s\n", durable)
	}
	var svcRuns, bareRuns, durRuns []*runResult
	for r := 0; r < cfg.Rounds; r++ {
		if bare != nil {
			res := runLoad(context.Background(), "bare fasthttp", newWorkload(cfg, bare.Addr(), []string{"bare"}), cfg.Rate)
			printResult(stdout, res)
			bareRuns = append(bareRuns, res)
		}
		if durable != nil {
			res := runLoad(context.Background(), "durable bare", newWorkload(cfg, durable.Addr(), []string{"bare"}), cfg.Rate)
			printResult(stdout, res)
			durRuns = append(durRuns, res)
		}
		res := runLoad(context.Background(), "svcd", newWorkload(cfg, addr, keys), cfg.Rate)
		printResult(stdout, res)
		svcRuns = append(svcRuns, res)
		if bare != nil {
			fmt.Fprintf(stdout, "round %d: svcd/bare = %.1f%%", r+1, 100*res.RPS()/bareRuns[r].RPS())
			if durable != nil {
				fmt.Fprintf(stdout, ", svcd/durable bare = %.1f%% (p99 %.2fx)", 100*res.RPS()/durRuns[r].RPS(),
					float64(res.Summary().P99)/float64(max(1, durRuns[r].Summary().P99)))
			}
			fmt.Fprintf(stdout, " (load %s)\n\n", loadAvg())
		}
	}
	svc := medianRun(svcRuns)
	plotRuns := []*runResult{svc}
	fmt.Fprintf(stdout, "== svcd: %.0f req/s (median of %d), p50 %s p99 %s p99.9 %s\n", svc.RPS(), len(svcRuns),
		fmtMicros(svc.Summary().P50), fmtMicros(svc.Summary().P99), fmtMicros(svc.Summary().P999))
	if bare != nil {
		b := medianRun(bareRuns)
		plotRuns = append(plotRuns, b)
		fmt.Fprintf(stdout, "== bare fasthttp: %.0f req/s (median of %d), p50 %s p99 %s p99.9 %s\n", b.RPS(), len(bareRuns),
			fmtMicros(b.Summary().P50), fmtMicros(b.Summary().P99), fmtMicros(b.Summary().P999))
		fmt.Fprintf(stdout, "== ratio svcd/bare: %.1f%% (median of the per-round ratios: %.1f%%)\n",
			100*svc.RPS()/b.RPS(), 100*medianRatio(svcRuns, bareRuns))
	}
	if durable != nil {
		d := medianRun(durRuns)
		plotRuns = append(plotRuns, d)
		fmt.Fprintf(stdout, "== durable bare: %.0f req/s (median of %d), p50 %s p99 %s p99.9 %s\n", d.RPS(), len(durRuns),
			fmtMicros(d.Summary().P50), fmtMicros(d.Summary().P99), fmtMicros(d.Summary().P999))
		if bare != nil {
			fmt.Fprintf(stdout, "== ratio durable bare/bare: %.1f%% (median of the per-round ratios; what the group-committed fdatasync costs)\n",
				100*medianRatio(durRuns, bareRuns))
		}
		fmt.Fprintf(stdout, "== ratio svcd/durable bare: %.1f%% (median of the per-round ratios; target >= 80%%)\n", 100*medianRatio(svcRuns, durRuns))
		fmt.Fprintf(stdout, "== p99 svcd/durable bare: %.2fx (median of the per-round ratios; target <= 2x)\n", medianP99Ratio(svcRuns, durRuns))
	}
	if len(svcRuns) > 1 {
		first, last := svcRuns[0].RPS(), svcRuns[len(svcRuns)-1].RPS()
		fmt.Fprintf(stdout, "== decay: last round %.0f req/s is %.1f%% of the first (%.0f req/s); target >= 90%%\n", last, 100*last/first, first)
	}
	var failed int64
	for _, r := range svcRuns {
		failed += r.Failures()
	}
	if cfg.HalfPeak {
		rate := svc.RPS() / 2
		fmt.Fprintf(stdout, "\nhalf-peak: open loop at %.0f req/s (half of %.0f)\n", rate, svc.RPS())
		half := runLoad(context.Background(), "svcd @ half peak", newWorkload(cfg, addr, keys), rate)
		printResult(stdout, half)
		failed += half.Failures()
		s := half.Summary()
		fmt.Fprintf(stdout, "== p99 at half of the peak rate (%.0f req/s offered, %.0f done): %s (target <= 5ms); p50 %s p99.9 %s\n",
			rate, half.RPS(), fmtMicros(s.P99), fmtMicros(s.P50), fmtMicros(s.P999))
		plotRuns = append(plotRuns, half)
	}
	if cfg.CancelAtEnd {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cancelAll(ctx, addr, keys, cfg.Symbols, stdout)
		cancel()
	}
	if err := writePlot(cfg.Plot, stdout, plotRuns); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "\n!!! svcd: %d requests failed or answered non-2xx (see the status lines above) !!!\n", failed)
		if cfg.FailOnErrors {
			return fmt.Errorf("%d failed or non-2xx requests", failed)
		}
	}
	return nil
}
