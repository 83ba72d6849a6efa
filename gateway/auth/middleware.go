package auth

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// Authenticate is the middleware of every protected route (gateway.Authenticator): it
// identifies the caller by X-Api-Key or Authorization: Bearer, refuses suspended merchants,
// applies the IP whitelist and the route's scope (scopes.go), and only then spends a token
// of the (merchant, environment) rate limit, so a refused request costs the merchant
// nothing (headers on every answer that reached the bucket).
//
// A failed identification spends a token of the client address's failure bucket (IPv6 by
// /64), so keys and tokens cannot be guessed at speed; while that bucket is empty, a key
// that is not already in memory is refused before it is looked up, so a throttled client
// costs no database query (unknown keys are also remembered briefly, see Cache).
func (s *Service) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	ip := s.clients.Of(ctx)
	failKey := ipKey("fail:", ip)
	p, scopes, err := s.identify(ctx, failKey)
	if err != nil {
		var d Decision
		switch {
		case errors.Is(err, errThrottled):
			d = s.perIP.Peek(failKey, s.cfg.AuthRateLimit)
			if d.Allowed { // a token came back since identify looked: still a 429, briefly
				d.Allowed, d.RetryAfter = false, time.Second
			}
			s.perIP.refused.Add(1)
		case errors.Is(err, ErrUnauthorized):
			d = s.perIP.Take(failKey, s.cfg.AuthRateLimit)
		default:
			return p, err
		}
		d.SetHeaders(ctx)
		if !d.Allowed {
			return p, rateLimited(d)
		}
		return p, err
	}
	st, ok, err := s.cache.settings(api.Ctx(ctx), p.MerchantID)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, ErrUnauthorized
	}
	if st.Suspended {
		return p, ErrSuspended
	}
	if err := st.Whitelist.check(ip, ctx.Path()); err != nil {
		return p, err
	}
	if err := s.authorize(ctx, p, scopes); err != nil {
		return p, err
	}
	limit := st.RateLimit
	if limit == 0 {
		limit = s.cfg.DefaultRateLimit
	}
	d := s.merch.Take(tenantKey(p), limit)
	d.SetHeaders(ctx)
	if !d.Allowed {
		return p, rateLimited(d)
	}
	return p, nil
}

// errThrottled: the client's failure bucket is empty and its key is not in memory.
var errThrottled = errors.New("auth: client throttled after failed authentications")

// tenantKey is the rate-limit bucket of a merchant in one environment: sandbox load never
// eats the live budget.
func tenantKey(p api.Principal) string {
	var b [17]byte
	copy(b[:], p.MerchantID[:])
	if p.Environment == api.Live {
		b[16] = 'L'
	} else {
		b[16] = 'S'
	}
	return string(b[:])
}

var bearerPrefix = []byte("bearer ")

// identify finds the caller and, for an API key, its scopes (bearer tokens hold all).
func (s *Service) identify(ctx *fasthttp.RequestCtx, failKey string) (api.Principal, Scope, error) {
	if key := ctx.Request.Header.Peek("X-Api-Key"); len(key) > 0 {
		env, ok := keyEnvironment(key)
		if !ok {
			return api.Principal{}, 0, ErrUnauthorized
		}
		h := sha256.Sum256(key)
		e, known := s.cache.cached(h)
		if !known {
			// Not in memory: the lookup may cost a query, which a throttled client does not get.
			if !s.perIP.Peek(failKey, s.cfg.AuthRateLimit).Allowed {
				return api.Principal{}, 0, errThrottled
			}
			var found bool
			var err error
			e, found, err = s.cache.key(api.Ctx(ctx), h[:])
			if err != nil {
				return api.Principal{}, 0, err
			}
			if !found {
				return api.Principal{}, 0, ErrUnauthorized
			}
		}
		if e == nil || !e.rec.Active || e.rec.Environment != env {
			return api.Principal{}, 0, ErrUnauthorized
		}
		s.cache.touch(e, s.cfg.Now())
		return api.Principal{MerchantID: e.rec.MerchantID, Environment: env, Method: api.ByAPIKey, APIKeyID: e.rec.ID}, e.rec.Scopes, nil
	}
	h := ctx.Request.Header.Peek("Authorization")
	if len(h) <= len(bearerPrefix) || !bytes.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		return api.Principal{}, 0, ErrUnauthorized
	}
	id, err := s.signer.parse(string(bytes.TrimSpace(h[len(bearerPrefix):])))
	if err != nil {
		return api.Principal{}, 0, ErrUnauthorized
	}
	env := api.Sandbox
	switch v := string(ctx.Request.Header.Peek("X-Svc-Environment")); v {
	case "", "sandbox":
	case "live":
		env = api.Live
	default:
		return api.Principal{}, 0, api.Invalid("X-Svc-Environment", "must be sandbox or live")
	}
	return api.Principal{MerchantID: id, Environment: env, Method: api.ByBearer, APIKeyID: uuid.Nil}, AllScopes, nil
}

// limitByIP guards the public /v1/auth routes with the per-address bucket.
func (s *Service) limitByIP(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		d := s.perIP.Take(ipKey("auth:", s.clients.Of(ctx)), s.cfg.AuthRateLimit)
		d.SetHeaders(ctx)
		if !d.Allowed {
			api.Fail(ctx, rateLimited(d))
			return
		}
		next(ctx)
	}
}

// ipKey is the per-address bucket of ip: IPv4 by address, IPv6 by /64 (one host usually
// holds a whole /64, so per-address buckets would be free to multiply).
func ipKey(prefix string, ip netip.Addr) string {
	if ip.Is6() && !ip.Is4In6() {
		a := ip.As16()
		clear(a[8:])
		return prefix + string(a[:])
	}
	b, _ := ip.MarshalBinary()
	return prefix + string(b)
}

func rateLimited(d Decision) error {
	return api.Errorf(api.CodeRateLimited, "rate limit of %d requests per minute exceeded; retry in %d s", d.Limit, max(1, ceilSeconds(d.RetryAfter)))
}

// RateLimited is how many requests were refused with 429 since the service was built: by
// the per-merchant bucket, and by the per-address bucket of /v1/auth and failed
// authentications (for metrics).
func (s *Service) RateLimited() (merchant, address uint64) {
	return s.merch.Refused(), s.perIP.Refused()
}
