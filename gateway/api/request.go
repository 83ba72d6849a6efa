package api

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/payments"
)

// Tenant returns the caller's tenant (merchant and environment), which every payments query
// is scoped by; on a route without a caller it answers 401 UNAUTHORIZED and false.
func Tenant(ctx *fasthttp.RequestCtx) (payments.Tenant, bool) {
	p, ok := RequirePrincipal(ctx, "not authenticated")
	if !ok {
		return payments.Tenant{}, false
	}
	return p.Tenant(), true
}

// Tenant is the principal's merchant and environment.
func (p Principal) Tenant() payments.Tenant {
	return payments.Tenant{MerchantID: p.MerchantID, Environment: string(p.Environment)}
}

// Target returns the caller's tenant and the record the {id} path parameter names; it
// answers 401, or notFound (the resource's 404) for an id that is not a UUID, and false.
func Target(ctx *fasthttp.RequestCtx, notFound error) (payments.Tenant, uuid.UUID, bool) {
	t, ok := Tenant(ctx)
	if !ok {
		return t, uuid.Nil, false
	}
	id, ok := PathUUID(ctx, "id", notFound)
	return t, id, ok
}

// Context returns the context for a request's work: Ctx (bounded by the server's request
// deadline) with a cancel the handler defers, so what it started stops when it returns.
func Context(rc *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	return context.WithCancel(Ctx(rc))
}

// ContextTimeout is Context bounded further by d. Values that middleware handed to the
// request's context with SetValue (the idempotency scope) reach the services through it.
func ContextTimeout(rc *fasthttp.RequestCtx, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(Ctx(rc), d)
}
