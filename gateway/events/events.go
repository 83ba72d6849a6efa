// Package events is the HTTP edge of a merchant's events (issue 30): GET /v1/events (newest
// first, cursor paging, filtered by type and creation time), GET /v1/events/{id} and POST
// /v1/events/{id}/resend, over payments/events. An event carries the same data its webhook
// deliveries carry. Every query is scoped by the caller's merchant and environment.
package events

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/ratelimit"
	"svc/payments"
	pe "svc/payments/events"
)

// Service is what the handlers need; *payments/events.Service is one.
type Service interface {
	List(ctx context.Context, t payments.Tenant, f pe.ListFilter) ([]pe.Event, *pe.Position, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (pe.Event, error)
	Resend(ctx context.Context, t payments.Tenant, id uuid.UUID, endpointID *uuid.UUID) ([]uuid.UUID, error)
}

var _ Service = (*pe.Service)(nil)

// DefaultResendsPerMinute is how many resends one merchant may ask for per minute and
// environment: enough to recover a backlog by script, not enough to flood an endpoint.
const DefaultResendsPerMinute = 60

// Options tune the routes.
type Options struct {
	// Idempotency wraps the resend (X-Idempotency-Key); nil: none.
	Idempotency func(fasthttp.RequestHandler) fasthttp.RequestHandler
	// ResendsPerMinute per merchant and environment (default DefaultResendsPerMinute).
	ResendsPerMinute int
	Now              func() time.Time
}

// Routes is the RouteSet of /v1/events.
type Routes struct {
	svc     Service
	opts    Options
	limiter *ratelimit.Limiter
}

// New returns the routes over svc.
func New(svc Service, opts Options) *Routes {
	if opts.ResendsPerMinute <= 0 {
		opts.ResendsPerMinute = DefaultResendsPerMinute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Idempotency == nil {
		opts.Idempotency = func(h fasthttp.RequestHandler) fasthttp.RequestHandler { return h }
	}
	return &Routes{svc: svc, opts: opts, limiter: ratelimit.New(opts.Now)}
}

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/events", protect(rs.list))
	r.GET("/v1/events/{id}", protect(rs.get))
	r.POST("/v1/events/{id}/resend", protect(rs.opts.Idempotency(rs.limited(rs.resend))))
}

var event = api.Resource{NotFound: pe.ErrNotFound, Timeout: 10 * time.Second}

// EventJSON is an event as the API answers it: the envelope of its webhook deliveries
// without the per-attempt timestamp.
type EventJSON struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	CreatedAt string          `json:"created_at"`
}

func eventOut(e pe.Event) EventJSON {
	return EventJSON{ID: e.ID.String(), Event: string(e.Type), Data: e.Data, CreatedAt: api.Time(e.CreatedAt)}
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	cp, err := api.Cursor(ctx, 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	f := pe.ListFilter{Limit: cp.Limit}
	if cp.After != "" {
		pos, ok := pe.ParsePosition(cp.After)
		if v.Check(ok, "cursor", "is not a cursor returned by this API") {
			f.After = &pos
		}
	}
	args := ctx.QueryArgs()
	if s := string(args.Peek("type")); s != "" {
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			if v.Check(pe.Known(name), "type", strconv.Quote(name)+" is not an event name") {
				f.Types = append(f.Types, pe.Type(name))
			}
		}
	}
	f.From, f.To = api.TimeRange(ctx, &v)
	if f.From != nil && f.To != nil && v.Ok() {
		v.Check(f.To.After(*f.From), "to", "must be after from") // to is exclusive: an empty range is a mistake
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := event.Context(ctx)
	defer cancel()
	evs, next, err := rs.svc.List(c, t, f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items := make([]EventJSON, len(evs))
	for i, e := range evs {
		items[i] = eventOut(e)
	}
	var nextCursor *string
	if next != nil {
		s := api.EncodeCursor(next.String())
		nextCursor = &s
	}
	api.OK(ctx, map[string]any{"items": items, "next_cursor": nextCursor})
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, event, rs.svc.Get, eventOut) }

// limited refuses a merchant's resends beyond ResendsPerMinute with 429 RATE_LIMITED and
// Retry-After. It runs inside the idempotency middleware: a replayed answer spends nothing,
// and a 429 is never stored.
func (rs *Routes) limited(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		t, ok := api.Tenant(ctx)
		if !ok {
			return
		}
		d := rs.limiter.Take("resend:"+t.MerchantID.String()+":"+t.Environment, rs.opts.ResendsPerMinute)
		d.SetHeaders(ctx)
		if !d.Allowed {
			api.Fail(ctx, api.Errorf(api.CodeRateLimited, "at most %d resends per minute; retry in %d s",
				rs.opts.ResendsPerMinute, max(1, ratelimit.CeilSeconds(d.RetryAfter))))
			return
		}
		next(ctx)
	}
}

type resendBody struct {
	EndpointID *string `json:"endpoint_id"`
}

// ResendJSON is the answer of a resend: the endpoints a delivery was queued for.
type ResendJSON struct {
	EventID     string   `json:"event_id"`
	EndpointIDs []string `json:"endpoint_ids"`
}

func (rs *Routes) resend(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, event.NotFound)
	if !ok {
		return
	}
	var b resendBody
	if len(ctx.PostBody()) > 0 { // the body is optional
		if err := api.Decode(ctx, &b); err != nil {
			api.Fail(ctx, err)
			return
		}
	}
	var v api.Validator
	endpointID := api.UUIDField(&v, "endpoint_id", b.EndpointID)
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := event.Context(ctx)
	defer cancel()
	ids, err := rs.svc.Resend(c, t, id, endpointID)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := ResendJSON{EventID: id.String(), EndpointIDs: make([]string, len(ids))}
	for i, ep := range ids {
		out.EndpointIDs[i] = ep.String()
	}
	api.OK(ctx, out)
}
