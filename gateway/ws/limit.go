package ws

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// IPLimiter is a set of per-minute token buckets keyed by client address (GCRA: each
// bucket is the time at which it is full again). It limits public market data (REST
// and WebSocket) without credentials. Idle buckets are dropped when the set grows past
// a bound, so a flood of addresses cannot grow memory without limit.
type IPLimiter struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]int64 // key -> unix ns at which the bucket is full again
	pruned  atomic.Int64
	refused atomic.Uint64 // Take answers that were not Allowed (for metrics)
}

// Refused is how many Take calls found the bucket empty since the limiter was built.
func (l *IPLimiter) Refused() uint64 { return l.refused.Load() }

const maxIPBuckets = 1 << 16

// NewIPLimiter returns an empty limiter (now nil: time.Now).
func NewIPLimiter(now func() time.Time) *IPLimiter {
	if now == nil {
		now = time.Now
	}
	return &IPLimiter{now: now, buckets: map[string]int64{}}
}

// Decision is the outcome of one Take.
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	RetryAfter time.Duration
}

// Take spends one token of key's bucket of limit tokens per minute (burst: limit/10,
// at least 10).
func (l *IPLimiter) Take(key string, limit int) Decision {
	limit = max(limit, 1)
	burst := int64(max(limit/10, 10))
	per := int64(time.Minute) / int64(limit)
	now := l.now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, ok := l.buckets[key]
	if !ok || full < now {
		full = now
	}
	next := full + per
	if next-now > burst*per {
		l.refused.Add(1)
		return Decision{Limit: limit, RetryAfter: time.Duration(next - now - burst*per)}
	}
	if !ok && len(l.buckets) >= maxIPBuckets {
		for k, v := range l.buckets {
			if v < now {
				delete(l.buckets, k)
			}
		}
		l.pruned.Add(1)
	}
	l.buckets[key] = next
	return Decision{Allowed: true, Limit: limit, Remaining: int(burst - (next-now+per-1)/per)}
}

// Fail answers 429 RATE_LIMITED with Retry-After.
func (d Decision) Fail(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(int(d.RetryAfter/time.Second)+1))
	ctx.Response.Header.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	ctx.Response.Header.Set("X-RateLimit-Remaining", "0")
	api.Fail(ctx, api.NewError(api.CodeRateLimited, "too many requests without credentials from this address"))
}

// IPKey is the limiter key of a client address: IPv4 as is, IPv6 by its /64.
func IPKey(ip net.IP) string {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return "?"
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
