package auth

import (
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Limiter is a set of token buckets keyed by a string (a merchant id, a client address).
// A bucket of limit L holds at most L tokens and refills at L per minute; a request takes
// one. Buckets of idle keys are dropped when a shard grows past a bound, so a flood of
// distinct addresses cannot grow memory without limit.
type Limiter struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [64]limiterShard
}

type limiterShard struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	limit  int
	tokens float64
	last   time.Time
}

const maxBucketsPerShard = 4096

// NewLimiter returns an empty limiter reading time from now (time.Now when nil).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	l := &Limiter{now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].buckets = map[string]*bucket{}
	}
	return l
}

// Decision is the outcome of one Take.
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // until one token is back (when refused)
}

// Take spends one token of key's bucket of the given per-minute limit. A changed limit
// (the operator raised it) applies from this call on, keeping the tokens already spent.
func (l *Limiter) Take(key string, limit int) Decision {
	if limit < 1 {
		limit = 1
	}
	now := l.now()
	sh := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	sh.mu.Lock()
	b := sh.buckets[key]
	if b == nil {
		if len(sh.buckets) >= maxBucketsPerShard {
			sh.sweep(now)
		}
		b = &bucket{limit: limit, tokens: float64(limit), last: now}
		sh.buckets[key] = b
	}
	if b.limit != limit {
		spent := float64(b.limit) - b.tokens
		b.limit = limit
		b.tokens = math.Max(0, float64(limit)-spent)
	}
	rate := float64(b.limit) / 60 // tokens per second
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(float64(b.limit), b.tokens+el*rate)
	}
	b.last = now
	d := Decision{Limit: b.limit}
	if b.tokens >= 1 {
		b.tokens--
		d.Allowed = true
	} else {
		d.RetryAfter = seconds((1 - b.tokens) / rate)
	}
	d.Remaining = int(b.tokens)
	d.Reset = seconds((float64(b.limit) - b.tokens) / rate)
	sh.mu.Unlock()
	return d
}

// sweep drops buckets that have refilled completely (they hold no state worth keeping).
func (sh *limiterShard) sweep(now time.Time) {
	for k, b := range sh.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*float64(b.limit)/60 >= float64(b.limit) {
			delete(sh.buckets, k)
		}
	}
	if len(sh.buckets) >= maxBucketsPerShard { // all busy: forget the whole shard rather than grow
		clear(sh.buckets)
	}
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
