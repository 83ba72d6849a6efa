// Package idempotency is the gateway middleware of idempotency keys (DESIGN.md section 4)
// over the store and transaction scope of payments/idempotency.
//
// Wrap a POST handler inside the authentication chain, so the principal is known:
//
//	idem := idempotency.Middleware(keys)                               // X-Idempotency-Key
//	r.POST("/v1/payments/onramps", protect(idem(h.createOnramp)))
//	idemT := idempotency.Middleware(keys, idempotency.AlsoIdempotencyKey()) // transfers
//
// Without a key the handler runs as usual. With one:
//
//   - first use: the handler runs inside the key's scope; the services it calls must write
//     through payments/idempotency.InTx with the request's context (the *fasthttp.RequestCtx
//     is a context.Context that carries the scope), so the change and the stored response
//     commit together. Responses below 500 (except 429) are stored and the transaction is
//     committed; a 5xx or a panic rolls everything back and stores nothing, so a retry runs
//     the request again;
//   - the same key, method, path and body again within 24 hours: the stored status and body,
//     with the header `Idempotent-Replayed: true`;
//   - the same key with another method, path or body: 422 IDEMPOTENCY_KEY_REUSED;
//   - the same key while the first request is still running: 409 IDEMPOTENCY_KEY_IN_USE.
//
// Keys are scoped by merchant and environment: a sandbox key never replays a live request.
// A key is 1 to 255 printable ASCII characters (else 400 naming the header).
package idempotency

import (
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments/idempotency"
)

// Header names.
const (
	HeaderKey      = "X-Idempotency-Key"
	HeaderAltKey   = "Idempotency-Key"
	HeaderReplayed = "Idempotent-Replayed"
)

type options struct{ altHeader bool }

// Option configures Middleware.
type Option func(*options)

// AlsoIdempotencyKey accepts the key in the Idempotency-Key header too (when
// X-Idempotency-Key is absent), as the spec allows for POST /payments/transfers.
func AlsoIdempotencyKey() Option { return func(o *options) { o.altHeader = true } }

// Middleware returns the idempotency middleware over keys.
func Middleware(keys *idempotency.Keys, opts ...Option) func(fasthttp.RequestHandler) fasthttp.RequestHandler {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			header := HeaderKey
			key := string(ctx.Request.Header.Peek(HeaderKey))
			if key == "" && o.altHeader {
				header = HeaderAltKey
				key = string(ctx.Request.Header.Peek(HeaderAltKey))
			}
			if key == "" {
				next(ctx)
				return
			}
			if !idempotency.ValidKey(key) {
				api.Fail(ctx, api.Invalid(header, "must be 1 to 255 printable ASCII characters"))
				return
			}
			p, ok := api.RequirePrincipal(ctx, "authentication required")
			if !ok {
				return
			}
			req := idempotency.Request{
				MerchantID:  p.MerchantID,
				Environment: string(p.Environment),
				Key:         key,
				Method:      string(ctx.Method()),
				Path:        string(ctx.URI().RequestURI()),
				Body:        ctx.PostBody(),
			}
			scope, stored, err := keys.Begin(api.Ctx(ctx), req)
			if err != nil {
				api.Fail(ctx, err)
				return
			}
			if stored != nil {
				ctx.SetStatusCode(stored.Status)
				if stored.ContentType != "" {
					ctx.SetContentType(stored.ContentType)
				}
				ctx.SetBody(stored.Body)
				ctx.Response.Header.Set(HeaderReplayed, "true")
				return
			}
			run(ctx, next, scope)
		}
	}
}

func run(ctx *fasthttp.RequestCtx, next fasthttp.RequestHandler, scope *idempotency.Scope) {
	ended := false
	defer func() {
		if !ended { // a panic in the handler: nothing of it may commit
			scope.Abort(api.Ctx(ctx))
		}
	}()
	api.SetValue(ctx, idempotency.ContextKey(), scope)
	next(ctx)
	api.SetValue(ctx, idempotency.ContextKey(), nil)
	ended = true

	status := ctx.Response.StatusCode()
	if status >= 500 || status == fasthttp.StatusTooManyRequests {
		scope.Abort(api.Ctx(ctx))
		return
	}
	resp := idempotency.Response{
		Status:      status,
		ContentType: string(ctx.Response.Header.ContentType()),
		Body:        append([]byte(nil), ctx.Response.Body()...),
	}
	if err := scope.Complete(api.Ctx(ctx), resp); err != nil {
		// Nothing committed: the client must not see a success that did not happen.
		ctx.ResetBody()
		api.Fail(ctx, err)
	}
}
