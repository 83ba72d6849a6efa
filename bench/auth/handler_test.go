package authbench

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/auth"
	"svc/gateway/auth/authtest"
	"svc/identity"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

// BenchmarkHandler runs the whole server handler chain (no sockets) for the trivial route,
// open and behind an API key: the server-side cost of authentication in isolation.
func BenchmarkHandler(b *testing.B) {
	pool, _ := pgtest.New(b)
	id, err := identity.New(pool, identity.Config{JWTSecret: []byte("bench-secret-0123456789-0123456789-0123")}, authtest.Mailer(&mail.Outbox{DB: pool}), nil)
	if err != nil {
		b.Fatal(err)
	}
	id.Start()
	defer id.Stop()
	<-id.Cache().Ready()
	svc, err := auth.New(id, auth.Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	m := authtest.New(b, pool)
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	srv, err := gateway.New(cfg, gateway.Deps{Auth: svc, Routes: []gateway.RouteSet{svc.Routes(), benchRoutes{}}})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	for _, c := range []struct{ name, path, key string }{{"open", "/v1/bench/open", ""}, {"api_key", "/v1/bench/auth", m.SandboxKey}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var req fasthttp.Request
				req.SetRequestURI(c.path)
				if c.key != "" {
					req.Header.Set("X-Api-Key", c.key)
				}
				var ctx fasthttp.RequestCtx
				addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
				for pb.Next() {
					ctx.Init(&req, addr, nil)
					h(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
					}
				}
			})
		})
	}
}
