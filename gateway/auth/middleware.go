package auth

import (
	"bytes"
	"crypto/sha256"
	"net/netip"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// Authenticate is the middleware of every protected route (gateway.Authenticator): it
// identifies the caller by X-Api-Key or Authorization: Bearer, refuses suspended
// merchants, applies the merchant's rate limit (headers on every answer) and IP whitelist.
// A failed identification spends a token of the client address's bucket, so keys and
// tokens cannot be guessed at speed.
func (s *Service) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	ip := s.clients.Of(ctx)
	p, err := s.identify(ctx)
	if err != nil {
		d := s.perIP.Take(ipKey("fail:", ip), s.cfg.AuthRateLimit)
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
	limit := st.RateLimit
	if limit == 0 {
		limit = s.cfg.DefaultRateLimit
	}
	d := s.merch.Take(string(p.MerchantID[:]), limit)
	d.SetHeaders(ctx)
	if !d.Allowed {
		return p, rateLimited(d)
	}
	if st.Suspended {
		return p, ErrSuspended
	}
	if err := st.Whitelist.check(ip, ctx.Path()); err != nil {
		return p, err
	}
	return p, nil
}

var bearerPrefix = []byte("bearer ")

func (s *Service) identify(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	if key := ctx.Request.Header.Peek("X-Api-Key"); len(key) > 0 {
		env, ok := keyEnvironment(key)
		if !ok {
			return api.Principal{}, ErrUnauthorized
		}
		h := sha256.Sum256(key)
		e, found, err := s.cache.key(api.Ctx(ctx), h[:])
		if err != nil {
			return api.Principal{}, err
		}
		if !found || !e.rec.Active || e.rec.Environment != env {
			return api.Principal{}, ErrUnauthorized
		}
		s.cache.touch(e, s.cfg.Now())
		return api.Principal{MerchantID: e.rec.MerchantID, Environment: env, Method: api.ByAPIKey, APIKeyID: e.rec.ID}, nil
	}
	h := ctx.Request.Header.Peek("Authorization")
	if len(h) <= len(bearerPrefix) || !bytes.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		return api.Principal{}, ErrUnauthorized
	}
	id, err := s.signer.parse(string(bytes.TrimSpace(h[len(bearerPrefix):])))
	if err != nil {
		return api.Principal{}, ErrUnauthorized
	}
	env := api.Sandbox
	switch v := string(ctx.Request.Header.Peek("X-Svc-Environment")); v {
	case "", "sandbox":
	case "live":
		env = api.Live
	default:
		return api.Principal{}, api.Invalid("X-Svc-Environment", "must be sandbox or live")
	}
	return api.Principal{MerchantID: id, Environment: env, Method: api.ByBearer, APIKeyID: uuid.Nil}, nil
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

func ipKey(prefix string, ip netip.Addr) string {
	b, _ := ip.MarshalBinary()
	return prefix + string(b)
}

func rateLimited(d Decision) error {
	return api.Errorf(api.CodeRateLimited, "rate limit of %d requests per minute exceeded; retry in %d s", d.Limit, max(1, ceilSeconds(d.RetryAfter)))
}
