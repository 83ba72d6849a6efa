package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/valyala/fasthttp"
)

// Latencies are recorded in microseconds, 1 µs to 60 s, 3 significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// workload is one run's load: where, with which keys, which requests.
type workload struct {
	cfg  ordersConfig
	addr string
	keys []string
}

func newWorkload(cfg ordersConfig, addr string, keys []string) *workload {
	return &workload{cfg: cfg, addr: addr, keys: keys}
}

// runResult is what one run measured (requests started inside the measured window).
type runResult struct {
	Name     string
	Conns    int
	Rate     float64 // offered rate, 0 = closed loop
	Window   time.Duration
	Requests int64
	All      *hdrhistogram.Histogram
	Place    *hdrhistogram.Histogram
	Cancel   *hdrhistogram.Histogram
	Status   map[int]int64
	Errors   map[string]int64
	Late     int64 // open loop: requests that started more than 1 ms after their slot
}

// RPS is completed requests per second of the measured window.
func (r *runResult) RPS() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Window.Seconds()
}

// Failures counts transport errors and non-2xx answers.
func (r *runResult) Failures() int64 {
	var n int64
	for code, c := range r.Status {
		if code < 200 || code > 299 {
			n += c
		}
	}
	for _, c := range r.Errors {
		n += c
	}
	return n
}

// Summary of the all-requests histogram.
func (r *runResult) Summary() latencySummary { return summarize(r.All) }

// worker state: one per connection.
type worker struct {
	w       *workload
	client  *fasthttp.HostClient
	key     string
	symbol  string
	rnd     *rand.Rand
	body    []byte
	pending []byte // id of this worker's resting order to cancel next (place-cancel)
	all     *hdrhistogram.Histogram
	place   *hdrhistogram.Histogram
	cancel  *hdrhistogram.Histogram
	status  map[int]int64
	errors  map[string]int64
	count   int64
	late    int64
}

// runLoad runs w for its warm-up and duration: closed loop (each connection sends its next
// request when the previous answer is in) or, with rate > 0, open loop (request k is due at
// start + k/rate whoever sends it, and its latency counts from that moment, so a stalled
// server is charged for the requests it held up). Every loop is bounded by the deadline
// and by --max-requests.
func runLoad(ctx context.Context, name string, w *workload, rate float64) *runResult {
	cfg := w.cfg
	client := &fasthttp.HostClient{
		Addr:                w.addr,
		MaxConns:            cfg.Conns,
		ReadTimeout:         cfg.Timeout,
		WriteTimeout:        cfg.Timeout,
		MaxIdleConnDuration: time.Minute,
		MaxConnWaitTimeout:  cfg.Timeout,
	}
	defer client.CloseIdleConnections()
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	deadline := measureFrom.Add(cfg.Duration)
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(cfg.Timeout))
	defer cancel()

	var next atomic.Int64 // open loop: the next slot
	var issued atomic.Int64
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
		if interval <= 0 {
			interval = 1
		}
	}
	workers := make([]*worker, cfg.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		wk := &worker{
			w: w, client: client, key: w.keys[i%len(w.keys)], symbol: cfg.Symbols[i%len(cfg.Symbols)],
			rnd: rand.New(rand.NewPCG(uint64(i)+1, uint64(start.UnixNano()))),
			all: newHist(), place: newHist(), cancel: newHist(),
			status: map[int]int64{}, errors: map[string]int64{},
		}
		workers[i] = wk
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for ctx.Err() == nil {
				if cfg.MaxRequests > 0 && issued.Add(1) > cfg.MaxRequests {
					return
				}
				var t0 time.Time
				if interval > 0 {
					k := next.Add(1) - 1
					t0 = start.Add(time.Duration(k) * interval)
					if !t0.Before(deadline) {
						return
					}
					if d := time.Until(t0); d > 0 {
						time.Sleep(d)
					} else if d < -time.Millisecond {
						wk.lateOne(t0, measureFrom)
					}
				} else {
					t0 = time.Now()
					if !t0.Before(deadline) {
						return
					}
				}
				wk.one(req, resp, t0, !t0.Before(measureFrom))
			}
		}()
	}
	wg.Wait()

	res := &runResult{Name: name, Conns: cfg.Conns, Rate: rate, Window: cfg.Duration,
		All: newHist(), Place: newHist(), Cancel: newHist(), Status: map[int]int64{}, Errors: map[string]int64{}}
	for _, wk := range workers {
		res.All.Merge(wk.all)
		res.Place.Merge(wk.place)
		res.Cancel.Merge(wk.cancel)
		res.Requests += wk.count
		res.Late += wk.late
		for k, v := range wk.status {
			res.Status[k] += v
		}
		for k, v := range wk.errors {
			res.Errors[k] += v
		}
	}
	return res
}

func (wk *worker) lateOne(t0, measureFrom time.Time) {
	if !t0.Before(measureFrom) {
		wk.late++
	}
}

var (
	idKey      = []byte(`"id":"`)
	restingKey = []byte(`"status":"OPEN"`)
	partialKey = []byte(`"status":"PARTIALLY_FILLED"`)
)

