package main

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"svc/cmd/internal/cli"
	"svc/gateway"
	"svc/gateway/auth"
	gwidem "svc/gateway/idempotency"
	"svc/gateway/ws"
	"svc/payments/idempotency"
)

// newGateway builds the HTTP server over every subsystem's routes, with the metrics
// registry (docs/operations.md) and the readiness checks. It does not listen yet.
func newGateway(cfg config, pool *pgxpool.Pool, log *slog.Logger, id *auth.Service, tr *tradingSubsystem, pay *paymentsSubsystem) (*gateway.Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rs := cfg.Cluster.Roles // what this process serves (roles.go); all: everything
	domain := newDomainCollector(pool, tr.metricSources())
	market := rs.has(roleMarketData) && tr.market != nil && tr.ws != nil
	var routes []gateway.RouteSet
	if rs.has(roleGateway) {
		// API keys' creates and revocations honour X-Idempotency-Key (issue 30).
		keys := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
		routes = append(routes, id.Routes().Idempotent(keys), tr.orders)
		domain.limits = append(domain.limits,
			rateLimit{"merchant", func() uint64 { m, _ := id.RateLimited(); return m }},
			rateLimit{"auth_address", func() uint64 { _, a := id.RateLimited(); return a }})
	}
	if market {
		routes = append(routes, tr.market, tr.ws)
		domain.ws = tr.ws
	}
	if pay != nil {
		domain.webhooks = pay.webhookStats
		if rs.has(roleGateway) {
			routes = append(routes, pay.routes...)
			domain.limits = append(domain.limits, rateLimit{"pay", pay.payLimited}, rateLimit{"partner_address", pay.partnerLimited})
		}
	}
	if market {
		domain.limits = append(domain.limits,
			rateLimit{"public_market_data", tr.market.RateLimited},
			rateLimit{"public_market_data", tr.ws.RateLimited})
	}
	reg.MustRegister(domain)
	if pay != nil && pay.treasury != nil {
		reg.MustRegister(pay.treasury.desk.Collector()) // svc_treasury_* (issue 27)
	}
	ready := []gateway.ReadyCheck{
		{Name: "postgres", Check: func(ctx context.Context) error { return pool.Ping(ctx) }},
		{Name: "exchange", Check: tr.ready},
	}
	if pay != nil && pay.custody != nil {
		// A chain node down or lagging shows here and in svc_custody_*; svcd serves the rest.
		reg.MustRegister(pay.custody.collector())
		ready = append(ready, gateway.ReadyCheck{Name: "custody", Check: pay.custody.ready, Degraded: true})
	}

	gcfg := gateway.DefaultConfig()
	gcfg.Addr = cfg.Addr
	gcfg.BodyLimit = cfg.BodyLimit
	gcfg.RequestTimeout = cfg.RequestTimeout
	gcfg.AccessLog = cfg.AccessLog
	gcfg.Version = version
	gcfg.Commit = cli.Commit()
	gcfg.ShutdownTimeout = cfg.ShutdownTimeout
	srv, err := gateway.New(gcfg, gateway.Deps{
		Logger:   log,
		Metrics:  reg,
		Gatherer: reg,
		Auth:     id,
		Ready:    ready,
		Routes:   routes,
	})
	if err == nil && market && rs.has(roleGateway) {
		// Order ops on the WebSocket run as the REST requests they stand for (issue 28).
		// A dropped session's cancels get what a REST cancel would (--request-timeout).
		tr.ws.SetOrderEntry(ws.OrderEntry{Handler: srv.Handler(), CancelOrders: tr.orders.CancelOrders, Lease: tr.orders.Lease,
			CancelWithin: cfg.RequestTimeout})
	}
	return srv, err
}
