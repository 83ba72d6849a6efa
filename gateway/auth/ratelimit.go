package auth

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Limiter is a set of token buckets keyed by a string (a merchant id, a client address).
// A bucket of limit L holds at most L tokens and refills at L per minute; a request takes
// one. Each bucket is one atomic word (GCRA, the "virtual scheduling" form of a token
// bucket: the time at which the bucket would be full again), so concurrent requests of one
// merchant never wait on a lock. Buckets of idle keys are dropped when the set grows past a
// bound, so a flood of distinct addresses cannot grow memory without limit.
type Limiter struct {
	now     func() time.Time
	buckets sync.Map // string -> *bucket
	count   atomic.Int64
	refused atomic.Uint64 // answers that were not Allowed (for metrics)
}

// Refused is how many Take calls (and throttled Peeks the caller counted) found the
// bucket empty since the limiter was built.
func (l *Limiter) Refused() uint64 { return l.refused.Load() }

type bucket struct {
	limit    int64
	interval int64        // nanoseconds per token: one minute / limit
	full     atomic.Int64 // unix nanoseconds at which the bucket is full again
}

const maxBuckets = 1 << 18

// NewLimiter returns an empty limiter reading time from now (time.Now when nil).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now}
}

// Decision is the outcome of one Take.
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // until one token is back (when refused)
}

func newBucket(limit int64, full int64) *bucket {
	b := &bucket{limit: limit, interval: int64(time.Minute) / limit}
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
		if l.count.Load() >= maxBuckets {
			l.sweep(now)
		}
		var loaded bool
		v, loaded = l.buckets.LoadOrStore(key, newBucket(int64(limit), now))
		if !loaded {
			l.count.Add(1)
		}
	}
	b := v.(*bucket)
	if b.limit != int64(limit) {
		// Keep what was spent, counted in tokens, under the new rate.
		spent := max(0, b.full.Load()-now) / b.interval
		nb := newBucket(int64(limit), now+min(spent, int64(limit))*(int64(time.Minute)/int64(limit)))
		if l.buckets.CompareAndSwap(key, b, nb) {
			b = nb
		} else if v, ok := l.buckets.Load(key); ok {
			b = v.(*bucket)
		}
	}
	window := b.limit * b.interval // the time a full bucket stands for
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
		return Decision{Allowed: true, Limit: limit, Remaining: limit}
	}
	b := v.(*bucket)
	now := l.now().UnixNano()
	window := b.limit * b.interval
	full := b.full.Load()
	next := max(full, now) + b.interval
	if full-now <= window && next-now > window {
		return Decision{Limit: int(b.limit), Reset: time.Duration(full - now), RetryAfter: time.Duration(next - now - window)}
	}
	return Decision{Allowed: true, Limit: int(b.limit), Remaining: int((window - max(0, full-now)) / b.interval), Reset: time.Duration(max(0, full-now))}
}

// sweep drops buckets that have refilled completely (they hold no state worth keeping).
func (l *Limiter) sweep(now int64) {
	l.buckets.Range(func(k, v any) bool {
		if v.(*bucket).full.Load() <= now {
			if l.buckets.CompareAndDelete(k, v) {
				l.count.Add(-1)
			}
		}
		return true
	})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ceilSeconds rounds a duration up to whole seconds, at least 1 when positive.
func ceilSeconds(d time.Duration) int {
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
	h.SetCanonical(hdrReset, strconv.AppendInt(buf[:0], int64(ceilSeconds(d.Reset)), 10))
	if !d.Allowed {
		h.SetCanonical(hdrRetryAfter, strconv.AppendInt(buf[:0], int64(max(1, ceilSeconds(d.RetryAfter))), 10))
	}
}