// one sends one request: the cancel of this connection's resting order if there is one
// (place-cancel), else a new limit order.
func (wk *worker) one(req *fasthttp.Request, resp *fasthttp.Response, t0 time.Time, record bool) {
	cfg := wk.w.cfg
	req.Reset()
	req.Header.SetHost(wk.w.addr)
	req.Header.Set("X-Api-Key", wk.key)
	isCancel := len(wk.pending) > 0
	if isCancel {
		req.Header.SetMethod(fasthttp.MethodDelete)
		req.SetRequestURI("/v1/trading/orders/" + string(wk.pending))
		wk.pending = wk.pending[:0]
	} else {
		req.Header.SetMethod(fasthttp.MethodPost)
		req.SetRequestURI("/v1/trading/orders")
		req.Header.SetContentType("application/json")
		wk.body = orderBody(wk.body[:0], wk.symbol, wk.rnd, cfg.Mid, cfg.Spread)
		req.SetBodyRaw(wk.body)
	}
	err := wk.client.Do(req, resp)
	lat := time.Since(t0)
	if !record {
		if err == nil && !isCancel && cfg.Mix == mixPlaceCancel {
			wk.notePending(resp)
		}
		return
	}
	wk.count++
	us := lat.Microseconds()
	if us < histMin {
		us = histMin
	}
	if us > histMax {
		us = histMax
	}
	_ = wk.all.RecordValue(us)
	if isCancel {
		_ = wk.cancel.RecordValue(us)
	} else {
		_ = wk.place.RecordValue(us)
	}
	if err != nil {
		wk.errors[shortErr(err)]++
		return
	}
	wk.status[resp.StatusCode()]++
	if !isCancel && cfg.Mix == mixPlaceCancel {
		wk.notePending(resp)
	}
}

func (wk *worker) notePending(resp *fasthttp.Response) {
	if resp.StatusCode() != fasthttp.StatusCreated {
		return
	}
	b := resp.Body()
	if !bytes.Contains(b, restingKey) && !bytes.Contains(b, partialKey) {
		return
	}
	i := bytes.Index(b, idKey)
	if i < 0 {
		return
	}
	rest := b[i+len(idKey):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 || j > 64 {
		return
	}
	wk.pending = append(wk.pending[:0], rest[:j]...)
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// orderBody appends a limit order JSON: a buy within spread ticks below mid reaching 2 ticks
// above it, or a sell mirrored, 1.00 to 5.00 base; so some orders cross and trade.
func orderBody(b []byte, symbol string, rnd *rand.Rand, mid, spread int64) []byte {
	side := "buy"
	price := mid - rnd.Int64N(spread) + 2
	if rnd.IntN(2) == 1 {
		side = "sell"
		price = mid + rnd.Int64N(spread) - 2
	}
	qty := int64(100 + 100*rnd.IntN(5))
	b = append(b, `{"symbol":"`...)
	b = append(b, symbol...)
	b = append(b, `","side":"`...)
	b = append(b, side...)
	b = append(b, `","type":"limit","quantity":"`...)
	b = appendFixed2(b, qty)
	b = append(b, `","price":"`...)
	b = appendFixed2(b, price)
	return append(b, `"}`...)
}

// appendFixed2 appends v/100 with two decimals (v >= 0).
func appendFixed2(b []byte, v int64) []byte {
	b = strconv.AppendInt(b, v/100, 10)
	b = append(b, '.')
	f := v % 100
	if f < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, f, 10)
}

// bareServer is an in-process fasthttp server answering every request with a fixed order
// body (201, the size of svcd's answer): the ceiling of what HTTP on this machine gives.
type bareServer struct {
	ln  net.Listener
	srv *fasthttp.Server
}

var bareBody = []byte(`{"success":true,"data":{"id":"0190d7a4-6c1e-7f3a-9a57-0123456789ab","client_order_id":null,"symbol":"USDT-NGN","side":"buy","type":"limit","time_in_force":"GTC","post_only":false,"quantity":"1.00","filled_quantity":"0.00","price":"1500.00","status":"OPEN","cancel_reason":null,"created_at":"2026-01-01T00:00:00.000Z"}}`)

func startBare() (*bareServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetStatusCode(fasthttp.StatusCreated)
			ctx.SetContentType("application/json")
			ctx.SetBody(bareBody)
		},
		NoDefaultServerHeader: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           time.Minute,
	}
	go func() { _ = srv.Serve(ln) }()
	return &bareServer{ln: ln, srv: srv}, nil
}

func (b *bareServer) Addr() string { return b.ln.Addr().String() }

func (b *bareServer) Close() { _ = b.srv.Shutdown() }

// medianRun returns the run with the median requests/s.
func medianRun(runs []*runResult) *runResult {
	s := append([]*runResult(nil), runs...)
	sort.Slice(s, func(i, j int) bool { return s[i].RPS() < s[j].RPS() })
	return s[(len(s)-1)/2]
}

// medianRatio is the median over rounds of svc[i]/bare[i] requests/s.
func medianRatio(svc, bare []*runResult) float64 {
	var rs []float64
	for i := range svc {
		if i < len(bare) && bare[i].RPS() > 0 {
			rs = append(rs, svc[i].RPS()/bare[i].RPS())
		}
	}
	if len(rs) == 0 {
		return 0
	}
	sort.Float64s(rs)
	return rs[(len(rs)-1)/2]
}
