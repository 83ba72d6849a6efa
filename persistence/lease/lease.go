// Package lease owns the engine lease: the guarantee that one engine at a time writes an
// environment's journal and acknowledges commands. A lease is a row of engine_leases per
// environment with an epoch, raised on every acquisition, and an expiry on PostgreSQL's
// clock (expires_at). The engine stamps the epoch on every journal record, so readers drop
// what a deposed engine still wrote after a newer one fenced the journal.
//
// The holder renews expires_at to now()+TTL every TTL/3 (Run). A contender takes the lease
// only once expires_at has passed on the database's clock (or the holder released it).
// The holder's own validity ends earlier, on its monotonic clock: TTL minus Margin after it
// SENT the last renewal that succeeded. The database stamped that renewal's expiry later
// than it was sent, so as long as the two clocks run at rates that differ by less than
// Margin/TTL (and PostgreSQL's clock is not stepped forward by more than the margin), the
// holder's Check fails before any contender can take the lease. The journal calls Check
// before writing a group and again after the group is durable, before acknowledging it; a
// record found durable while the lease was valid precedes the next holder's fence, so the
// next holder replays it: nothing acknowledged is lost, and no two holders acknowledge in
// overlapping terms. docs/cluster.md, "The guarantee", states it with its assumptions.
//
// Nothing here depends on a connection staying open: a holder cut off from the database
// (a partition, a pause of the process longer than the lease) simply stops being valid, and
// the lease expires on the database's clock so a standby takes over. A holder that wakes
// after its term finds its epoch gone at the next renewal (ErrLost) and, until a renewal
// succeeds, Check fails: it answers nothing before it knows its epoch.
package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultTTL is how long a renewal keeps the lease on the database's clock.
const DefaultTTL = 3 * time.Second

// DefaultMargin is the margin of a TTL when Config.Margin is zero: a tenth of it (300 ms of
// the default 3 s). The holder stops acknowledging TTL-Margin after it sent its last good
// renewal, while the database keeps the lease until TTL after it received it. The margin
// covers a difference of clock rates (10 %, where quartz and NTP slewing stay under 0.1 %)
// and a forward step of the database's clock smaller than it.
func DefaultMargin(ttl time.Duration) time.Duration { return ttl / 10 }

var (
	// ErrHeld is wrapped by TryAcquire's error when another engine holds the lease.
	ErrHeld = errors.New("engine lease held by another engine")
	// ErrLost is wrapped by Check's and Run's error once the lease is no longer valid.
	ErrLost = errors.New("engine lease lost")
	// errTaken: a renewal found the lease under another epoch (or released).
	errTaken = errors.New("the lease is held under a newer epoch (another engine took over)")
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

// Config says where and what to lease.
type Config struct {
	URL         string // PostgreSQL URL; the lease opens its own connection
	Environment string // sandbox or live
	Holder      string // who is asking, shown to contenders (e.g. host:pid)
	TTL         time.Duration
	// Margin is how much earlier than the database the holder considers its lease over
	// (0: DefaultMargin(TTL)). It must be below TTL/3, the renewal period.
	Margin time.Duration
	Log    *slog.Logger
}

// Lease is a held engine lease. Check is safe for concurrent use; Run and Release are
// called by the lease's owner.
type Lease struct {
	cfg   Config
	epoch uint64
	clean bool // the previous holder released cleanly (or there was none)
	start time.Time

	mu   sync.Mutex // the connection
	conn *pgx.Conn

	validUntil atomic.Int64 // nanoseconds since start (monotonic): TTL-Margin after the last good renewal was sent
	lost       atomic.Pointer[error]
}

// TryAcquire takes the lease of cfg.Environment if nobody holds it, raising its epoch. A
// lease held elsewhere is a *HeldError (errors.Is ErrHeld).
func TryAcquire(ctx context.Context, cfg Config) (*Lease, error) {
	return Acquire(ctx, cfg, 0, 0)
}

// Acquire takes the lease, waiting for it to be free (released, or expired on the
// database's clock) for up to patience (0: not at all, a negative value: until ctx ends),
// trying every poll interval: a standby, or a restart that finds its own previous lease
// not yet expired. When it stops waiting it returns the last *HeldError. ctx bounds the
// connection too.
func Acquire(ctx context.Context, cfg Config, poll, patience time.Duration) (*Lease, error) {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Margin <= 0 {
		cfg.Margin = DefaultMargin(cfg.TTL)
	}
	if cfg.Margin >= cfg.TTL/3 {
		return nil, fmt.Errorf("lease: margin %s must be below a third of the TTL %s", cfg.Margin, cfg.TTL)
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
	l := &Lease{cfg: cfg}
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
		// A standby waiting for ever rides out the database's absence too (a partition).
		if (!errors.Is(err, ErrHeld) && patience >= 0) || patience == 0 {
			l.closeConn()
			return nil, err
		}
		if !errors.Is(err, ErrHeld) {
			cfg.Log.Warn("engine lease: cannot ask the database; trying again", "env", cfg.Environment, "error", err)
		}
		select {
		case <-ctx.Done():
			l.closeConn()
			return nil, err
		case <-giveUp:
			l.closeConn()
			return nil, err
		case <-time.After(poll):
		}
	}
}

// connect returns the lease's connection, opening it when there is none or it broke.
// Called with mu held.
func (l *Lease) connect(ctx context.Context) (*pgx.Conn, error) {
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	conn, err := pgx.Connect(ctx, l.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("lease: connecting: %w", err)
	}
	l.conn = conn
	return conn, nil
}

func (l *Lease) closeConn() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		_ = l.conn.Close(context.Background())
		l.conn = nil
	}
}

