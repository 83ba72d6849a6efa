package auth

import (
	"crypto/sha256"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/identity"
)

// Revalidate re-checks a WebSocket stream that p opened with the API key whose SHA-256
// is keyHash (gateway/ws calls it every few seconds): the key is still active (a revoked
// or deleted key leaves the cache through LISTEN/NOTIFY), the merchant is not suspended,
// and its IP whitelist admits the client of ctx (a request carrying the connection's
// address and forwarding headers). It spends no rate-limit token.
func (s *Service) Revalidate(ctx *fasthttp.RequestCtx, p api.Principal, keyHash [sha256.Size]byte) error {
	return s.id.Recheck(api.Ctx(ctx), keyHash, p.MerchantID, identity.Environment(p.Environment), s.clients.Of(ctx), string(ctx.Path()) == whitelistPath)
}
