package gateway_test

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"svc/gateway"
)

// BenchmarkSkeleton compares, in one run over loopback TCP with keep-alive connections, a bare
// fasthttp handler answering a fixed body with the full gateway (request id, recovery,
// metrics, access log to a discarded logger, router) answering an enveloped /health.
// The figure that matters is the ratio of the two (target: gateway >= 90% of bare).
func BenchmarkSkeleton(b *testing.B) {
	body := []byte(`{"success":true,"data":{"status":"ok","version":"dev"}}`)
	cfg := gateway.DefaultConfig()
	// Same server settings (timeouts, body limit) on both sides: the comparison is of what
	// the gateway adds per request, not of fasthttp's options.
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
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) { benchServer(b, bare.Serve, "/health") })
	b.Run("gateway", func(b *testing.B) { benchServer(b, srv.Serve, "/health") })
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
