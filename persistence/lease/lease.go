// Package lease owns the engine lease: the guarantee that one engine at a time writes an
// environment's journal. A lease is a session-level PostgreSQL advisory lock held on a
// dedicated connection, keyed by environment, plus an epoch in table engine_leases that is
// raised on every acquisition. The engine stamps the epoch on every journal record, so
// readers drop what a deposed engine still wrote after a newer one fenced the journal.
//
// Validity is time-bounded: Run confirms the lock every TTL/3, and Check fails once TTL
// has passed since the last confirmation was sent (or at once when the connection is
// lost). The journal calls Check before writing a group and before acknowledging it. A
// new holder that took over from an engine that did not release cleanly waits one TTL
// (WaitOutPrevious) before it touches the journal: by then the old engine's Check fails,
// so nothing it acknowledges can land after the new engine's fence.
package lease

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultTTL is how long a confirmation of the lock keeps the lease valid.
const DefaultTTL = 3 * time.Second

// lockClass is the first key of every engine advisory lock ("SVCE"); the second is a
// hash of the environment.
const lockClass int32 = 0x53564345

var (
	// ErrHeld is wrapped by TryAcquire's error when another engine holds the lease.
	ErrHeld = errors.New("engine lease held by another engine")
	// ErrLost is wrapped by Check's and Run's error once the lease is no longer valid.
	ErrLost = errors.New("engine lease lost")
)

// HeldError says who holds the lease. errors.Is(err, ErrHeld) holds.
type HeldError struct {
	Environment string
	Holder      string // as the holder gave it (host and pid)
	Epoch       int64
	Since       time.Time
}

func (e *HeldError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("the %s engine lease is held by another engine", e.Environment)
	}
	return fmt.Sprintf("the %s engine lease is held by %s (epoch %d, since %s)", e.Environment, e.Holder,
		e.Epoch, e.Since.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Config says where and what to lock.
type Config struct {
	URL         string // PostgreSQL URL; the lease opens its own connection
	Environment string // sandbox or live
	Holder      string // who is asking, shown to contenders (e.g. host:pid)
	TTL         time.Duration
	Log         *slog.Logger
}

// Lease is a held engine lease. Check is safe for concurrent use; Run and Release are
// called by the lease's owner.
type Lease struct {
	cfg   Config
	key   int32
	epoch uint64
	clean bool // the previous holder released cleanly (or there was none)
	start time.Time

	mu   sync.Mutex // the connection
	conn *pgx.Conn

	validUntil atomic.Int64 // nanoseconds since start (monotonic)
	lost       atomic.Pointer[error]
}

func envKey(env string) int32 { return int32(crc32.ChecksumIEEE([]byte("svc engine " + env))) }

// TryAcquire takes the lease of cfg.Environment if nobody holds it, raising its epoch. A
// lease held elsewhere is a *HeldError (errors.Is ErrHeld).
func TryAcquire(ctx context.Context, cfg Config) (*Lease, error) {
	return Acquire(ctx, cfg, 0, 0)
}

// Acquire takes the lease, waiting for it to be free for up to patience (0: not at all, a
// negative value: until ctx ends), trying every poll interval on one connection: a cold
// standby, or a restart that gives a just-killed holder's session time to end. When it
// stops waiting it returns the last *HeldError. ctx bounds the connection too.
func Acquire(ctx context.Context, cfg Config, poll, patience time.Duration) (*Lease, error) {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Environment == "" {
		return nil, errors.New("lease: no environment")
	}
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	conn, err := pgx.Connect(ctx, cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("lease: connecting: %w", err)
	}
	l := &Lease{cfg: cfg, key: envKey(cfg.Environment), conn: conn}
	var giveUp <-chan time.Time
	if patience > 0 {
		t := time.NewTimer(patience)
		defer t.Stop()
		giveUp = t.C
	}
	for {
		err := l.acquire(ctx)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrHeld) || patience == 0 {
			_ = conn.Close(context.Background())
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = conn.Close(context.Background())
			return nil, err
		case <-giveUp:
			_ = conn.Close(context.Background())
			return nil, err
		case <-time.After(poll):
		}
	}
}

