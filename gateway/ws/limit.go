package ws

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/ratelimit"
)

// IPLimiter limits public market data (REST and WebSocket) without credentials: a
// per-minute token bucket per client address from gateway/ratelimit, holding a short burst
// (a tenth of the limit, at least 10) rather than a minute's worth. Idle buckets are
// dropped as the set grows (see ratelimit.Limiter), so a flood of addresses cannot grow
// memory without limit.
type IPLimiter struct {
	l *ratelimit.Limiter
}

// publicBurst is what a public bucket holds: a tenth of the per-minute limit, at least 10.
func publicBurst(limit int) int { return max(limit/10, 10) }

// NewIPLimiter returns an empty limiter (now nil: time.Now).
func NewIPLimiter(now func() time.Time) *IPLimiter {
	return &IPLimiter{l: ratelimit.NewBurst(now, publicBurst)}
}

// Refused is how many Take calls found the bucket empty since the limiter was built.
func (l *IPLimiter) Refused() uint64 { return l.l.Refused() }

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
	d := l.l.Take(key, limit)
	return Decision{Allowed: d.Allowed, Limit: d.Limit, Remaining: d.Remaining, RetryAfter: d.RetryAfter}
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
	return ratelimit.AddrKey("", a)
}
