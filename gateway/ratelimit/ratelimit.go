// Package ratelimit owns the gateway's token buckets: per merchant and environment (the
// authenticated API), per client address (the public /v1/auth routes, failed
// authentications, hosted checkout pages, public market data over REST and WebSocket), and
// the X-RateLimit-* and Retry-After headers of their answers. It knows nothing of who a key
// stands for: callers choose the key and the limit.
package ratelimit

import (
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Limiter is a set of token buckets keyed by a string (a merchant id, a client address).
// A bucket of limit L refills at L tokens per minute and holds at most its burst (L unless
// the limiter was built with NewBurst); a request takes one. Each bucket is one atomic word
// (GCRA, the "virtual scheduling" form of a token bucket: the time at which the bucket
// would be full again), so concurrent requests of one key never wait on a lock.
//
// Buckets of idle keys are dropped when the set reaches a bound (MaxBuckets), so a flood of
// distinct addresses cannot grow memory without limit. A sweep visits every bucket, so the
// bound doubles when a sweep frees too little (every bucket still in use) and falls back
// when the set shrinks: sweeps stay amortised O(1) per new key instead of one full scan per
// new key once the set is full of live buckets.
type Limiter struct {
	now        func() time.Time
	burst      func(limit int) int // nil: the limit itself
	maxBuckets int64
	buckets    sync.Map // string -> *bucket
	count      atomic.Int64
	sweepAt    atomic.Int64  // bucket count that triggers the next sweep
	refused    atomic.Uint64 // answers that were not Allowed (for metrics)
}

// MaxBuckets is the number of buckets at which a limiter first sweeps idle ones, unless
// Options says otherwise.
const MaxBuckets = 1 << 18

// Options configure a limiter; zero values take the defaults in brackets.
type Options struct {
	Now        func() time.Time    // [time.Now]
	Burst      func(limit int) int // tokens a bucket of a limit holds, at least 1 [the limit]
	MaxBuckets int                 // buckets at which idle ones are first swept [MaxBuckets]
}

type bucket struct {
	limit    int64
	capacity int64        // tokens a full bucket holds
	interval int64        // nanoseconds per token: one minute / limit
	full     atomic.Int64 // unix nanoseconds at which the bucket is full again
}

// New returns an empty limiter whose buckets hold a minute's worth of tokens (capacity =
// the per-minute limit), reading time from now (time.Now when nil).
func New(now func() time.Time) *Limiter { return NewWith(Options{Now: now}) }

// NewBurst is New with buckets that hold burst(limit) tokens (at least 1) while still
// refilling at limit per minute: the public market-data limits allow a short burst, not a
// minute's worth at once.
func NewBurst(now func() time.Time, burst func(limit int) int) *Limiter {
	return NewWith(Options{Now: now, Burst: burst})
}

// NewWith returns an empty limiter configured by o.
func NewWith(o Options) *Limiter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = MaxBuckets
	}
	l := &Limiter{now: o.Now, burst: o.Burst, maxBuckets: int64(o.MaxBuckets)}
	l.sweepAt.Store(l.maxBuckets)
	return l
}

// Refused is how many Take calls (and throttled Peeks the caller counted with CountRefusal)
// found the bucket empty since the limiter was built.
func (l *Limiter) Refused() uint64 { return l.refused.Load() }

// CountRefusal counts a refusal the caller decided on from a Peek.
func (l *Limiter) CountRefusal() { l.refused.Add(1) }

// Decision is the outcome of one Take or Peek.
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // until one token is back (when refused)
}

func (l *Limiter) newBucket(limit int64, full int64) *bucket {
	capacity := limit
	if l.burst != nil {
		capacity = int64(max(l.burst(int(limit)), 1))
	}
	b := &bucket{limit: limit, capacity: capacity, interval: int64(time.Minute) / limit}
	b.full.Store(full)
	return b
}

