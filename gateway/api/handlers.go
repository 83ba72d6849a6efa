package api

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/payments"
)

// Resource is what the generic handlers below (Get, On, Create, Update, Delete, ListPage) need to
// know of one payments resource: the error that answers an id naming none of the caller's
// records (its 404), and how long a request's service call may take.
type Resource struct {
	NotFound error
	// Timeout bounds the service call further than the request's deadline (ContextTimeout);
	// 0 leaves the request's deadline alone (Context).
	Timeout time.Duration
}

// Context returns the context of a service call for the resource (see Timeout) with the
// cancel the handler defers.
func (r Resource) Context(rc *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	if r.Timeout > 0 {
		return ContextTimeout(rc, r.Timeout)
	}
	return Context(rc)
}

// Get answers a read of one record: the caller's tenant and the record the {id} path
// parameter names (Target: 401, or r.NotFound), get under r's context, then 200 with the
// record rendered by out, or get's error (Fail).
func Get[T, J any](ctx *fasthttp.RequestCtx, r Resource, get func(context.Context, payments.Tenant, uuid.UUID) (T, error), out func(T) J) {
	On(ctx, r, get, out)
}

// On answers an action without a body on one record (POST .../{id}/rotate-secret) as Get
// answers a read: Target, act under r's context, then 200 with its result rendered by out,
// or act's error.
func On[T, J any](ctx *fasthttp.RequestCtx, r Resource, act func(context.Context, payments.Tenant, uuid.UUID) (T, error), out func(T) J) {
	t, id, ok := Target(ctx, r.NotFound)
	if !ok {
		return
	}
	answer(ctx, r, OK, func(c context.Context) (T, error) { return act(c, t, id) }, out)
}

// Create answers the creation of a record: the caller's tenant (401), the JSON body decoded
// into a B (Decode: 400 and 415 as it words them), create under r's context, then 201 with
// the new record rendered by out, or create's error (a validation error it returns included).
func Create[B, T, J any](ctx *fasthttp.RequestCtx, r Resource, create func(context.Context, payments.Tenant, B) (T, error), out func(T) J) {
	t, ok := Tenant(ctx)
	if !ok {
		return
	}
	var b B
	if err := Decode(ctx, &b); err != nil {
		Fail(ctx, err)
		return
	}
	answer(ctx, r, Created, func(c context.Context) (T, error) { return create(c, t, b) }, out)
}

// Update answers a change of one record: Target (401, or r.NotFound), the JSON body decoded
// into a B, update under r's context, then 200 with the record rendered by out, or update's
// error.
func Update[B, T, J any](ctx *fasthttp.RequestCtx, r Resource, update func(context.Context, payments.Tenant, uuid.UUID, B) (T, error), out func(T) J) {
	onBody(ctx, r, OK, update, out)
}

// AddTo answers the creation of a record under one record (POST /v1/customers/{id}/crypto-wallet)
// as Update answers a change, but 201 with the new record rendered by out.
func AddTo[B, T, J any](ctx *fasthttp.RequestCtx, r Resource, add func(context.Context, payments.Tenant, uuid.UUID, B) (T, error), out func(T) J) {
	onBody(ctx, r, Created, add, out)
}

// onBody is Update and AddTo: Target, the body decoded into a B, then call's result written
// with write (answer).
func onBody[B, T, J any](ctx *fasthttp.RequestCtx, r Resource, write func(*fasthttp.RequestCtx, any), call func(context.Context, payments.Tenant, uuid.UUID, B) (T, error), out func(T) J) {
	t, id, ok := Target(ctx, r.NotFound)
	if !ok {
		return
	}
	var b B
	if err := Decode(ctx, &b); err != nil {
		Fail(ctx, err)
		return
	}
	answer(ctx, r, write, func(c context.Context) (T, error) { return call(c, t, id, b) }, out)
}

// Delete answers the deletion of one record: Target (401, or r.NotFound), del under r's
// context, then 200 {data: {id}, message}, or del's error.
func Delete(ctx *fasthttp.RequestCtx, r Resource, del func(context.Context, payments.Tenant, uuid.UUID) error, message string) {
	t, id, ok := Target(ctx, r.NotFound)
	if !ok {
		return
	}
	answer(ctx, r, func(ctx *fasthttp.RequestCtx, data any) { Message(ctx, data, message) },
		func(c context.Context) (uuid.UUID, error) { return id, del(c, t, id) },
		func(id uuid.UUID) map[string]string { return map[string]string{"id": id.String()} })
}

