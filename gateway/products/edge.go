package products

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
	pp "svc/payments/products"
)

// The helpers below are shared by the commerce resources (products, invoices, checkout
// links): tenant of the request, error mapping, amounts as JSON numbers, times.

// Context returns a context for a request's database work: the request's own (api.Ctx),
// bounded by the server's request deadline and cancelled when the handler returns.
func Context(ctx *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	return context.WithCancel(api.Ctx(ctx))
}

// Tenant returns the caller's tenant, or answers 401 and false.
func Tenant(ctx *fasthttp.RequestCtx) (payments.Tenant, bool) {
	p, ok := api.RequirePrincipal(ctx, "not authenticated")
	if !ok {
		return payments.Tenant{}, false
	}
	return payments.Tenant{MerchantID: p.MerchantID, Environment: string(p.Environment)}, true
}

// Target returns the caller's tenant and the record the {id} path parameter names; it
// answers 401, or notFound (404) for an id that is not a UUID, and false.
func Target(ctx *fasthttp.RequestCtx, notFound error) (payments.Tenant, uuid.UUID, bool) {
	t, ok := Tenant(ctx)
	if !ok {
		return t, uuid.Nil, false
	}
	id, ok := api.PathUUID(ctx, "id", notFound)
	return t, id, ok
}

// Fail answers err, listing every field of a domain validation error.
func Fail(ctx *fasthttp.RequestCtx, err error) {
	var ve *payments.ValidationError
	if errors.As(err, &ve) {
		fields := make([]api.FieldError, len(ve.Fields))
		for i, f := range ve.Fields {
			fields[i] = api.FieldError{Field: f.Field, Message: f.Message}
		}
		api.Fail(ctx, &api.Error{Code: api.CodeValidation, Detail: "request validation failed", Fields: fields})
		return
	}
	api.Fail(ctx, err)
}

// Num is a decimal written as a JSON number (the spec's "number" amounts), exactly.
type Num string

// MarshalJSON writes the digits as they are.
func (n Num) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	return []byte(n), nil
}

// Amount is minor units of currency as a JSON number with the currency's places.
func Amount(currency string, minor int64) Num { return Num(pp.FormatAmount(currency, minor)) }

// Adjustment is a tax rate or discount as a JSON number (percent, or an amount).
func Adjustment(a pp.Adjustment, currency string) Num {
	return Num(pp.FormatAdjustment(a, currency))
}

// NumText returns a request number's text, or nil when absent.
func NumText(n *json.Number) *string {
	if n == nil {
		return nil
	}
	s := n.String()
	return &s
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time formats a timestamp as UTC ISO 8601 with milliseconds.
func Time(t time.Time) string { return t.UTC().Format(timeLayout) }

// TimePtr is Time for optional timestamps.
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

// Paging reads page and limit (default 20, at most 100).
func Paging(ctx *fasthttp.RequestCtx) (api.PageParams, bool) {
	p, err := api.Paging(ctx, "limit", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return p, false
	}
	return p, true
}
