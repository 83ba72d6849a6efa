package gateway_test

import (
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"svc/gateway"
)

// BenchmarkSkeleton compares, in one run over loopback TCP with keep-alive connections, a bare
// fasthttp handler answering a fixed body with the full gateway (request id, recovery,
// metrics, access log to a discarded logger, router) answering an enveloped /health.
// The figure that matters is the ratio of the two (target: gateway >= 90% of bare).
func BenchmarkSkeleton(b *testing.B) {
	bare, srv := skeletonServers(b)
	b.Run("bare", func(b *testing.B) { benchServer(b, bare.Serve, "/health") })
	b.Run("gateway", func(b *testing.B) { benchServer(b, srv.Serve, "/health") })
}

// bareHealthBody is what the gateway's /health answers with DefaultConfig.
const bareHealthBody = `{"success":true,"data":{"status":"ok","version":"dev","commit":""}}`

// skeletonServers returns the two sides of the comparison: a bare fasthttp server answering
// the gateway's /health body, and the gateway. Same server settings (timeouts, body limit)
// on both, so the comparison is of what the gateway adds per request.
func skeletonServers(tb testing.TB) (*fasthttp.Server, *gateway.Server) {
	// The same bytes as the gateway's /health with DefaultConfig (version "dev", no commit);
	// TestSkeletonBareBodyMatchesHealth keeps the two in step.
	body := []byte(bareHealthBody)
	cfg := gateway.DefaultConfig()
	bare := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(body)
		},
		ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, IdleTimeout: cfg.IdleTimeout,
		MaxRequestBodySize: cfg.BodyLimit, NoDefaultServerHeader: true,
	}
	reg := prometheus.NewRegistry()
	srv, err := gateway.New(cfg, gateway.Deps{Metrics: reg, Gatherer: reg})
	if err != nil {
		tb.Fatal(err)
	}
	return bare, srv
}

func benchServer(b *testing.B, serve func(net.Listener) error, path string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = serve(ln) }()
	defer ln.Close()
	client := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 64}
	url := "http://" + ln.Addr().String() + path
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		req.SetRequestURI(url)
		for pb.Next() {
			if err := client.Do(req, resp); err != nil {
				b.Error(err)
				return
			}
			if resp.StatusCode() != 200 {
				b.Errorf("status %d", resp.StatusCode())
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// TestSkeletonOverhead (SVC_BENCH=1) measures the same comparison as BenchmarkSkeleton with
// both servers running at once and the load alternating between them in short slices, so
// the machine's changing load falls on both sides alike. It prints requests/s of each and
// the ratio per round and the median.
func TestSkeletonOverhead(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1 to run the interleaved skeleton benchmark")
	}
	bare, srv := skeletonServers(t)
	addrs := make([]string, 2)
	for i, serve := range []func(net.Listener) error{bare.Serve, srv.Serve} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() { _ = serve(ln) }()
		addrs[i] = ln.Addr().String()
	}
	const conns, rounds, slices = 8, 7, 20
	slice := 100 * time.Millisecond
	var ratios []float64
	for r := 0; r < rounds; r++ {
		var n [2]int64
		var d [2]time.Duration
		for s := 0; s < slices; s++ {
			for i := range addrs {
				i := (i + s) % 2
				start := time.Now()
				n[i] += load(t, addrs[i], conns, slice)
				d[i] += time.Since(start)
			}
		}
		bareRPS, gwRPS := float64(n[0])/d[0].Seconds(), float64(n[1])/d[1].Seconds()
		ratios = append(ratios, gwRPS/bareRPS)
		t.Logf("round %d: bare %.0f req/s, gateway %.0f req/s, ratio %.1f%%", r+1, bareRPS, gwRPS, 100*gwRPS/bareRPS)
	}
	sort.Float64s(ratios)
	t.Logf("median ratio gateway/bare: %.1f%% (%d rounds of %d interleaved %v slices, %d connections)", 100*ratios[len(ratios)/2], rounds, slices, slice, conns)
}

// load sends /health requests over conns keep-alive connections for d and returns how
// many completed.
func load(t *testing.T, addr string, conns int, d time.Duration) int64 {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns}
	var total atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI("http://" + addr + "/health")
			for time.Now().Before(deadline) {
				if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					t.Errorf("request: %v %d", err, resp.StatusCode())
					return
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	return total.Load()
}

// TestSkeletonBareBodyMatchesHealth keeps the bare side of the skeleton comparison honest:
// it must answer exactly the bytes the gateway's /health answers.
func TestSkeletonBareBodyMatchesHealth(t *testing.T) {
	_, srv := skeletonServers(t)
	ln := fasthttputil.NewInmemoryListener()
	defer ln.Close()
	go srv.Serve(ln) //nolint:errcheck // stops when ln closes
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://gateway/health")
	if err := c.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Body()); got != bareHealthBody {
		t.Fatalf("gateway /health = %s (%d bytes), bare body = %s (%d bytes)", got, len(got), bareHealthBody, len(bareHealthBody))
	}
}