func (l *Lease) acquire(ctx context.Context) error {
	var got bool
	sent := time.Now()
	if err := l.conn.QueryRow(ctx, `select pg_try_advisory_lock($1, $2)`, lockClass, l.key).Scan(&got); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	if !got {
		held := &HeldError{Environment: l.cfg.Environment}
		err := l.conn.QueryRow(ctx, `select holder, epoch, acquired_at from engine_leases where environment = $1`,
			l.cfg.Environment).Scan(&held.Holder, &held.Epoch, &held.Since)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("lease: %w (and reading its holder: %w)", held, err)
		}
		return held
	}
	l.start = sent
	l.validUntil.Store(int64(l.cfg.TTL))
	var (
		epoch    int64
		released *time.Time
		existed  bool
	)
	err := pgx.BeginFunc(ctx, l.conn, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `select released_at from engine_leases where environment = $1 for update`,
			l.cfg.Environment).Scan(&released)
		switch {
		case err == nil:
			existed = true
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		return tx.QueryRow(ctx, `insert into engine_leases (environment, epoch, holder) values ($1, 1, $2)
			on conflict (environment) do update set epoch = engine_leases.epoch + 1, holder = excluded.holder,
				acquired_at = now(), released_at = null
			returning epoch`, l.cfg.Environment, l.cfg.Holder).Scan(&epoch)
	})
	if err != nil {
		return fmt.Errorf("lease: raising the epoch: %w", err)
	}
	l.epoch = uint64(epoch)
	l.clean = !existed || released != nil
	l.cfg.Log.Info("engine lease acquired", "env", l.cfg.Environment, "epoch", epoch, "previous_released_cleanly", l.clean)
	return nil
}

// Epoch is this holder's epoch: higher than every earlier holder's.
func (l *Lease) Epoch() uint64 { return l.epoch }

// Clean reports whether the previous holder released the lease cleanly (or there was none).
func (l *Lease) Clean() bool { return l.clean }

// TTL is how long one confirmation keeps the lease valid.
func (l *Lease) TTL() time.Duration { return l.cfg.TTL }

// WaitOutPrevious waits until one TTL after the acquisition when the previous holder did
// not release cleanly, so that its own Check has failed before this holder writes anything.
// It returns at once after a clean release.
func (l *Lease) WaitOutPrevious(ctx context.Context) error {
	if l.clean {
		return nil
	}
	// The old holder's last confirmation was sent before we got the lock, so its lease ends
	// at the latest one TTL after our acquisition.
	wait := l.cfg.TTL - time.Since(l.start)
	if wait <= 0 {
		return nil
	}
	l.cfg.Log.Warn("engine lease: the previous engine did not release it; waiting out its lease before writing",
		"env", l.cfg.Environment, "wait", wait)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// Check returns nil while the lease is valid: not lost, and confirmed less than TTL ago.
func (l *Lease) Check() error {
	if p := l.lost.Load(); p != nil {
		return *p
	}
	if time.Since(l.start) >= time.Duration(l.validUntil.Load()) {
		return fmt.Errorf("%w: the %s lock was not confirmed within %s", ErrLost, l.cfg.Environment, l.cfg.TTL)
	}
	return nil
}

// Run confirms the lock every TTL/3 until ctx ends (it returns nil) or the lease is lost:
// then onLost, if set, is called once with the cause and Run returns it (wrapping ErrLost).
func (l *Lease) Run(ctx context.Context, onLost func(error)) error {
	t := time.NewTicker(l.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := l.confirm(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			err = fmt.Errorf("%w: %w", ErrLost, err)
			l.lost.CompareAndSwap(nil, &err)
			l.cfg.Log.Error("engine lease lost: the engine stops writing", "env", l.cfg.Environment, "epoch", l.epoch, "error", err)
			if onLost != nil {
				onLost(err)
			}
			return err
		}
	}
}

// confirm asks PostgreSQL whether this session still holds the lock; a confirmation
// keeps the lease valid until TTL after it was sent.
func (l *Lease) confirm(ctx context.Context) error {
	sent := time.Since(l.start)
	ctx, cancel := context.WithTimeout(ctx, l.cfg.TTL*2/3)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return errors.New("lease released")
	}
	var held bool
	err := l.conn.QueryRow(ctx, `select exists (select 1 from pg_locks where locktype = 'advisory'
		and pid = pg_backend_pid() and classid = $1::int::oid and objid = $2::int::oid and objsubid = 2 and granted)`,
		lockClass, l.key).Scan(&held)
	if err != nil {
		return err
	}
	if !held {
		return errors.New("the advisory lock is no longer held by this session")
	}
	l.validUntil.Store(int64(sent + l.cfg.TTL))
	return nil
}

// Release marks the lease released cleanly (the next holder need not wait) and unlocks it.
// Call it after the journal is closed and after Run has returned.
func (l *Lease) Release(ctx context.Context) error {
	err := fmt.Errorf("%w: released", ErrLost)
	l.lost.CompareAndSwap(nil, &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	conn := l.conn
	l.conn = nil
	_, e1 := conn.Exec(ctx, `update engine_leases set released_at = now() where environment = $1 and epoch = $2`,
		l.cfg.Environment, int64(l.epoch))
	_, e2 := conn.Exec(ctx, `select pg_advisory_unlock($1, $2)`, lockClass, l.key)
	e3 := conn.Close(ctx)
	if e := errors.Join(e1, e2, e3); e != nil {
		return fmt.Errorf("lease: release: %w", e)
	}
	return nil
}
