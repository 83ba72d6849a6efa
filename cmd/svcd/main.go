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
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/cmd/internal/cli"
	"svc/gateway"
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

// run builds the subsystems in dependency order, each from what the ones before it made,
// serves until ctx is cancelled (SIGINT/SIGTERM), then stops in reverse order: stop
// accepting and drain in-flight requests, stop the job workers, the WebSocket endpoint and
// the exchanges, identity, and close the pool.
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
	pool, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer pool.Close()

	// Identity and access: merchants, sessions, API keys (identity.go).
	ids, id, demo, err := newIdentity(ctx, cfg, pool, log, stdout)
	if err != nil {
		return err
	}
	defer ids.Stop()

	// Trading: each environment's exchange recovered and started, market data (trading.go).
	tr, err := newTrading(ctx, cfg, pool, id, demo, log, stdout)
	if err != nil {
		return err
	}
	defer tr.close()

	// Payments: every domain over the exchanges' books, and the job workers (payments.go):
	// for the gateway's routes and the workers role (roles.go).
	var pay *paymentsSubsystem
	if rs := cfg.Cluster.Roles; rs.has(roleGateway) || rs.has(roleWorkers) {
		if pay, err = newPayments(cfg, pool, tr.engines(), log); err != nil {
			return err
		}
	}

	// The HTTP gateway over all of them (gateway.go).
	srv, err := newGateway(cfg, pool, log, id, tr, pay)
	if err != nil {
		return err
	}

	if pay != nil && cfg.Cluster.Roles.has(roleWorkers) {
		if err := pay.start(ctx); err != nil {
			return fmt.Errorf("start jobs: %w", err)
		}
		defer pay.stop(cfg.ShutdownTimeout, log)
	} else if pay != nil {
		// Without the workers, the treasury still follows its positions for the quotes.
		pay.treasury.start(ctx)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			pay.treasury.stop(sctx, log)
		}()
	}
	// An engine of a pair (--engine-standby) that can no longer serve stops the process, so
	// its supervisor restarts it as the standby (cluster.go, exitOnEngineLoss).
	ctx, cause := exitOnEngineLoss(ctx, cfg, tr, log)
	if err := serve(ctx, cfg, srv, log); err != nil {
		return err
	}
	return cause()
}

// openDatabase migrates the database (--migrate) and opens the pool.
func openDatabase(ctx context.Context, cfg config, log *slog.Logger) (*pgxpool.Pool, error) {
	if cfg.Migrate {
		mctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := postgres.Migrate(mctx, cfg.DatabaseURL)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		log.Info("database migrated")
	}
	octx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// --db-min-conns connections are opened at start and kept open: a connection opened in
	// the request path is a latency spike (issue 22, third round).
	return postgres.OpenPool(octx, cfg.DatabaseURL, postgres.PoolOptions{MaxConns: int32(cfg.DBMaxConns), MinConns: int32(cfg.DBMinConns)})
}

// serve listens until ctx is done, then drains in-flight requests within the shutdown
// timeout.
func serve(ctx context.Context, cfg config, srv *gateway.Server, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
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
	// Shutdown closes the listeners Serve has registered. A stop that comes right at start,
	// before the serving goroutine got that far, would leave Serve to start afterwards and
	// serve for ever: closing the listener here makes it return either way.
	_ = ln.Close()
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
