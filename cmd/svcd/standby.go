package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"svc/cluster/standby"
	"svc/persistence/journal"
	"svc/persistence/lease"
	"svc/persistence/snapshot"
)

// hotStandby is an environment's engine kept current from the Kafka journal while another
// svcd holds the lease (package standby), with the read-only journal it follows.
type hotStandby struct {
	j *journal.Kafka
	s *standby.Standby
}

// leaseOrStandby takes env's engine lease. When another svcd holds it and this one runs with
// --engine-standby, it follows the journal with a hot standby until the lease is free, then
// takes it; the caller hands the standby's state to the new engine (exchange.recover). A
// standby that cannot start (the broker unreachable) leaves a cold one: the lease is still
// awaited and recovery reads the journal from the newest snapshot, as without a standby.
func leaseOrStandby(ctx context.Context, cfg config, env string, snaps *snapshot.Store, log *slog.Logger) (*engineLease, *hotStandby, error) {
	el, err := startEngineLease(ctx, cfg, env, false, log)
	if err == nil || !errors.Is(err, lease.ErrHeld) || !cfg.Kafka.EngineStandby {
		return el, nil, err
	}
	if cfg.Journal != "kafka" {
		return nil, nil, fmt.Errorf("%w: --engine-standby needs --journal=kafka (a standby cannot read another machine's file journal)", err)
	}
	held := err.Error()
	if h := (*lease.HeldError)(nil); errors.As(err, &h) {
		held = h.Error() // who holds it, without the advice to someone who did not ask for a standby
	}
	log.Warn("engine standby: waiting for the engine lease; nothing is served until this process takes over", "held", held)
	hot, herr := startHotStandby(ctx, cfg, env, snaps, log)
	if herr != nil {
		log.Warn("engine standby: cannot follow the journal; taking over will replay it from the newest snapshot", "error", herr)
	}
	el, err = startEngineLease(ctx, cfg, env, true, log)
	if err != nil {
		hot.close()
		return nil, nil, err
	}
	return el, hot, nil
}

// startHotStandby opens env's Kafka journal read-only and starts following it.
func startHotStandby(ctx context.Context, cfg config, env string, snaps *snapshot.Store, log *slog.Logger) (*hotStandby, error) {
	opts, err := cfg.Kafka.options(cfg.KafkaBrokers, cfg.KafkaTopic+"-"+env)
	if err != nil {
		return nil, err
	}
	opts.ReadOnly = true
	j, err := journal.OpenKafka(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%s journal (kafka, read-only): %w", env, err)
	}
	s, err := standby.Start(ctx, standby.Config{Journal: j, Snapshot: snaps.Latest, Log: log})
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	return &hotStandby{j: j, s: s}, nil
}

// handover stops following and returns the copy's state and the journal offset it holds
// (standby.Standby.Handover). nil has none: ok false.
func (h *hotStandby) handover() (offset uint64, state []byte, ok bool, err error) {
	if h == nil {
		return 0, nil, false, nil
	}
	defer func() { _ = h.j.Close() }()
	offset, state, err = h.s.Handover()
	return offset, state, err == nil, err
}

// close drops the standby (nil: nothing to drop).
func (h *hotStandby) close() {
	if h == nil {
		return
	}
	h.s.Close()
	_ = h.j.Close()
}
