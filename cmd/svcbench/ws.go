package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
	"svc/gateway/ws"
)

func init() {
	commands["ws"] = command{summary: "WebSocket order-book fan-out: subscribers on one symbol while orders flow", run: runWS}
	commands["ws-clients"] = command{summary: "(internal) the subscriber process of `svcbench ws`", run: runWSClients}
}

const wsBenchKey = "svc_sk_test_bench"
const wsSymbol = "USDT-NGN"

// benchJournal stands in for the journal: it counts and hands every batch to the hub, as
// svcd's eventlog.OnDurable does (no disk, so the figures isolate market data).
type benchJournal struct {
	n   atomic.Uint64
	pub func([]engine.Event)
}

func (j *benchJournal) Append(b []engine.Event) (uint64, error) {
	n := j.n.Add(uint64(len(b)))
	if j.pub != nil {
		j.pub(b)
	}
	return n, nil
}

type benchAuth struct{ p api.Principal }

// Revalidate keeps every bench stream (as gateway/auth's does for a valid key, from its cache).
func (a benchAuth) Revalidate(*fasthttp.RequestCtx, api.Principal, [32]byte) error { return nil }

func (a benchAuth) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	if string(ctx.Request.Header.Peek("X-Api-Key")) != wsBenchKey {
		return api.Principal{}, api.NewError(api.CodeUnauthorized, "bad key")
	}
	return a.p, nil
}

func raiseNoFile() uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil {
		// The hub's and the bare broadcaster's subscribers are open at once (2 x 10,000
		// sockets and their peers): ask for more than the usual hard limit of 20,000 first
		// (allowed for root), and settle for the hard limit.
		if r.Max < 1<<18 {
			big := syscall.Rlimit{Cur: 1 << 18, Max: 1 << 18}
			if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &big) == nil {
				return big.Cur
			}
		}
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	}
	return r.Cur
}