// ttlMicros is the TTL as the interval arithmetic of the queries takes it.
func (l *Lease) ttlMicros() int64 { return l.cfg.TTL.Microseconds() }

func (l *Lease) acquire(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(l.cfg.TTL, 5*time.Second))
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	conn, err := l.connect(ctx)
	if err != nil {
		return err
	}
	// Sent before the database stamps the expiry: the local deadline is earlier than its.
	sent := time.Now()
	var (
		epoch int64
		held  *HeldError
	)
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var (
			cur      HeldError
			released *time.Time
			expired  bool
		)
		err := tx.QueryRow(ctx, `select epoch, holder, acquired_at, released_at, expires_at <= clock_timestamp()
			from engine_leases where environment = $1 for update`, l.cfg.Environment).
			Scan(&cur.Epoch, &cur.Holder, &cur.Since, &released, &expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			l.clean = true
			err = tx.QueryRow(ctx, `insert into engine_leases (environment, epoch, holder, acquired_at, expires_at)
				values ($1, 1, $2, clock_timestamp(), clock_timestamp() + $3 * interval '1 microsecond')
				on conflict (environment) do nothing returning epoch`, l.cfg.Environment, l.cfg.Holder, l.ttlMicros()).Scan(&epoch)
			if errors.Is(err, pgx.ErrNoRows) { // another contender inserted it first
				held = &HeldError{Environment: l.cfg.Environment}
				return nil
			}
		case err != nil:
			return err
		case released == nil && !expired:
			cur.Environment = l.cfg.Environment
			held = &cur
			return nil
		default:
			l.clean = released != nil
			err = tx.QueryRow(ctx, `update engine_leases set epoch = epoch + 1, holder = $2, acquired_at = clock_timestamp(),
					expires_at = clock_timestamp() + $3 * interval '1 microsecond', released_at = null
				where environment = $1 returning epoch`, l.cfg.Environment, l.cfg.Holder, l.ttlMicros()).Scan(&epoch)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `insert into engine_lease_terms (environment, epoch, holder, acquired_at)
			values ($1, $2, $3, clock_timestamp())`, l.cfg.Environment, epoch, l.cfg.Holder)
		return err
	})
	if err != nil {
		if held != nil {
			return held
		}
		return fmt.Errorf("lease: %w", err)
	}
	if held != nil {
		return held
	}
	l.start = sent
	l.validUntil.Store(int64(l.cfg.TTL - l.cfg.Margin))
	l.epoch = uint64(epoch)
	l.cfg.Log.Info("engine lease acquired", "env", l.cfg.Environment, "epoch", epoch, "previous_released_cleanly", l.clean,
		"ttl", l.cfg.TTL, "margin", l.cfg.Margin)
	return nil
}

// Epoch is this holder's epoch: higher than every earlier holder's.
func (l *Lease) Epoch() uint64 { return l.epoch }

// Clean reports whether the previous holder released the lease cleanly (or there was none).
func (l *Lease) Clean() bool { return l.clean }

// TTL is how long one renewal keeps the lease on the database's clock.
func (l *Lease) TTL() time.Duration { return l.cfg.TTL }

