// Package tail follows an environment's journal from another process than the engine that
// writes it: the projector and market-data nodes of a cluster. A Tail polls a read-only
// journal for what the engine has acknowledged since (journal.Kafka.Refresh), tells its
// owner how far the journal goes (OnAdvance: the projector's wake-up) and, if asked,
// decodes the new records into whole engine batches (OnBatch: the market-data hub's feed,
// the same shape as eventlog.OnDurable in the engine's own process).
package tail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"svc/engine"
)

// Journal is a journal opened read-only that can be refreshed (*journal.Kafka).
type Journal interface {
	ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error
	LastOffset() uint64
	Refresh(ctx context.Context) (uint64, error)
}

// Config configures a Tail.
type Config struct {
	Journal Journal
	// From is the offset the reader already has: OnBatch gets the batches after it.
	From uint64
	// Poll is how often the journal is asked for new records. Default 50 ms.
	Poll time.Duration
	// OnAdvance, if set, is called with the journal's last offset whenever it grew.
	OnAdvance func(last uint64)
	// OnBatch, if set, is called with every whole batch after From, in journal order, and
	// the offset of its last record. It must not keep batch.
	OnBatch func(batch []engine.Event, last uint64)
	Log     *slog.Logger
}

// Tail follows one journal. Run owns its goroutine.
type Tail struct {
	cfg  Config
	pos  uint64 // last offset handed to OnBatch (or From)
	seen uint64 // last offset reported to OnAdvance
}

// New returns a tail; Run starts it.
func New(cfg Config) (*Tail, error) {
	if cfg.Journal == nil {
		return nil, errors.New("tail: Config.Journal is required")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Tail{cfg: cfg, pos: cfg.From}, nil
}

// Position is the last offset handed to OnBatch (Run's goroutine only, or after Run).
func (t *Tail) Position() uint64 { return t.pos }

// Run polls until ctx ends. A failing poll (the broker unreachable) is logged and retried
// at the next tick: the journal is durable, so a tail only ever lags.
func (t *Tail) Run(ctx context.Context) error {
	tick := time.NewTicker(t.cfg.Poll)
	defer tick.Stop()
	failing := false
	for {
		err := t.Step(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && !failing:
			t.cfg.Log.Warn("journal tail failing; retrying", "error", err)
			failing = true
		case err == nil && failing:
			t.cfg.Log.Info("journal tail recovered", "offset", t.pos)
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Step refreshes the journal once and hands on what is new.
func (t *Tail) Step(ctx context.Context) error {
	last, err := t.cfg.Journal.Refresh(ctx)
	if err != nil {
		return err
	}
	if last > t.seen {
		t.seen = last
		if t.cfg.OnAdvance != nil {
			t.cfg.OnAdvance(last)
		}
	}
	if t.cfg.OnBatch == nil || last <= t.pos {
		return nil
	}
	var (
		r     engine.BatchReader
		batch []engine.Event
	)
	err = t.cfg.Journal.ReadFrom(ctx, t.pos+1, func(off uint64, payload []byte) error {
		if err := r.Read(off, payload, func(e *engine.Event) error {
			batch = append(batch, *e)
			return nil
		}); err != nil {
			return fmt.Errorf("journal offset %d: %w", off, err)
		}
		if done := r.Complete(); done > t.pos {
			if len(batch) > 0 {
				t.cfg.OnBatch(batch, done)
			}
			batch = batch[:0]
			t.pos = done
		}
		return nil
	})
	return err
}
