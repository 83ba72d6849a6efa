package auth

import (
	"crypto/sha256"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// Revalidate re-checks a WebSocket stream that p opened with the API key whose SHA-256
// is keyHash (gateway/ws calls it every few seconds): the key is still active (a revoked
// or deleted key leaves the cache through LISTEN/NOTIFY), the merchant is not suspended,
// and its IP whitelist admits the client of ctx (a request carrying the connection's
// address and forwarding headers). It spends no rate-limit token.
func (s *Service) Revalidate(ctx *fasthttp.RequestCtx, p api.Principal, keyHash [sha256.Size]byte) error {
	e, found, err := s.cache.key(api.Ctx(ctx), keyHash[:])
	if err != nil {
		return err
	}
	if !found || !e.rec.Active || e.rec.MerchantID != p.MerchantID || e.rec.Environment != p.Environment {
		return ErrUnauthorized
	}
	st, ok, err := s.cache.settings(api.Ctx(ctx), p.MerchantID)
	if err != nil {
		return err
	}
	if !ok {
		return ErrUnauthorized
	}
	if st.Suspended {
		return ErrSuspended
	}
	return st.Whitelist.check(s.clients.Of(ctx), ctx.Path())
}