func runWS(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ws", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connsList := fs.String("conns", "1000,10000", "subscriber counts to run, comma separated")
	dur := fs.Duration("duration", 10*time.Second, "order flow per measurement")
	traders := fs.Int("traders", 4, "goroutines submitting orders")
	rate := fs.Float64("rate", 0, "orders/s in total (0: as fast as possible)")
	flush := fs.Duration("flush", 20*time.Millisecond, "hub FlushEvery (diff conflation)")
	rounds := fs.Int("rounds", 3, "rounds per subscriber count (medians reported)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the first round per count and interval to FILE.N (FILE.N100ms, ...)")
	withBare := fs.Bool("bare", true, "alternate each round with the bare broadcaster (the anchor): the same diff frames at the same interval to as many subscribers, sent by a minimal server")
	paired := fs.Bool("paired", true, "before each round, the same order flow with the subscribers unsubscribed (their sockets open and idle): the orders' ratio is then a same-round one")
	intervalList := fs.String("interval", "default", "the subscribers' order-book update intervals to run, comma separated: default (a diff per flush), 100ms, 1000ms (orderbook:SYMBOL@100ms, ...)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	nofile := raiseNoFile()
	type interval struct {
		name, suffix string
		every        time.Duration // the bare broadcaster's tick
	}
	var intervals []interval
	for _, s := range strings.Split(*intervalList, ",") {
		switch s = strings.TrimSpace(s); s {
		case "default", "":
			intervals = append(intervals, interval{"default", "", *flush})
		case "100ms", "1000ms":
			d, _ := time.ParseDuration(s)
			intervals = append(intervals, interval{"@" + s, "@" + s, d})
		default:
			return fmt.Errorf("--interval: %q (default, 100ms or 1000ms)", s)
		}
	}
	var counts []int
	for _, s := range strings.Split(*connsList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("--conns: %q", s)
		}
		counts = append(counts, n)
	}

	j := &benchJournal{}
	eng, err := engine.New(engine.Config{Journal: j, RingSize: 1 << 14})
	if err != nil {
		return err
	}
	if err := eng.Start(); err != nil {
		return err
	}
	defer eng.Stop()
	accts := make([]engine.AccountID, *traders)
	for i := range accts {
		accts[i] = engine.AccountID(uuid.New())
		for k, a := range []engine.Asset{engine.NGN, engine.USDT} {
			var tid engine.TransferID
			tid[0], tid[1] = byte(i+1), byte(k+1)
			if _, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: accts[i], Asset: a, Amount: 1 << 60, TransferID: tid}); err != nil {
				return err
			}
		}
	}
	hub := ws.NewHub(ws.HubConfig{Env: api.Sandbox, Exchange: eng, FlushEvery: *flush, Queue: 1 << 16})
	j.pub = hub.Publish
	if err := hub.Seed(context.Background(), nil); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go hub.Run(ctx)
	srv := ws.NewServer(ws.Config{Hubs: map[api.Environment]*ws.Hub{api.Sandbox: hub},
		Auth: benchAuth{api.Principal{MerchantID: uuid.New(), Environment: api.Sandbox, Method: api.ByAPIKey}}})
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()
	rt := router.New()
	srv.Register(rt, nil)
	hs := &fasthttp.Server{Handler: rt.Handler, Concurrency: 1 << 20}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Shutdown()
	url := "ws://" + ln.Addr().String() + "/v1/ws"

	cpu := cpuModel()
	fmt.Fprintf(stdout, "svcbench ws: nproc %d, %s, GOMAXPROCS %d, nofile %d, %s, flush %s, %d traders, order flow %s per run, %d rounds, load average %s\n",
		runtime.NumCPU(), cpu, runtime.GOMAXPROCS(0), nofile, time.Now().UTC().Format("2006-01-02 15:04Z"), *flush, *traders, *dur, *rounds, loadAvg())

	drive := func(d time.Duration) (orders int64) {
		var n atomic.Int64
		dctx, dcancel := context.WithTimeout(context.Background(), d)
		defer dcancel()
		var wg sync.WaitGroup
		per := 0.0
		if *rate > 0 {
			per = *rate / float64(len(accts))
		}
		for i, acct := range accts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(i), 99))
				var open []engine.OrderID
				start := time.Now()
				var sent int64
				for dctx.Err() == nil {
					if per > 0 {
						due := start.Add(time.Duration(float64(sent) / per * float64(time.Second)))
						if w := time.Until(due); w > 0 {
							time.Sleep(w)
						}
					}
					cmd := engine.Command{Kind: engine.CmdPlace, Symbol: wsSymbol, Account: acct, Time: time.Now().UnixNano()}
					if len(open) > 50 || (len(open) > 0 && r.IntN(3) == 0) {
						k := r.IntN(len(open))
						cmd = engine.Command{Kind: engine.CmdCancel, Account: acct, OrderID: open[k], Time: cmd.Time}
						open[k] = open[len(open)-1]
						open = open[:len(open)-1]
					} else {
						cmd.OrderID = engine.OrderID(uuid.New())
						cmd.Type, cmd.Side = engine.Limit, engine.Side(1+r.IntN(2))
						off := engine.Price(1 + r.IntN(20))
						if cmd.Side == engine.Buy {
							cmd.Price = 150000 - off
						} else {
							cmd.Price = 150000 + off
						}
						if r.IntN(10) == 0 { // sometimes cross
							cmd.Price = 150000 + (150000 - cmd.Price)
						}
						cmd.Qty = engine.Qty(100 * (1 + r.IntN(5)))
						open = append(open, cmd.OrderID)
					}
					if _, err := eng.Submit(&cmd); err == nil {
						n.Add(1)
						sent++
					}
				}
			}()
		}
		wg.Wait()
		return n.Load()
	}

	// Warm up, and meanwhile record the levels of the diffs the hub sends on channel: the
	// bare broadcaster sends frames of the same sizes.
	capture := func(channel string, d time.Duration) (levels [][]byte) {
		capt, err := ws.Dial(url, wsBenchKey)
		if err != nil {
			drive(d)
			return nil
		}
		_ = capt.Subscribe(channel)
		got := make(chan struct{})
		go func() {
			defer close(got)
			for len(levels) < 4096 {
				_, m, err := capt.Conn().ReadMessage()
				if err != nil {
					return
				}
				if l := diffLevels(m); l != nil {
					levels = append(levels, l)
				}
			}
		}()
		drive(d)
		_ = capt.Close()
		<-got
		return levels
	}
	capture("orderbook:"+wsSymbol, time.Second)
	type row struct {
		interval                     string
		conns                        int
		orders, msgs, p50, p99, pmax []float64
		memPerConn                   float64
		closed                       int64
		perCPU, bMsgs, bP50, bP99    []float64 // the hub's messages per server CPU-second; the bare broadcaster's figures
		perFanCPU                    []float64 // the hub's messages per CPU-second of the server less its orders' (at the no-subscriber cost)
		base                         []float64 // orders/s of the same round with the subscribers unsubscribed (--paired)
		bPerCPU                      []float64
	}
	baseline := []float64{}
	var baseCPU, baseOrders float64
	for r := 0; r < *rounds; r++ {
		cpu0 := procCPU(os.Getpid())
		n := drive(*dur)
		baseCPU += procCPU(os.Getpid()) - cpu0
		baseOrders += float64(n)
		baseline = append(baseline, float64(n)/dur.Seconds())
	}
	// What an order costs the server process without subscribers: a hub round's CPU less
	// its orders at this cost is what its fan-out cost (an estimate: the order path's cost
	// per order is not constant under contention).
	cpuPerOrder := baseCPU / max(baseOrders, 1)
	fmt.Fprintf(stdout, "no subscribers: orders/s %v (median %.0f); server CPU %.2f µs per order\n", rounded(baseline), median(baseline), cpuPerOrder*1e6)

	var rows []row
	for _, iv := range intervals {
		channel := "orderbook:" + wsSymbol + iv.suffix
		var bare *bareProcess
		if *withBare {
			levels := capture(channel, max(time.Second, 3*iv.every))
			if bare, err = startBareProcess(iv.every, channel, levels, stderr); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: bare broadcaster on %s every %s: %d captured diff bodies, %d bytes on average\n", channel, bare.URL(), iv.every, len(levels), avgLen(levels))
		}
		for _, n := range counts {
			rw := row{conns: n, interval: iv.name}
			before := memInUse()
			hubClients, err := startWSClients(url, n, channel, "ws-clients", stderr)
			if err != nil {
				return err
			}
			child, in, readLine := hubClients.cmd, hubClients.in, hubClients.read
			line, err := readLine() // "ready N"
			if err != nil {
				return err
			}
			time.Sleep(time.Second)
			after := memInUse()
			rw.memPerConn = float64(after-before) / float64(n)
			fmt.Fprintf(stdout, "%d subscribers of %s connected (%s); server memory in use +%.1f MB = %.1f KB per connection (%d open; %s)\n",
				n, channel, line, float64(after-before)/1e6, rw.memPerConn/1024, srv.Connections(), memSplit())
			// The bare broadcaster's subscribers connect after the hub's memory was measured.
			var bChild *exec.Cmd
			var bIn io.WriteCloser
			var bRead func() (string, error)
			if bare != nil {
				bareClients, err := startWSClients(bare.URL(), n, channel, "ws-clients (bare)", stderr)
				if err != nil {
					return err
				}
				bChild, bIn, bRead = bareClients.cmd, bareClients.in, bareClients.read
				line, err := bRead()
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%d subscribers of the bare broadcaster connected (%s)\n", n, line)
			}
			for r := 0; r < *rounds; r++ {
				if *paired {
					// The same round without subscribers: they unsubscribe (their sockets stay
					// open and idle), the traders run, they subscribe again.
					fmt.Fprintln(in, "pause")
					if _, err := readLine(); err != nil {
						return err
					}
					time.Sleep(300 * time.Millisecond)
					base := drive(*dur)
					rw.base = append(rw.base, float64(base)/dur.Seconds())
					fmt.Fprintln(in, "resume")
					if _, err := readLine(); err != nil {
						return err
					}
					time.Sleep(300 * time.Millisecond)
					fmt.Fprintf(stdout, "  round %d, subscribers unsubscribed: orders/s %.0f; load %s\n", r+1, float64(base)/dur.Seconds(), loadAvg())
				}
				cpuSrv0, cpuCli0 := procCPU(os.Getpid()), procCPU(child.Process.Pid)
				blocked0 := srv.Blocked()
				fmt.Fprintln(in, "start")
				if *cpuProfile != "" && r == 0 {
					f, err := os.Create(fmt.Sprintf("%s.%d%s", *cpuProfile, n, strings.TrimPrefix(iv.suffix, "@")))
					if err == nil {
						_ = pprof.StartCPUProfile(f)
					}
				}
				ord := drive(*dur)
				cpuSrv, cpuCli := procCPU(os.Getpid())-cpuSrv0, procCPU(child.Process.Pid)-cpuCli0
				if *cpuProfile != "" && r == 0 {
					pprof.StopCPUProfile()
				}
				fmt.Fprintln(in, "stop")
				line, err := readLine()
				if err != nil {
					return err
				}
				var st wsStats
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					return fmt.Errorf("ws-clients: %q: %w", line, err)
				}
				rw.orders = append(rw.orders, float64(ord)/dur.Seconds())
				rw.msgs = append(rw.msgs, float64(st.Messages)/st.Seconds)
				rw.p50, rw.p99, rw.pmax = append(rw.p50, st.P50ms), append(rw.p99, st.P99ms), append(rw.pmax, st.MaxMs)
				rw.closed = st.Closed
				rw.perCPU = append(rw.perCPU, float64(st.Messages)/max(cpuSrv, 0.01))
				rw.perFanCPU = append(rw.perFanCPU, float64(st.Messages)/max(cpuSrv-float64(ord)*cpuPerOrder, cpuSrv/20, 0.01))
				fmt.Fprintf(stdout, "  round %d: orders/s %.0f, messages/s %.0f, delay p50 %.1f ms p99 %.1f ms max %.1f ms, closed %d, gaps %d, slow consumers %d, hub drops %d; CPU cores used: server %.2f, subscribers %.2f; %.0f messages per server CPU-second; socket-full waits %d; load %s\n",
					r+1, float64(ord)/dur.Seconds(), float64(st.Messages)/st.Seconds, st.P50ms, st.P99ms, st.MaxMs, st.Closed, st.Gaps, srv.SlowConsumers(), hub.Dropped(),
					cpuSrv/dur.Seconds(), cpuCli/dur.Seconds(), float64(st.Messages)/max(cpuSrv, 0.01), srv.Blocked()-blocked0, loadAvg())
				if bare == nil {
					continue
				}
				// The anchor's round: no orders; its own process's CPU is the bare broadcaster's.
				cpuSrv0, cpuCli0 = procCPU(bare.Pid()), procCPU(bChild.Process.Pid)
				fmt.Fprintln(bIn, "start")
				bare.On()
				time.Sleep(*dur)
				bst, err := bare.Off()
				if err != nil {
					return err
				}
				cpuSrv, cpuCli = procCPU(bare.Pid())-cpuSrv0, procCPU(bChild.Process.Pid)-cpuCli0
				fmt.Fprintln(bIn, "stop")
				if line, err = bRead(); err != nil {
					return err
				}
				var bs wsStats
				if err := json.Unmarshal([]byte(line), &bs); err != nil {
					return fmt.Errorf("ws-clients (bare): %q: %w", line, err)
				}
				rw.bMsgs = append(rw.bMsgs, float64(bs.Messages)/bs.Seconds)
				rw.bP50, rw.bP99 = append(rw.bP50, bs.P50ms), append(rw.bP99, bs.P99ms)
				rw.bPerCPU = append(rw.bPerCPU, float64(bs.Messages)/max(cpuSrv, 0.01))
				fmt.Fprintf(stdout, "  round %d, bare broadcaster: messages/s %.0f, delay p50 %.1f ms p99 %.1f ms max %.1f ms, closed %d, gaps %d, dropped slow %d, snapshots for lagging readers %d, failed accepts/handshakes %d; CPU cores used: server %.2f, subscribers %.2f; %.0f messages per server CPU-second; hub/bare per CPU-second %.1f%%, p99 %.2fx; load %s\n",
					r+1, float64(bs.Messages)/bs.Seconds, bs.P50ms, bs.P99ms, bs.MaxMs, bs.Closed, bs.Gaps, bst.Slow, bst.Conflated, bst.HandshakeErrors, cpuSrv/dur.Seconds(), cpuCli/dur.Seconds(),
					float64(bs.Messages)/max(cpuSrv, 0.01), 100*rw.perCPU[r]/rw.bPerCPU[r], st.P99ms/max(bs.P99ms, 0.001), loadAvg())
			}
			if bChild != nil {
				_ = bIn.Close()
				_ = bChild.Process.Kill() // its connections are the bare server's: closing them from here is the quickest
				_ = bChild.Wait()
			}
			_ = in.Close()
			_ = child.Wait()
			rows = append(rows, rw)
			for srv.Connections() > 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if bare != nil {
			bare.Close()
		}
	}
	fmt.Fprintf(stdout, "load average at the end: %s\n", loadAvg())
	fmt.Fprintf(stdout, "\n| interval | subscribers | messages/s delivered | p50 delay | p99 delay | memory per connection | orders/s | vs no subscribers | vs the same round unsubscribed |\n|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(stdout, "| - | 0 | - | - | - | - | %.0f | 100%% | |\n", median(baseline))
	for _, rw := range rows {
		same := "-"
		if len(rw.base) > 0 {
			same = fmt.Sprintf("%.0f%% (unsubscribed %.0f)", 100*medianOfRatios(rw.orders, rw.base), median(rw.base))
		}
		fmt.Fprintf(stdout, "| %s | %d | %.0f | %.1f ms | %.1f ms | %.1f KB | %.0f | %.0f%% | %s |\n", rw.interval, rw.conns, median(rw.msgs), median(rw.p50), median(rw.p99),
			rw.memPerConn/1024, median(rw.orders), 100*median(rw.orders)/median(baseline), same)
	}
	if *withBare {
		fmt.Fprintf(stdout, "\n| interval | subscribers | hub msgs per server CPU-s | bare msgs per server CPU-s | hub/bare | hub msgs per fan-out CPU-s (less its orders) | hub/bare, fan-out only | hub p99 | bare p99 | p99 hub/bare | bare messages/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, rw := range rows {
			fmt.Fprintf(stdout, "| %s | %d | %.0f | %.0f | %.1f%% | %.0f | %.1f%% | %.1f ms | %.1f ms | %.2fx | %.0f |\n", rw.interval, rw.conns, median(rw.perCPU), median(rw.bPerCPU),
				100*medianOfRatios(rw.perCPU, rw.bPerCPU), median(rw.perFanCPU), 100*medianOfRatios(rw.perFanCPU, rw.bPerCPU),
				median(rw.p99), median(rw.bP99), medianOfRatios(rw.p99, rw.bP99), median(rw.bMsgs))
		}
	}
	for _, rw := range rows {
		if len(rw.base) > 0 {
			fmt.Fprintf(stdout, "== ws %d subscribers, interval %s: orders %.1f%% of the same round unsubscribed (median of round ratios; target >= 60%%)\n", rw.conns, rw.interval, 100*medianOfRatios(rw.orders, rw.base))
		}
		fmt.Fprintf(stdout, "== ws %d subscribers, interval %s: orders %.1f%% of no subscribers (the rounds before any subscriber; target >= 60%%)\n", rw.conns, rw.interval, 100*median(rw.orders)/median(baseline))
		if *withBare {
			fmt.Fprintf(stdout, "== ws %d subscribers, interval %s: messages per server CPU-second, hub/bare broadcaster %.1f%% (target >= 80%%)\n", rw.conns, rw.interval, 100*medianOfRatios(rw.perCPU, rw.bPerCPU))
			fmt.Fprintf(stdout, "== ws %d subscribers, interval %s: p99 delay hub/bare broadcaster %.2fx (%.1f ms / %.1f ms; target <= 2x)\n", rw.conns, rw.interval, medianOfRatios(rw.p99, rw.bP99), median(rw.p99), median(rw.bP99))
		}
	}
	return nil
}

