package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Shared is a per-minute limit that holds across every gateway: the requests of a key (a
// merchant in an environment) are counted per window in one PostgreSQL row
// (rate_limit_windows), which no gateway can push past the limit. A gateway does not ask
// for each request: it reserves an allowance, a chunk of the window's limit, and spends it
// from memory; it asks again when the allowance is spent, and not at all once the window's
// count reached the limit (until the window ends). So a request costs a mutex, and one in
// many a round trip.
//
// Admitted requests never exceed the limit per window. They fall short of it only by what
// other gateways reserved and did not spend before the window ended: an allowance is at
// most a fiftieth of the limit and a quarter of what the window has left, so with G
// gateways busy on one key the shortfall stays under about G/50 of the limit (10 % at five
// gateways; less in practice, as the quarters shrink towards the end of the window).
// The limit is the key's, first come first served across gateways, not a share per
// gateway: requests that reach a gateway after the window's count reached the limit are
// refused until the window ends, however few that gateway admitted; a gateway refuses only
// once the window's count reached the limit.
//
// When PostgreSQL cannot be asked within the timeout, Take admits (the per-node buckets
// still apply): a database outage must not become an API outage.
type Shared struct {
	pool    *pgxpool.Pool
	now     func() time.Time
	window  time.Duration
	timeout time.Duration
	log     *slog.Logger

	keys      sync.Map // string -> *allowance
	lastSweep atomic.Int64
	failOpen  atomic.Uint64
	trips     atomic.Uint64
}

// SharedOptions configure a Shared; zero values take the defaults in brackets.
type SharedOptions struct {
	Window  time.Duration    // the counting window; the limit is per minute, scaled to it [1 minute]
	Timeout time.Duration    // a reservation's round trip before failing open [250ms]
	Now     func() time.Time // [time.Now]
	Log     *slog.Logger
}

type allowance struct {
	mu        sync.Mutex
	tokens    int64
	until     time.Time // local end of the window the tokens belong to
	exhausted bool      // the window's count reached the limit
}

// NewShared returns a shared limiter over pool (migration 025's table).
func NewShared(pool *pgxpool.Pool, o SharedOptions) *Shared {
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Shared{pool: pool, now: o.Now, window: o.Window, timeout: o.Timeout, log: o.Log}
}

// Stats: reservations made (round trips) and requests admitted because PostgreSQL could
// not be asked.
func (s *Shared) Stats() (roundTrips, failedOpen uint64) { return s.trips.Load(), s.failOpen.Load() }

// Take spends one request of key's limit (per minute). Refused, RetryAfter is the time
// until the window ends.
func (s *Shared) Take(ctx context.Context, key string, perMinute int) Decision {
	limit := max(int64(perMinute)*int64(s.window)/int64(time.Minute), 1)
	v, ok := s.keys.Load(key)
	if !ok {
		v, _ = s.keys.LoadOrStore(key, &allowance{})
	}
	a := v.(*allowance)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := s.now()
	if !now.Before(a.until) {
		a.tokens, a.exhausted = 0, false
	}
	if a.tokens > 0 {
		a.tokens--
		return Decision{Allowed: true, Limit: perMinute, Remaining: int(a.tokens), Reset: a.until.Sub(now)}
	}
	if a.exhausted {
		return Decision{Limit: perMinute, Reset: a.until.Sub(now), RetryAfter: a.until.Sub(now)}
	}
	grant, left, err := s.reserve(ctx, key, limit)
	if err != nil {
		if s.failOpen.Add(1)%1000 == 1 {
			s.log.Warn("shared rate limit: PostgreSQL not answering; admitting on the per-node limit only", "error", err)
		}
		return Decision{Allowed: true, Limit: perMinute}
	}
	a.until = now.Add(left)
	if grant == 0 {
		a.exhausted = true
		return Decision{Limit: perMinute, Reset: left, RetryAfter: left}
	}
	a.tokens = grant - 1
	return Decision{Allowed: true, Limit: perMinute, Remaining: int(a.tokens), Reset: left}
}

// reserve takes an allowance of key's current window: at most limit/50 and a quarter of
// what the window has left (at least 1), never past the limit. It returns the grant (0:
// the window is spent) and the time until the window ends, both by the database's clock.
func (s *Shared) reserve(ctx context.Context, key string, limit int64) (grant int64, left time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.trips.Add(1)
	chunk := max(limit/50, 1)
	w := s.window.Microseconds()
	var leftMicros int64
	err = s.pool.QueryRow(ctx, `with p as (select $1::text as key, $2::bigint as chunk, $3::bigint as lim, $4::bigint as w),
		w as (select to_timestamp((floor(extract(epoch from clock_timestamp()) * 1e6 / p.w) * p.w / 1e6)::float8) as start from p)
		insert into rate_limit_windows as r (key, window_start, used, last_grant)
		select p.key, w.start, least(p.lim, greatest(1, least(p.chunk, p.lim / 4))), least(p.lim, greatest(1, least(p.chunk, p.lim / 4)))
		from p, w
		on conflict (key, window_start) do update set
			used = r.used + least(greatest(0, $3::bigint - r.used), greatest(1, least($2::bigint, ($3::bigint - r.used) / 4))),
			last_grant = least(greatest(0, $3::bigint - r.used), greatest(1, least($2::bigint, ($3::bigint - r.used) / 4)))
		returning last_grant, (extract(epoch from (window_start - clock_timestamp())) * 1e6)::bigint + $4::bigint`,
		key, chunk, limit, w).Scan(&grant, &leftMicros)
	if err != nil {
		return 0, 0, fmt.Errorf("ratelimit: reserve: %w", err)
	}
	if last := s.lastSweep.Load(); time.Since(time.Unix(0, last)) > 5*s.window && s.lastSweep.CompareAndSwap(last, time.Now().UnixNano()) {
		go s.sweep()
	}
	return grant, time.Duration(max(leftMicros, 0)) * time.Microsecond, nil
}

// sweep deletes windows long past.
func (s *Shared) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `delete from rate_limit_windows where window_start < clock_timestamp() - $1 * interval '1 microsecond'`,
		(5 * s.window).Microseconds()); err != nil {
		s.log.Warn("shared rate limit: sweeping old windows", "error", err)
	}
}
