package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"svc/persistence/journal"
	"svc/persistence/lease"
)

// engineLease is the lease an environment's engine holds while it writes that
// environment's journal (package lease), with the goroutine that keeps it confirmed.
// startEngineLease starts that goroutine; release stops it, waits for it and unlocks.
type engineLease struct {
	l      *lease.Lease
	log    *slog.Logger
	j      atomic.Pointer[failer] // failed when the lease is lost
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// failer is what the journals offer to stop writing at once.
type failer interface{ Fail(cause error) }

// startEngineLease takes env's lease. With wait false it refuses with a message naming the
// holder (errors.Is lease.ErrHeld); with wait true (a standby) it waits until the lease is
// free or ctx ends.
func startEngineLease(ctx context.Context, cfg config, env string, wait bool, log *slog.Logger) (*engineLease, error) {
	host, _ := os.Hostname()
	lc := lease.Config{URL: cfg.DatabaseURL, Environment: env,
		Holder: fmt.Sprintf("svcd pid %d on %s (%s)", os.Getpid(), host, cfg.Addr), TTL: cfg.EngineLeaseTTL, Log: log}
	var (
		l   *lease.Lease
		err error
	)
	if wait {
		start := time.Now()
		l, err = lease.Acquire(ctx, lc, 200*time.Millisecond, -1)
		if err == nil {
			log.Warn("engine standby: taking over", "waited", time.Since(start).Round(time.Millisecond))
		}
	} else {
		// A holder killed a moment ago (this process's previous run, typically) keeps the
		// lease until it expires on the database's clock, at most one TTL after its last
		// renewal: wait a little longer than that before refusing.
		l, err = lease.Acquire(ctx, lc, cfg.EngineLeaseTTL/10, cfg.EngineLeaseTTL*3/2)
	}
	if errors.Is(err, lease.ErrHeld) && !wait {
		return nil, fmt.Errorf("%w: another svcd runs the %s engine on this database; stop it first, or start this one with --engine-standby to take over when it stops (two engines would both write the journal and the order history)", err, env)
	}
	if err != nil {
		return nil, fmt.Errorf("%s engine lease: %w", env, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	e := &engineLease{l: l, log: log, cancel: cancel}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_ = l.Run(runCtx, func(err error) {
			// Fail-stop: the engine answers 503 ENGINE_UNAVAILABLE from its next command on;
			// the journal's guard refuses to acknowledge anything already in flight.
			if f := e.j.Load(); f != nil {
				(*f).Fail(err)
			}
		})
	}()
	return e, nil
}

// release stops confirming the lease and unlocks it, marked clean: call it after the
// journal is closed.
func (e *engineLease) release() {
	if e == nil {
		return
	}
	e.cancel()
	e.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), e.l.TTL())
	defer cancel()
	if err := e.l.Release(ctx); err != nil {
		e.log.Warn("engine lease release", "error", err)
	}
}

// openJournal opens env's journal for the engine holding e: every record carries e's
// epoch, and the journal refuses to write or acknowledge once the lease is not valid.
func openJournal(ctx context.Context, cfg config, env string, e *engineLease, log *slog.Logger) (journal.Journal, error) {
	switch cfg.Journal {
	case "kafka":
		opts, err := cfg.Kafka.options(cfg.KafkaBrokers, cfg.KafkaTopic+"-"+env)
		if err != nil {
			return nil, err
		}
		// The previous holder's guard failed before its lease expired on the database's
		// clock, which is before we could take it: whatever it still has in flight lands
		// after our fence, is dropped by readers and was never acknowledged.
		opts.Epoch, opts.Guard = e.l.Epoch(), e.l.Check
		k, err := journal.OpenKafka(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("%s journal (kafka): %w%s", env, err, fencedHint(err, env))
		}
		if cfg.Kafka.AllowFiniteRetention {
			if err := checkRetention(k.Retention(), cfg.SnapshotEvery); err != nil {
				_ = k.Close()
				return nil, fmt.Errorf("%s journal (kafka topic %s): %w", env, opts.Topic, err)
			}
		}
		var f failer = k
		e.j.Store(&f)
		return k, nil
	default:
		dir := filepath.Join(cfg.JournalDir, env)
		f, err := journal.OpenFile(journal.FileOptions{Dir: dir, Logger: log, Epoch: e.l.Epoch(), Guard: e.l.Check})
		if err != nil {
			return nil, fmt.Errorf("%s journal (%s): %w", env, dir, err)
		}
		if f.MaxEpoch() > e.l.Epoch() {
			err := fmt.Errorf("%s journal (%s): %w", env, dir, journal.ErrFenced)
			_ = f.Close()
			return nil, fmt.Errorf("%w: it holds records of epoch %d, newer than this engine's %d%s", err, f.MaxEpoch(), e.l.Epoch(), fencedHint(err, env))
		}
		var fl failer = f
		e.j.Store(&fl)
		return f, nil
	}
}

// fencedHint tells the operator what a journal newer than the database's epoch means and
// the one safe way out. svcd never raises the epoch by itself: if another deployment (another
// database) writes the same journal, raising it would silently fence that one's acknowledged
// orders.
func fencedHint(err error, env string) string {
	if !errors.Is(err, journal.ErrFenced) {
		return ""
	}
	return fmt.Sprintf(". The journal was written under a newer epoch than this database knows: either another deployment with "+
		"another database writes it (fix the configuration), or this database was restored from a backup or replaced. Only in "+
		"the second case, set the epoch to the journal's (`insert into engine_leases (environment, epoch, holder) values ('%s', <that epoch>, 'restored') "+
		"on conflict (environment) do update set epoch = excluded.epoch`); svcd raises it by one on its next start", env)
}