// procCPU is the user+system CPU time of process pid in seconds (/proc/PID/stat).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks (USER_HZ = 100 on Linux)
}

// loadAvg is the first three fields of /proc/loadavg (the box is shared: record it).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func memInUse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse + m.MSpanInuse + m.MCacheInuse
}

func memSplit() string {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return fmt.Sprintf("heap %.1f MB, stacks %.1f MB, goroutines %d", float64(m.HeapInuse)/1e6, float64(m.StackInuse)/1e6, runtime.NumGoroutine())
}

func rounded(v []float64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "cpu unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.IndexByte(l, ':'); i >= 0 {
				return strings.TrimSpace(l[i+1:])
			}
		}
	}
	return "cpu unknown"
}

type wsStats struct {
	Messages int64   `json:"messages"`
	Seconds  float64 `json:"seconds"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	Closed   int64   `json:"closed"`
	Gaps     int64   `json:"gaps"`
}

// runWSClients is the subscriber process: n connections on orderbook:USDT-NGN, each
// keeping a local book; "start" and "stop" on stdin bound a measurement, whose stats go
// to stdout as one JSON line. Delay = receipt time - the diff's timestamp (the engine
// event's time, unix ms), so it includes up to 1 ms of truncation.
func runWSClients(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ws-clients", flag.ContinueOnError)
	url := fs.String("url", "", "ws URL")
	n := fs.Int("n", 1000, "connections")
	channel := fs.String("channel", "orderbook:"+wsSymbol, "the order-book channel to subscribe to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raiseNoFile()
	var (
		measuring atomic.Bool
		msgs      atomic.Int64
		closed    atomic.Int64
		gaps      atomic.Int64
		shards    [64]struct {
			sync.Mutex
			h *hdrhistogram.Histogram // microseconds
		}
		ready   sync.WaitGroup
		dialSem = make(chan struct{}, 64)
	)
	for i := range shards {
		shards[i].h = hdrhistogram.New(1, 60_000_000, 3)
	}
	// The connections, for pause and resume (gorilla allows one writer at a time: each
	// connection's writes go under its mutex).
	type client struct {
		mu sync.Mutex
		c  *ws.Client
	}
	var (
		clientsMu sync.Mutex
		clients   []*client
	)
	ready.Add(*n)
	for i := 0; i < *n; i++ {
		sh := &shards[i%len(shards)]
		go func() {
			dialSem <- struct{}{}
			var c *ws.Client
			var err error
			for try := 0; try < 20; try++ {
				if c, err = ws.Dial(*url, wsBenchKey); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			<-dialSem
			if err != nil {
				fmt.Fprintln(stderr, "dial:", err)
				closed.Add(1)
				ready.Done()
				return
			}
			// Light client: each message is read into a reused buffer and only its
			// sequences and timestamp are looked at, so the subscriber process leaves the
			// CPU to the server (a full JSON decode per message would dominate on 2 cores).
			conn := c.Conn()
			cl := &client{c: c}
			clientsMu.Lock()
			clients = append(clients, cl)
			clientsMu.Unlock()
			cl.mu.Lock()
			_ = c.Subscribe(*channel)
			cl.mu.Unlock()
			buf := make([]byte, 0, 4096)
			var last uint64
			once := false
			for {
				_, r, err := conn.NextReader()
				if err != nil {
					if n := closed.Load(); n < 3 {
						fmt.Fprintln(stderr, "ws-clients: connection ended:", err)
					}
					break
				}
				buf = buf[:0]
				for {
					if len(buf) == cap(buf) {
						buf = append(buf, 0)[:len(buf)]
					}
					k, err := r.Read(buf[len(buf):cap(buf)])
					buf = buf[:len(buf)+k]
					if err != nil {
						break
					}
				}
				switch msgType(buf) {
				case "snapshot":
					last = jsonUint(buf, `"sequence":`)
					if !once {
						once = true
						ready.Done()
					}
				case "diff":
					first, l := jsonUint(buf, `"first_sequence":`), jsonUint(buf, `"last_sequence":`)
					if l <= last {
						continue
					}
					if first > last+1 { // a gap: resync
						gaps.Add(1)
						cl.mu.Lock()
						_ = c.Subscribe(*channel)
						cl.mu.Unlock()
					}
					last = l
					if measuring.Load() {
						msgs.Add(1)
						d := time.Now().UnixMicro() - int64(jsonUint(buf, `"timestamp":`))*1000
						sh.Lock()
						_ = sh.h.RecordValue(max(d, 1))
						sh.Unlock()
					}
				}
			}
			closed.Add(1)
		}()
	}
	ready.Wait()
	fmt.Fprintf(stdout, "ready %d\n", *n)
	sc := bufio.NewScanner(os.Stdin)
	var start time.Time
	for sc.Scan() {
		switch sc.Text() {
		case "pause", "resume": // unsubscribe or subscribe again (a snapshot, then diffs)
			clientsMu.Lock()
			cs := clients
			clientsMu.Unlock()
			for _, cl := range cs {
				cl.mu.Lock()
				if sc.Text() == "pause" {
					_ = cl.c.Unsubscribe(*channel)
				} else {
					_ = cl.c.Subscribe(*channel)
				}
				cl.mu.Unlock()
			}
			fmt.Fprintln(stdout, sc.Text()+"d")
		case "start":
			for i := range shards {
				shards[i].Lock()
				shards[i].h.Reset()
				shards[i].Unlock()
			}
			msgs.Store(0)
			start = time.Now()
			measuring.Store(true)
		case "stop":
			measuring.Store(false)
			secs := time.Since(start).Seconds()
			hist := hdrhistogram.New(1, 60_000_000, 3)
			for i := range shards {
				shards[i].Lock()
				hist.Merge(shards[i].h)
				shards[i].Unlock()
			}
			st := wsStats{Messages: msgs.Load(), Seconds: secs, P50ms: float64(hist.ValueAtQuantile(50)) / 1000,
				P99ms: float64(hist.ValueAtQuantile(99)) / 1000, MaxMs: float64(hist.Max()) / 1000, Closed: closed.Load(), Gaps: gaps.Load()}
			b, _ := json.Marshal(st)
			fmt.Fprintln(stdout, string(b))
		}
	}
	return nil
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// msgType is the value of the message's "type" (the server writes it first, so this looks
// at the first bytes only, not the whole message).
func msgType(b []byte) string {
	s := unsafeString(b)
	const key = `"type":"`
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = s[i+len(key):]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return ""
}