// answer runs call under r's context and writes its result rendered by out with write, or
// its error.
func answer[T, J any](ctx *fasthttp.RequestCtx, r Resource, write func(*fasthttp.RequestCtx, any), call func(context.Context) (T, error), out func(T) J) {
	c, cancel := r.Context(ctx)
	defer cancel()
	v, err := call(c)
	if err != nil {
		Fail(ctx, err)
		return
	}
	write(ctx, out(v))
}

// Listing is the checked request of a page-based list filtered by status.
type Listing struct {
	Tenant payments.Tenant
	PageParams
	Status string // "" for every status
}

// List reads the request of a page-based list filtered by status: the caller's tenant (401),
// page and limit (Paging: default 20, at most 100), then the status query parameter, which
// when given must be one of statuses (QueryOneOf). It answers the first failure and false.
func List(ctx *fasthttp.RequestCtx, statuses ...string) (Listing, bool) {
	t, pg, ok := TenantPaging(ctx)
	if !ok {
		return Listing{}, false
	}
	status, err := QueryOneOf(ctx, "status", statuses...)
	if err != nil {
		Fail(ctx, err)
		return Listing{}, false
	}
	return Listing{Tenant: t, PageParams: pg, Status: status}, true
}

// TenantPaging reads what every page-based list starts with: the caller's tenant (401), then
// page and limit (Paging: default 20, at most 100). It answers the failure and false.
func TenantPaging(ctx *fasthttp.RequestCtx) (payments.Tenant, PageParams, bool) {
	t, ok := Tenant(ctx)
	if !ok {
		return t, PageParams{}, false
	}
	pg, err := Paging(ctx, "limit", 20, 100)
	if err != nil {
		Fail(ctx, err)
		return t, pg, false
	}
	return t, pg, true
}

// ListPage answers a page-based list filtered by status: List, list under r's context, then
// 200 with the page of items rendered by out (PageOf), or list's error.
func ListPage[T, J any](ctx *fasthttp.RequestCtx, r Resource, list func(context.Context, Listing) ([]T, int64, error), out func(T) J, statuses ...string) {
	q, ok := List(ctx, statuses...)
	if !ok {
		return
	}
	c, cancel := r.Context(ctx)
	defer cancel()
	items, total, err := list(c, q)
	if err != nil {
		Fail(ctx, err)
		return
	}
	PageOf(ctx, items, out, q.Meta(total))
}

// ListOn answers a page-based list of what belongs to one record (GET
// /v1/customers/{id}/ledger) in the array shape (Array: data the items, meta the paging):
// Target (401, or r.NotFound), page and limit (Paging: default 20, at most 100), list under
// r's context with the page's limit and offset, then 200 with the items rendered by out
// ([] when none), or list's error.
func ListOn[T, J any](ctx *fasthttp.RequestCtx, r Resource, list func(c context.Context, t payments.Tenant, id uuid.UUID, limit, offset int) ([]T, int64, error), out func(T) J) {
	t, id, ok := Target(ctx, r.NotFound)
	if !ok {
		return
	}
	pg, err := Paging(ctx, "limit", 20, 100)
	if err != nil {
		Fail(ctx, err)
		return
	}
	c, cancel := r.Context(ctx)
	defer cancel()
	items, total, err := list(c, t, id, pg.Limit, pg.Offset())
	if err != nil {
		Fail(ctx, err)
		return
	}
	res := make([]J, len(items))
	for i, it := range items {
		res[i] = out(it)
	}
	meta := pg.Meta(total)
	Array(ctx, res, &meta)
}

// QueryOneOf reads the optional query parameter name: "" when absent, else one of allowed,
// or a 400 VALIDATION_ERROR on name worded from allowed as Validator.OneOf words it
// ("must be one of [a b c]").
func QueryOneOf(ctx *fasthttp.RequestCtx, name string, allowed ...string) (string, error) {
	s := string(ctx.QueryArgs().Peek(name))
	if s == "" {
		return "", nil
	}
	var v Validator
	if !v.OneOf(name, s, allowed...) {
		return "", v.Err()
	}
	return s, nil
}

// Middleware wraps a handler (authentication, idempotency).
type Middleware = func(fasthttp.RequestHandler) fasthttp.RequestHandler

// OrNone is m, or when m is nil the middleware that changes nothing (route sets take their
// optional idempotency middleware through it).
func OrNone(m Middleware) Middleware {
	if m == nil {
		return func(h fasthttp.RequestHandler) fasthttp.RequestHandler { return h }
	}
	return m
}
