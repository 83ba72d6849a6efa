// Package auth is identity and access at the HTTP edge: the /v1/auth, /v1/merchant and
// /v1/api-keys handlers (parse, call svc/identity, answer), the Authenticate middleware of
// every protected route (credential, merchant standing, IP whitelist, the route's scope,
// then the per-merchant rate limit), the per-address limits of the public auth routes and
// of failed authentications, the client address behind trusted proxies, and the table of
// which scope each route needs. Accounts, tokens, keys and their store are svc/identity's.
package auth

import (
	"log/slog"
	"sync"
	"time"

	"svc/gateway/ratelimit"
	"svc/identity"
)

// Config of the HTTP side of identity and access. Zero values take the defaults in
// brackets; the per-merchant limit is identity.Config's DefaultRateLimit.
type Config struct {
	AuthRateLimit  int      // requests per minute per client address on /v1/auth [10]
	TrustedProxies []string // CIDRs whose X-Forwarded-For is believed
	Now            func() time.Time
	// Shared, if set, also counts each merchant's per-minute limit across every gateway
	// (in PostgreSQL, from an allowance in memory): behind N gateways the limit is the
	// limit, not N times it. The per-node bucket still applies first.
	Shared *ratelimit.Shared
}

// Service serves identity over HTTP and authenticates every protected route
// (gateway.Authenticator, ws.Authenticator).
type Service struct {
	id      *identity.Service
	cfg     Config
	log     *slog.Logger
	clients *ClientIP
	merch   *ratelimit.Limiter // per merchant and environment
	perIP   *ratelimit.Limiter // per client address: /v1/auth and failed authentications
	// unscoped: routes missing from the scope table already logged (once each)
	unscoped sync.Map
}

// New builds the HTTP side on an identity service (which the caller starts and stops).
func New(id *identity.Service, cfg Config, log *slog.Logger) (*Service, error) {
	if cfg.AuthRateLimit <= 0 {
		cfg.AuthRateLimit = 10
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cip, err := NewClientIP(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	return &Service{id: id, cfg: cfg, log: log, clients: cip, merch: ratelimit.New(cfg.Now), perIP: ratelimit.New(cfg.Now)}, nil
}

// RateLimited is how many requests were refused with 429 since the service was built: by
// the per-merchant bucket, and by the per-address bucket of /v1/auth and failed
// authentications (for metrics).
func (s *Service) RateLimited() (merchant, address uint64) {
	return s.merch.Refused(), s.perIP.Refused()
}
