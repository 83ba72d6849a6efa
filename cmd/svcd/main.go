// Command svcd is the server: the HTTP gateway, the matching engine and the payments
// services in one process. main only wires; see run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"svc/cmd/internal/cli"
	"svc/gateway"
	"svc/gateway/auth"
	"svc/persistence/postgres"
)

// version is the build's version (Makefile ldflags), e.g. in the webhook User-Agent.
var version = cli.Version()

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "svcd:", err)
		os.Exit(1)
	}
}

// run starts everything, serves until ctx is cancelled (SIGINT/SIGTERM), then stops in
// reverse order: stop accepting, drain in-flight requests, close the pools.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.ShowVersion {
		fmt.Fprintln(stdout, cli.VersionLine("svcd"))
		return nil
	}
	log := newLogger(cfg, stdout)

	if cfg.Migrate {
		mctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := postgres.Migrate(mctx, cfg.DatabaseURL)
		cancel()
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		log.Info("database migrated")
	}
	octx, cancel := context.WithTimeout(ctx, 15*time.Second)
	pool, err := postgres.Open(octx, cfg.DatabaseURL, int32(cfg.DBMaxConns))
	cancel()
	if err != nil {
		return err
	}
	defer pool.Close()

	bg, err := newBackground(cfg, pool, log)
	if err != nil {
		return err
	}

	authSvc, err := newAuth(cfg, pool, log)
	if err != nil {
		return err
	}
	authSvc.Start()
	defer authSvc.Stop()
	if cfg.Demo {
		if err := seedDemo(ctx, cfg, authSvc, stdout); err != nil {
			return err
		}
	}

	exchanges, err := openExchanges(ctx, cfg, pool, log)
	if err != nil {
		return err
	}
	defer exchanges.close()
	if cfg.Demo {
		m, err := auth.NewStore(pool).Merchant(ctx, demoEmail)
		if err != nil {
			return fmt.Errorf("demo merchant: %w", err)
		}
		if err := exchanges.fundDemo(m.ID, stdout); err != nil {
			return err
		}
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	domain := newDomainCollector(pool, exchanges.domainSources()) // docs/operations.md
	reg.MustRegister(domain)

	marketREST, marketWS := exchanges.marketRoutes(pool, authSvc, log)
	domain.ws, domain.webhooks = marketWS, bg.webhookWorker.Stats
	if err := marketWS.Start(); err != nil {
		return fmt.Errorf("websocket endpoint: %w", err)
	}
	defer marketWS.Close()
	cust := newCustomers(cfg, pool, bg)
	com := newCommerce(cfg, pool, bg)
	domain.limits = []rateLimit{
		{"merchant", func() uint64 { m, _ := authSvc.RateLimited(); return m }},
		{"auth_address", func() uint64 { _, a := authSvc.RateLimited(); return a }},
		{"pay", com.checkout.RateLimited},
		{"public_market_data", marketREST.RateLimited},
		{"public_market_data", marketWS.RateLimited},
	}
	moneyInRoutes := bg.moneyIn.attach(exchanges, com.links)
	bg.moneyOut.useRates(bg.moneyIn.rates)
	out := bg.moneyOut.routes(cust.keys)
	out.dispatchDeposits(moneyInRoutes)

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
		Auth:     authSvc,
		Ready: []gateway.ReadyCheck{
			{Name: "postgres", Check: func(ctx context.Context) error { return pool.Ping(ctx) }},
			{Name: "exchange", Check: exchanges.ready},
		},
		Routes: append([]gateway.RouteSet{bg.webhooks, authSvc.Routes(), exchanges.tradingRoutes(pool), marketREST, marketWS,
			com.products, com.invoices, com.checkout, cust.customers, cust.virtualAccounts,
			out.withdrawals, out.offramps, out.recipients, out.transfers},
			moneyInRoutes...),
	})
	if err != nil {
		return err
	}

	if err := bg.start(ctx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	defer bg.stop(cfg.ShutdownTimeout, log)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe() }()
	log.Info("svcd listening", "addr", cfg.Addr, "version", version, "commit", cli.Commit())

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "error", err)
	}
	<-serveErr
	log.Info("stopped")
	return nil
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
