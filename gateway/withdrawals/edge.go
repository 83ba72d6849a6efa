package withdrawals

import (
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// The helpers below are shared by the money-out resources (withdrawals, offramps,
// recipients, transfers).

// Principal returns the caller, or answers 401 and false.
func Principal(ctx *fasthttp.RequestCtx) (api.Principal, bool) {
	return api.RequirePrincipal(ctx, "not authenticated")
}

// Target returns the caller and the record the {id} path parameter names; it answers 401, or
// notFound (404) for an id that is not a UUID, and false.
func Target(ctx *fasthttp.RequestCtx, notFound error) (api.Principal, uuid.UUID, bool) {
	p, ok := Principal(ctx)
	if !ok {
		return p, uuid.Nil, false
	}
	id, ok := api.PathUUID(ctx, "id", notFound)
	return p, id, ok
}

// Time is an API timestamp: UTC, milliseconds, Z (DESIGN.md section 6).
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TimePtr is Time for optional timestamps (null when nil).
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

// StrPtr is nil for "" (a JSON null).
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Query reads a query parameter and checks it against allowed (when given); a bad value is
// answered 400 and false.
func Query(ctx *fasthttp.RequestCtx, name string, allowed ...string) (string, bool) {
	v := string(ctx.QueryArgs().Peek(name))
	if v == "" || len(allowed) == 0 {
		return v, true
	}
	for _, a := range allowed {
		if a == v {
			return v, true
		}
	}
	msg := "must be one of"
	for i, a := range allowed {
		if i > 0 {
			msg += ","
		}
		msg += " " + a
	}
	api.Fail(ctx, api.Invalid(name, msg))
	return "", false
}