// jsonUint reads the unsigned number after key. The levels ("price","quantity" strings)
// never contain a key, so the sequences, which the server writes before the levels, are
// found from the front and the timestamp, written last, from the back: neither search
// crosses the levels (on 10,000 subscribers a whole-message backward search for every
// field took 60% of the subscriber process and left it unable to keep up).
func jsonUint(b []byte, key string) uint64 {
	s := unsafeString(b)
	var i int
	if key == `"timestamp":` {
		i = strings.LastIndex(s[max(0, len(s)-64):], key)
		if i >= 0 {
			i += max(0, len(s)-64)
		} else {
			i = strings.LastIndex(s, key)
		}
	} else {
		i = strings.Index(s, key)
	}
	if i < 0 {
		return 0
	}
	var v uint64
	for _, ch := range b[i+len(key):] {
		if ch < '0' || ch > '9' {
			break
		}
		v = v*10 + uint64(ch-'0')
	}
	return v
}

// wsClients is a `svcbench ws-clients` child process: n subscribers of a channel, told
// what to do by lines on in, answering each with a line.
type wsClients struct {
	name string // for errors: "ws-clients", "ws-clients (bare)"
	cmd  *exec.Cmd
	in   io.WriteCloser
	sc   *bufio.Scanner
}

// startWSClients starts n subscribers of channel at url in a child process.
func startWSClients(url string, n int, channel, name string, stderr io.Writer) (*wsClients, error) {
	cmd := exec.Command(os.Args[0], "ws-clients", "--url", url, "--n", strconv.Itoa(n), "--channel", channel)
	cmd.Stderr = stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &wsClients{name: name, cmd: cmd, in: in, sc: bufio.NewScanner(out)}, nil
}

// read is the child's next line.
func (c *wsClients) read() (string, error) {
	if !c.sc.Scan() {
		return "", errors.New(c.name + " ended: " + fmt.Sprint(c.sc.Err()))
	}
	return c.sc.Text(), nil
}
