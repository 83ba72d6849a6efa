package auth

import (
	"bytes"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/ratelimit"
	"svc/identity"
)

// Authenticate is the middleware of every protected route (gateway.Authenticator): it
// identifies the caller by X-Api-Key or Authorization: Bearer, refuses suspended merchants,
// refuses live requests of a merchant whose live KYC is not approved (accountRoute),
// applies the IP whitelist and the route's scope (scopes.go), and only then spends a token
// of the (merchant, environment) rate limit, so a refused request costs the merchant
// nothing (headers on every answer that reached the bucket).
//
// A failed identification spends a token of the client address's failure bucket (IPv6 by
// /64), so keys and tokens cannot be guessed at speed; while that bucket is empty, a key
// that is not already in memory is refused before it is looked up, so a throttled client
// costs no database query (unknown keys are also remembered briefly, see identity.Cache).
func (s *Service) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	ip := s.clients.Of(ctx)
	failKey := ratelimit.AddrKey("fail:", ip)
	p, scopes, err := s.identify(ctx, failKey)
	if err != nil {
		var d ratelimit.Decision
		switch {
		case errors.Is(err, identity.ErrThrottled):
			d = s.perIP.Peek(failKey, s.cfg.AuthRateLimit)
			if d.Allowed { // a token came back since identify looked: still a 429, briefly
				d.Allowed, d.RetryAfter = false, time.Second
			}
			s.perIP.CountRefusal()
		case errors.Is(err, identity.ErrUnauthorized):
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
	limit, err := s.id.Admit(api.Ctx(ctx), p.MerchantID, ip, string(ctx.Path()) == whitelistPath)
	if err != nil {
		return p, err
	}
	if p.Environment == api.Live && !accountRoute(ctx.Path()) {
		if err := s.id.AdmitLive(api.Ctx(ctx), p.MerchantID); err != nil {
			return p, err
		}
	}
	if err := s.authorize(ctx, p, scopes); err != nil {
		return p, err
	}
	d := s.merch.Take(tenantKey(p), limit)
	if d.Allowed && s.cfg.Shared != nil {
		if sd := s.cfg.Shared.Take(api.Ctx(ctx), sharedKey(p), limit); !sd.Allowed {
			s.merch.CountRefusal()
			d = sd
		}
	}
	d.SetHeaders(ctx)
	if !d.Allowed {
		return p, rateLimited(d)
	}
	return p, nil
}

// sharedKey is tenantKey as text, for the shared counter's row.
func sharedKey(p api.Principal) string {
	if p.Environment == api.Live {
		return "merchant:" + p.MerchantID.String() + ":live"
	}
	return "merchant:" + p.MerchantID.String() + ":sandbox"
}

// accountRoute reports whether path manages the merchant's own account (profile, KYC, IP
// whitelist, keys): reachable in live before the merchant's live KYC is approved, since
// submitting that KYC is one of them. Every other live route (money, trading, customers,
// webhooks) answers 403 MERCHANT_KYC_REQUIRED until an operator approves it (svc merchant
// kyc approve); creating a live key is refused by identity too.
func accountRoute(path []byte) bool {
	return bytes.HasPrefix(path, []byte("/v1/auth/")) || bytes.HasPrefix(path, []byte("/v1/merchant/")) ||
		bytes.Equal(path, []byte("/v1/api-keys")) || bytes.HasPrefix(path, []byte("/v1/api-keys/"))
}

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
func (s *Service) identify(ctx *fasthttp.RequestCtx, failKey string) (api.Principal, identity.Scope, error) {
	if key := ctx.Request.Header.Peek("X-Api-Key"); len(key) > 0 {
		// A key not in memory may cost a query, which a throttled client does not get.
		a, err := s.id.IdentifyKey(api.Ctx(ctx), key, func() bool { return s.perIP.Peek(failKey, s.cfg.AuthRateLimit).Allowed })
		if err != nil {
			return api.Principal{}, 0, err
		}
		return api.Principal{MerchantID: a.MerchantID, Environment: api.Environment(a.Environment), Method: api.ByAPIKey, APIKeyID: a.APIKeyID}, a.Scopes, nil
	}
	h := ctx.Request.Header.Peek("Authorization")
	if len(h) <= len(bearerPrefix) || !bytes.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		return api.Principal{}, 0, identity.ErrUnauthorized
	}
	id, err := s.id.IdentifyToken(string(bytes.TrimSpace(h[len(bearerPrefix):])))
	if err != nil {
		return api.Principal{}, 0, err
	}
	env := api.Sandbox
	switch v := string(ctx.Request.Header.Peek("X-Svc-Environment")); v {
	case "", "sandbox":
	case "live":
		env = api.Live
	default:
		return api.Principal{}, 0, api.Invalid("X-Svc-Environment", "must be sandbox or live")
	}
	return api.Principal{MerchantID: id, Environment: env, Method: api.ByBearer, APIKeyID: uuid.Nil}, identity.AllScopes, nil
}

// limitByIP guards the public /v1/auth routes with the per-address bucket.
func (s *Service) limitByIP(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		d := s.perIP.Take(ratelimit.AddrKey("auth:", s.clients.Of(ctx)), s.cfg.AuthRateLimit)
		d.SetHeaders(ctx)
		if !d.Allowed {
			api.Fail(ctx, rateLimited(d))
			return
		}
		next(ctx)
	}
}

func rateLimited(d ratelimit.Decision) error {
	return api.Errorf(api.CodeRateLimited, "rate limit of %d requests per minute exceeded; retry in %d s", d.Limit, max(1, ratelimit.CeilSeconds(d.RetryAfter)))
}

// caller is what identity needs to know of a principal for key operations.
func caller(p api.Principal) identity.Caller {
	return identity.Caller{MerchantID: p.MerchantID, Environment: identity.Environment(p.Environment), ByAPIKey: p.Method == api.ByAPIKey}
}