// Margin is how much earlier than the database this holder considers its lease over.
func (l *Lease) Margin() time.Duration { return l.cfg.Margin }

// WaitOutPrevious returns at once: a lease is only taken once the previous one expired on
// the database's clock, and the previous holder stopped acknowledging a margin before that
// on its own (see the package doc). It stays for callers written when the lease was an
// advisory lock whose new holder had to wait one TTL.
func (l *Lease) WaitOutPrevious(ctx context.Context) error { return ctx.Err() }

// Check returns nil while the lease is valid: not lost, and renewed (the renewal sent) less
// than TTL-Margin ago.
func (l *Lease) Check() error {
	if p := l.lost.Load(); p != nil {
		return *p
	}
	if time.Since(l.start) >= time.Duration(l.validUntil.Load()) {
		return fmt.Errorf("%w: the %s lease was not renewed within %s (TTL %s less a margin of %s)", ErrLost,
			l.cfg.Environment, l.cfg.TTL-l.cfg.Margin, l.cfg.TTL, l.cfg.Margin)
	}
	return nil
}

// Run renews the lease every TTL/3 until ctx ends (it returns nil) or the lease is lost:
// another engine holds the epoch, or no renewal succeeded before the local deadline (the
// database unreachable, or this process paused). Then onLost, if set, is called once with
// the cause and Run returns it (wrapping ErrLost). A renewal that fails while the lease is
// still valid is retried at the next tick.
func (l *Lease) Run(ctx context.Context, onLost func(error)) error {
	t := time.NewTicker(l.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		// A pause (SIGSTOP, a stalled VM) longer than the lease ends it here, before any
		// renewal could make it look valid again: whoever took over may be writing.
		err := l.Check()
		if err == nil {
			err = l.renew(ctx)
			if err != nil && !errors.Is(err, errTaken) && l.Check() == nil {
				if ctx.Err() != nil {
					return nil
				}
				l.cfg.Log.Warn("engine lease: renewal failed; still valid, retrying", "env", l.cfg.Environment, "epoch", l.epoch, "error", err)
				continue
			}
			if err == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, ErrLost) {
			err = fmt.Errorf("%w: %w", ErrLost, err)
		}
		l.lost.CompareAndSwap(nil, &err)
		l.cfg.Log.Error("engine lease lost: the engine stops writing", "env", l.cfg.Environment, "epoch", l.epoch, "error", err)
		if onLost != nil {
			onLost(err)
		}
		return err
	}
}

// renew pushes the expiry to TTL after now on the database's clock; the local validity
// becomes TTL-Margin after the renewal was sent.
func (l *Lease) renew(ctx context.Context) error {
	sent := time.Since(l.start)
	// No use waiting past the local deadline: the lease is over by then either way.
	wait := time.Duration(l.validUntil.Load()) - sent
	ctx, cancel := context.WithTimeout(ctx, max(wait, time.Millisecond))
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost.Load() != nil {
		return errors.New("lease released")
	}
	conn, err := l.connect(ctx)
	if err != nil {
		return err
	}
	var one int
	err = conn.QueryRow(ctx, `update engine_leases set expires_at = clock_timestamp() + $3 * interval '1 microsecond'
		where environment = $1 and epoch = $2 and released_at is null returning 1`,
		l.cfg.Environment, int64(l.epoch), l.ttlMicros()).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return errTaken
	}
	if err != nil {
		return err
	}
	l.validUntil.Store(int64(sent + l.cfg.TTL - l.cfg.Margin))
	return nil
}

// Release marks the lease released (the next holder need not wait for it to expire) and
// closes the connection. Call it after the journal is closed and after Run has returned.
func (l *Lease) Release(ctx context.Context) error {
	err := fmt.Errorf("%w: released", ErrLost)
	l.lost.CompareAndSwap(nil, &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	conn, cerr := l.connect(ctx)
	if cerr != nil {
		return fmt.Errorf("lease: release: %w (the lease expires by itself within %s)", cerr, l.cfg.TTL)
	}
	l.conn = nil
	_, e1 := conn.Exec(ctx, `update engine_leases set released_at = clock_timestamp(), expires_at = clock_timestamp()
		where environment = $1 and epoch = $2 and released_at is null`, l.cfg.Environment, int64(l.epoch))
	e2 := conn.Close(ctx)
	if e := errors.Join(e1, e2); e != nil {
		return fmt.Errorf("lease: release: %w", e)
	}
	return nil
}