// Take spends one token of key's bucket of the given per-minute limit. A changed limit
// (the operator raised it) applies from this call on, keeping the tokens already spent.
func (l *Limiter) Take(key string, limit int) Decision {
	if limit < 1 {
		limit = 1
	}
	now := l.now().UnixNano()
	v, ok := l.buckets.Load(key)
	if !ok {
		if l.count.Load() >= l.sweepAt.Load() {
			l.sweep(now)
		}
		var loaded bool
		v, loaded = l.buckets.LoadOrStore(key, l.newBucket(int64(limit), now))
		if !loaded {
			l.count.Add(1)
		}
	}
	b := v.(*bucket)
	if b.limit != int64(limit) {
		// Keep what was spent, counted in tokens, under the new rate.
		spent := max(0, b.full.Load()-now) / b.interval
		nb := l.newBucket(int64(limit), now)
		nb.full.Store(now + min(spent, nb.capacity)*nb.interval)
		if l.buckets.CompareAndSwap(key, b, nb) {
			b = nb
		} else if v, ok := l.buckets.Load(key); ok {
			b = v.(*bucket)
		}
	}
	window := b.capacity * b.interval // the time a full bucket stands for
	for {
		full := b.full.Load()
		if full-now > window { // the clock stepped back: start from a full bucket
			if !b.full.CompareAndSwap(full, now) {
				continue
			}
			full = now
		}
		next := max(full, now) + b.interval
		if next-now > window {
			wait := next - now - window
			l.refused.Add(1)
			return Decision{Limit: int(b.limit), Remaining: 0, Reset: time.Duration(full - now), RetryAfter: time.Duration(wait)}
		}
		if b.full.CompareAndSwap(full, next) {
			return Decision{Allowed: true, Limit: int(b.limit), Remaining: int((window - (next - now)) / b.interval),
				Reset: time.Duration(next - now)}
		}
	}
}

// Peek reports whether key's bucket has a token left, without spending it. A key with no
// bucket yet has a full one.
func (l *Limiter) Peek(key string, limit int) Decision {
	if limit < 1 {
		limit = 1
	}
	v, ok := l.buckets.Load(key)
	if !ok {
		capacity := limit
		if l.burst != nil {
			capacity = max(l.burst(limit), 1)
		}
		return Decision{Allowed: true, Limit: limit, Remaining: capacity}
	}
	b := v.(*bucket)
	now := l.now().UnixNano()
	window := b.capacity * b.interval
	full := b.full.Load()
	next := max(full, now) + b.interval
	if full-now <= window && next-now > window {
		return Decision{Limit: int(b.limit), Reset: time.Duration(full - now), RetryAfter: time.Duration(next - now - window)}
	}
	return Decision{Allowed: true, Limit: int(b.limit), Remaining: int((window - max(0, full-now)) / b.interval), Reset: time.Duration(max(0, full-now))}
}

// sweep drops buckets that have refilled completely (they hold no state worth keeping) and
// sets the count at which the next sweep runs: twice what is left, at least the bound.
func (l *Limiter) sweep(now int64) {
	l.buckets.Range(func(k, v any) bool {
		if v.(*bucket).full.Load() <= now {
			if l.buckets.CompareAndDelete(k, v) {
				l.count.Add(-1)
			}
		}
		return true
	})
	l.sweepAt.Store(max(l.maxBuckets, 2*l.count.Load()))
}

// Len is the number of buckets held.
func (l *Limiter) Len() int { return int(l.count.Load()) }

// AddrKey is the bucket key of a client address under prefix: IPv4 by address, IPv6 by its
// /64 (one host usually holds a whole /64, so per-address buckets would be free to
// multiply). IPv4-mapped IPv6 counts as IPv4.
func AddrKey(prefix string, a netip.Addr) string {
	if !a.IsValid() {
		return prefix
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		clear(b[8:])
		return prefix + string(b[:])
	}
	b := a.As4()
	return prefix + string(b[:])
}

// CeilSeconds rounds a duration up to whole seconds, at least 1 when positive.
func CeilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// Header names in fasthttp's canonical form (set without normalising on every request).
var (
	hdrLimit      = []byte("X-Ratelimit-Limit")
	hdrRemaining  = []byte("X-Ratelimit-Remaining")
	hdrReset      = []byte("X-Ratelimit-Reset")
	hdrRetryAfter = []byte("Retry-After")
)

// SetHeaders writes X-RateLimit-Limit, -Remaining and -Reset (seconds until the bucket is
// full again), and Retry-After (seconds) when refused.
func (d Decision) SetHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	var buf [20]byte
	h.SetCanonical(hdrLimit, strconv.AppendInt(buf[:0], int64(d.Limit), 10))
	h.SetCanonical(hdrRemaining, strconv.AppendInt(buf[:0], int64(d.Remaining), 10))
	h.SetCanonical(hdrReset, strconv.AppendInt(buf[:0], int64(CeilSeconds(d.Reset)), 10))
	if !d.Allowed {
		h.SetCanonical(hdrRetryAfter, strconv.AppendInt(buf[:0], int64(max(1, CeilSeconds(d.RetryAfter))), 10))
	}
}
