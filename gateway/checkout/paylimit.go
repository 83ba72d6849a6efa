package checkout

import (
	"net/http"
	"net/netip"
	"strconv"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/ratelimit"
)

// PayLimits bound what one client address may ask of the public hosted pages (/pay/*),
// which need no credentials: without a limit anyone could open payment attempts (each one a
// virtual account request) or load pages (database reads) as fast as they can send.
type PayLimits struct {
	ReadsPerMinute  int // GET /pay/{slug} and its status poll (the page polls every 2 s)
	WritesPerMinute int // POST /pay/{slug}/transfer and /simulate
	// ClientIP finds the caller's address (behind trusted proxies, from X-Forwarded-For);
	// nil: the socket's peer.
	ClientIP func(*fasthttp.RequestCtx) netip.Addr
}

// DefaultPayLimits are the limits New starts with.
func DefaultPayLimits() PayLimits { return PayLimits{ReadsPerMinute: 120, WritesPerMinute: 20} }

// WithPayLimits replaces the limits of the hosted pages; it returns rs.
func (rs *Routes) WithPayLimits(l PayLimits) *Routes {
	d := DefaultPayLimits()
	if l.ReadsPerMinute <= 0 {
		l.ReadsPerMinute = d.ReadsPerMinute
	}
	if l.WritesPerMinute <= 0 {
		l.WritesPerMinute = d.WritesPerMinute
	}
	if l.ClientIP == nil {
		l.ClientIP = peerIP
	}
	rs.limits = l
	return rs
}

func peerIP(ctx *fasthttp.RequestCtx) netip.Addr {
	a, _ := netip.AddrFromSlice(ctx.RemoteIP())
	return a.Unmap()
}

// limited wraps a hosted-page handler with the per-address limit; a refused request is
// 429 with Retry-After, as an HTML page or (json) as the API's envelope.
func (rs *Routes) limited(write bool, json bool, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		kind, limit := byte('r'), rs.limits.ReadsPerMinute
		if write {
			kind, limit = 'w', rs.limits.WritesPerMinute
		}
		d := rs.limiter.Take(ratelimit.AddrKey(string(kind), rs.limits.ClientIP(ctx)), limit) // IPv6 by /64
		if d.Allowed {
			next(ctx)
			return
		}
		d.SetHeaders(ctx)
		wait := int((d.RetryAfter + 999_999_999) / 1_000_000_000)
		if json {
			api.Fail(ctx, api.Errorf(api.CodeRateLimited, "too many requests from this address; retry in %d s", max(1, wait)))
			return
		}
		rs.render(ctx, pageData{Status: http.StatusTooManyRequests, Heading: "Too many requests",
			Message: "Please wait " + strconv.Itoa(max(1, wait)) + " seconds and try again."})
	}
}

// RateLimited is how many hosted-page requests the per-address limits refused with 429
// (for metrics).
func (rs *Routes) RateLimited() uint64 { return rs.limiter.Refused() }
