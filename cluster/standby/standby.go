// Package standby keeps a copy of an environment's engine current from the journal while
// another process holds that environment's engine lease: a hot standby. Taking over then
// costs a hand-over of the copy's state (a snapshot of the books and accounts, in memory)
// and the few records the leader wrote since the last poll, not a replay of the journal
// since the last snapshot, so the time to take over does not grow with the journal.
//
// The copy is an engine that is never started: it only restores and applies journaled
// events (engine.Restore, engine.Apply), so it cannot answer a command or write the journal.
// The process that takes over builds its own engine over its own journal from Handover's
// state and replays what follows.
package standby

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"svc/cluster/tail"
	"svc/engine"
	"svc/persistence/eventlog"
)

// Journal is the environment's journal opened read-only (*journal.Kafka with ReadOnly).
type Journal = tail.Journal

// Config configures a Standby.
type Config struct {
	// Journal is read, never written.
	Journal Journal
	// Pairs are the engine's symbols; engine.DefaultPairs() if empty.
	Pairs []engine.PairConfig
	// Snapshot, if set, returns the newest snapshot to start from (ok false: none, start
	// from the journal's first record): snapshot.Store.Latest.
	Snapshot func() (offset uint64, data []byte, ok bool, err error)
	// Poll is how often the journal is asked for new records. Default 50 ms.
	Poll time.Duration
	Log  *slog.Logger
}

// ErrBroken is returned by Handover when the copy stopped following the journal (an event
// it could not apply): the caller recovers the usual way, from a snapshot and the journal.
var ErrBroken = errors.New("standby: the engine copy stopped following the journal")

// Standby is a started hot standby. Handover or Close stops it; both may be called once.
type Standby struct {
	cfg  Config
	eng  *engine.Engine
	tail *tail.Tail

	mu      sync.Mutex
	applied uint64 // last journal offset applied
	broken  error

	cancel context.CancelFunc
	done   chan struct{}
}

// noJournal is the copy's engine.Journal: the copy is never started, so nothing reaches it;
// if something did, the engine fail-stops instead of acknowledging.
type noJournal struct{}

func (noJournal) Append([]engine.Event) (uint64, error) {
	return 0, errors.New("standby: the engine copy does not write the journal")
}

// Start restores the newest snapshot, replays the journal up to its current end, and
// follows it from then on in its own goroutine.
func Start(ctx context.Context, cfg Config) (*Standby, error) {
	if cfg.Journal == nil {
		return nil, errors.New("standby: Config.Journal is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	eng, err := engine.New(engine.Config{Pairs: cfg.Pairs, Journal: noJournal{}})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var from uint64
	if cfg.Snapshot != nil {
		off, data, ok, err := cfg.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("standby: snapshots: %w", err)
		}
		if ok {
			if from, err = eng.Restore(data); err != nil {
				return nil, fmt.Errorf("standby: restore snapshot %d: %w", off, err)
			}
		}
	}
	if _, err := cfg.Journal.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("standby: journal: %w", err)
	}
	last, n, err := eventlog.Replay(ctx, cfg.Journal, from, eng, nil)
	if err != nil {
		return nil, fmt.Errorf("standby: replay: %w", err)
	}
	if err := eng.Replayed(last); err != nil {
		return nil, err
	}
	s := &Standby{cfg: cfg, eng: eng, applied: last, done: make(chan struct{})}
	t, err := tail.New(tail.Config{Journal: cfg.Journal, From: last, Poll: cfg.Poll, Log: cfg.Log, OnBatch: s.apply})
	if err != nil {
		return nil, err
	}
	s.tail = t
	cfg.Log.Info("engine standby: following the journal", "snapshot_offset", from, "replayed_events", n,
		"journal_offset", last, "ms", time.Since(start).Milliseconds())
	rctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.done)
		_ = t.Run(rctx)
	}()
	return s, nil
}

// apply is the tail's OnBatch: one whole batch the leader made durable. The tail hands on
// only whole batches, in journal order, after what Start replayed.
func (s *Standby) apply(batch []engine.Event, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return
	}
	if err := s.eng.Apply(batch); err != nil {
		s.broken = fmt.Errorf("%w: journal offset %d: %v", ErrBroken, last, err)
		s.cfg.Log.Error("engine standby: cannot apply the journal; taking over will recover from the snapshot and the journal instead", "error", err)
		return
	}
	_ = s.eng.Replayed(last)
	s.applied = last
}

// Applied is the last journal offset the copy holds.
func (s *Standby) Applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// stop ends the tail and waits for its goroutine.
func (s *Standby) stop() {
	s.cancel()
	<-s.done
}

// Handover stops following the journal and returns the copy's state as an engine snapshot
// (engine.Restore reads it) with the journal offset it holds: the new leader restores it
// and replays the journal after that offset. ErrBroken if the copy could not follow.
func (s *Standby) Handover() (offset uint64, state []byte, err error) {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return 0, nil, s.broken
	}
	state, offset, err = s.eng.Snapshot(nil)
	if err != nil {
		return 0, nil, fmt.Errorf("standby: snapshot of the copy: %w", err)
	}
	return offset, state, nil
}

// Close stops following the journal and drops the copy.
func (s *Standby) Close() { s.stop() }
