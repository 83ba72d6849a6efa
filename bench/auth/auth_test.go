// Package authbench measures what authentication costs: requests/s of a trivial route
// behind the API-key middleware against the same route without it, in one run, on the real
// gateway.Server over loopback TCP with a real PostgreSQL behind the key cache.
//
//	BENCH_AUTH=1 go test ./bench/auth -run TestAuthOverhead -v -count=1
//
// Knobs: BENCH_ROUNDS (default 7), BENCH_SECONDS per round (default 2), BENCH_CONNS (default 32).
package authbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth"
	"svc/gateway/auth/authtest"
	"svc/gateway/openapi"
	"svc/identity"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

type benchRoutes struct{}

func trivial(ctx *fasthttp.RequestCtx) {
	api.RawJSON(ctx, 200, []byte(`{"success":true,"data":{"pong":true}}`))
}

func (benchRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/bench/open", trivial)
	r.GET("/v1/bench/auth", protect(trivial))
}
func (benchRoutes) Docs() []openapi.Op {
	return []openapi.Op{{Method: "GET", Path: "/v1/bench/open", Public: true}, {Method: "GET", Path: "/v1/bench/auth"}}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func TestAuthOverhead(t *testing.T) {
	if os.Getenv("BENCH_AUTH") == "" {
		t.Skip("set BENCH_AUTH=1 to run the identity benchmark")
	}
	rounds, secs, conns := envInt("BENCH_ROUNDS", 7), envInt("BENCH_SECONDS", 2), envInt("BENCH_CONNS", 32)
	pool, _ := pgtest.New(t)
	id, err := identity.New(pool, identity.Config{JWTSecret: []byte("bench-secret-0123456789-0123456789-0123")}, authtest.Mailer(&mail.Outbox{DB: pool}), nil)
	if err != nil {
		t.Fatal(err)
	}
	id.Start()
	defer id.Stop()
	<-id.Cache().Ready()
	svc, err := auth.New(id, auth.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := authtest.New(t, pool) // one million requests a minute: the limiter runs but never refuses
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	srv, err := gateway.New(cfg, gateway.Deps{Auth: svc, Routes: []gateway.RouteSet{svc.Routes(), benchRoutes{}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	addr := ln.Addr().String()

	hc := &fasthttp.HostClient{Addr: addr, MaxConns: conns}
	// run drives path for d with conns concurrent clients and returns requests and seconds.
	run := func(path, key string, d time.Duration) (int64, float64) {
		var n, bad atomic.Int64
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for i := 0; i < conns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(res)
				req.SetRequestURI("http://" + addr + path)
				if key != "" {
					req.Header.Set("X-Api-Key", key)
				}
				for time.Now().Before(stop) {
					if err := hc.Do(req, res); err != nil || res.StatusCode() != 200 {
						bad.Add(1)
						continue
					}
					n.Add(1)
				}
			}()
		}
		start := time.Now()
		wg.Wait()
		if bad.Load() > 0 {
			t.Fatalf("%s: %d failed requests", path, bad.Load())
		}
		return n.Load(), time.Since(start).Seconds()
	}
	run("/v1/bench/open", "", time.Second)           // warm up
	run("/v1/bench/auth", m.SandboxKey, time.Second) // warm up (key now cached)
	// Each round alternates 250 ms slices of the two routes for BENCH_SECONDS each, so the
	// load other processes put on this shared machine falls on both alike.
	var open, authd, ratios []float64
	slice := 250 * time.Millisecond
	for i := 0; i < rounds; i++ {
		var on, an int64
		var ot, at float64
		for j := 0; j < secs*4; j++ {
			n, d := run("/v1/bench/open", "", slice)
			on, ot = on+n, ot+d
			n, d = run("/v1/bench/auth", m.SandboxKey, slice)
			an, at = an+n, at+d
		}
		o, a := float64(on)/ot, float64(an)/at
		open, authd, ratios = append(open, o), append(authd, a), append(ratios, a/o)
		t.Logf("round %d: open %.0f req/s, api key %.0f req/s (%.1f%%)", i+1, o, a, 100*a/o)
	}
	mo, ma, mr := median(open), median(authd), median(ratios)
	fmt.Printf("identity bench: rounds=%d seconds=%d conns=%d median open=%.0f req/s, median api-key=%.0f req/s, median ratio=%.1f%%\n",
		rounds, secs, conns, mo, ma, 100*mr)
	if mr < 0.90 {
		t.Errorf("authenticated throughput is %.1f%% of unauthenticated (target >= 90%%)", 100*mr)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
