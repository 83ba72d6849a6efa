package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

func init() {
	commands["ws-orders"] = command{summary: "order placement over the WebSocket (order.place) against REST placement (POST /v1/trading/orders) at the same concurrency on the same svcd, in alternating rounds; prints both and their ratios", run: runWSOrders}
}

// runWSOrders takes the flags of `svcbench orders` (--url, --keys/--keys-from/--seed-merchants,
// --conns, --duration, --warmup, --rounds, --symbols, --mid, --spread, --fund); closed
// loop only: each connection (HTTP keep-alive or WebSocket) has one order in flight.
func runWSOrders(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseOrdersFlags(args, false, stderr)
	if err != nil {
		return err
	}
	keys, addr, err := prepareKeys(cfg, stdout)
	if err != nil {
		return err
	}
	cfg.Rate, cfg.Mix = 0, mixPlace
	wsURL := "ws://" + addr + "/v1/ws"
	fmt.Fprintf(stdout, "svcbench ws-orders: %s and %s, %d conns each, %s (+%s warm-up), closed loop, %d key(s), symbols %s, %d round(s)\n",
		cfg.URL, wsURL, cfg.Conns, cfg.Duration, cfg.Warmup, len(keys), strings.Join(cfg.Symbols, ","), cfg.Rounds)
	var restRuns, wsRuns []*runResult
	var failed int64
	for r := 0; r < cfg.Rounds; r++ {
		rest := runLoad(context.Background(), "REST place", newWorkload(cfg, addr, keys), 0)
		printResult(stdout, rest)
		ws, err := runWSLoad(cfg, wsURL, keys)
		if err != nil {
			return err
		}
		printResult(stdout, ws)
		restRuns, wsRuns = append(restRuns, rest), append(wsRuns, ws)
		failed += rest.Failures() + ws.Failures()
		fmt.Fprintf(stdout, "round %d: WS/REST throughput %.2fx, p50 %.2fx, p99 %.2fx (load %s)\n\n", r+1,
			ws.RPS()/rest.RPS(), float64(ws.Summary().P50)/float64(max(1, rest.Summary().P50)),
			float64(ws.Summary().P99)/float64(max(1, rest.Summary().P99)), loadAvg())
	}
	re, we := medianRun(restRuns), medianRun(wsRuns)
	for _, x := range []*runResult{re, we} {
		s := x.Summary()
		fmt.Fprintf(stdout, "== %s: %.0f orders/s (median of %d), p50 %s p99 %s p99.9 %s\n", x.Name, x.RPS(), len(restRuns),
			fmtMicros(s.P50), fmtMicros(s.P99), fmtMicros(s.P999))
	}
	fmt.Fprintf(stdout, "== WS/REST throughput: %.2fx (median of the per-round ratios; target >= 1)\n", medianRatio(wsRuns, restRuns))
	fmt.Fprintf(stdout, "== WS/REST p50: %.2fx (median of the per-round ratios; target <= 0.5)\n", medianP50Ratio(wsRuns, restRuns))
	if cfg.CancelAtEnd {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cancelAll(ctx, addr, keys, cfg.Symbols, stdout)
		cancel()
	}
	if failed > 0 && cfg.FailOnErrors {
		return fmt.Errorf("%d failed or non-2xx requests", failed)
	}
	return nil
}

func medianP50Ratio(a, b []*runResult) float64 {
	rs := make([]float64, len(a))
	for i := range a {
		rs[i] = float64(a[i].Summary().P50) / float64(max(1, b[i].Summary().P50))
	}
	return medianFloat(rs)
}

func medianFloat(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// runWSLoad is runLoad's closed loop over WebSocket connections: each sends
// {"op":"order.place","id":n,"params":{...}} and waits for the answer with its id.
func runWSLoad(cfg ordersConfig, wsURL string, keys []string) (*runResult, error) {
	conns := make([]*websocket.Conn, cfg.Conns)
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 1024}
	for i := range conns {
		h := http.Header{}
		h.Set("X-Api-Key", keys[i%len(keys)])
		c, _, err := d.Dial(wsURL, h)
		if err != nil {
			for _, c := range conns[:i] {
				_ = c.Close()
			}
			return nil, fmt.Errorf("ws dial: %w", err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	deadline := measureFrom.Add(cfg.Duration)
	workers := make([]*worker, cfg.Conns)
	var wg sync.WaitGroup
	for i, c := range conns {
		wk := &worker{symbol: cfg.Symbols[i%len(cfg.Symbols)], rnd: rand.New(rand.NewPCG(uint64(i)+1, uint64(start.UnixNano()))),
			all: newHist(), place: newHist(), cancel: newHist(), status: map[int]int64{}, errors: map[string]int64{}}
		workers[i] = wk
		wg.Add(1)
		go func() {
			defer wg.Done()
			var msg []byte
			statusKey := []byte(`"status":`)
			for n := 1; ; n++ {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				id := strconv.Itoa(n)
				msg = append(msg[:0], `{"op":"order.place","id":`...)
				msg = append(msg, id...)
				msg = append(msg, `,"params":`...)
				msg = orderBody(msg, wk.symbol, wk.rnd, cfg.Mid, cfg.Spread)
				msg = append(msg, '}')
				_ = c.SetWriteDeadline(t0.Add(cfg.Timeout))
				if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
					wk.errors[shortErr(err)]++
					return
				}
				want := []byte(`"id":` + id + `,`)
				var status int
				for {
					_ = c.SetReadDeadline(t0.Add(cfg.Timeout))
					_, data, err := c.ReadMessage()
					if err != nil {
						wk.errors[shortErr(err)]++
						return
					}
					if !bytes.Contains(data, want) {
						continue
					}
					if i := bytes.Index(data, statusKey); i >= 0 {
						status, _ = strconv.Atoi(string(bytes.TrimRight(numberAt(data[i+len(statusKey):]), ",}")))
					}
					break
				}
				if t0.Before(measureFrom) {
					continue
				}
				us := time.Since(t0).Microseconds()
				_ = wk.all.RecordValue(max(us, 1))
				_ = wk.place.RecordValue(max(us, 1))
				wk.status[status]++
				wk.count++
			}
		}()
	}
	wg.Wait()
	res := &runResult{Name: "WS place", Conns: cfg.Conns, Window: cfg.Duration,
		All: newHist(), Place: newHist(), Cancel: newHist(), Status: map[int]int64{}, Errors: map[string]int64{}}
	for _, wk := range workers {
		res.All.Merge(wk.all)
		res.Place.Merge(wk.place)
		res.Requests += wk.count
		for k, v := range wk.status {
			res.Status[k] += v
		}
		for k, v := range wk.errors {
			res.Errors[k] += v
		}
	}
	return res, nil
}

// numberAt returns the digits at the start of b.
func numberAt(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return b[:i]
}
