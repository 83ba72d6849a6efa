// Package webhooks is the HTTP edge of webhook endpoint management and delivery logs
// (spec "Webhook endpoints"): a gateway RouteSet over the payments/webhooks service.
package webhooks

import (
	"context"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
	wh "svc/payments/webhooks"
)

// Service is what the handlers need; *payments/webhooks.Service is one.
type Service interface {
	Create(ctx context.Context, t payments.Tenant, in wh.CreateInput) (wh.Created, error)
	List(ctx context.Context, t payments.Tenant) ([]wh.Endpoint, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (wh.Endpoint, error)
	Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in wh.UpdateInput) (wh.Endpoint, error)
	Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error
	RotateSecret(ctx context.Context, t payments.Tenant, id uuid.UUID, in wh.RotateInput) (wh.Rotated, error)
	Test(ctx context.Context, t payments.Tenant, id uuid.UUID, event string) (wh.TestResult, error)
	Logs(ctx context.Context, t payments.Tenant, f wh.LogFilter) ([]wh.LogEntry, int64, error)
}

var _ Service = (*wh.Service)(nil)

// Routes is the RouteSet of /v1/webhooks.
type Routes struct {
	svc  Service
	idem api.Middleware
}

// New returns the routes over svc.
func New(svc Service) *Routes { return &Routes{svc: svc, idem: api.OrNone(nil)} }

// Idempotent honours X-Idempotency-Key on the route set's creates and state-changing POSTs
// (issue 30): m is gateway/idempotency's middleware; nil changes nothing.
func (rs *Routes) Idempotent(m api.Middleware) *Routes { rs.idem = api.OrNone(m); return rs }

// Register adds every route, each behind protect (authentication).
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/webhooks/endpoints", protect(rs.idem(rs.create)))
	r.GET("/v1/webhooks/endpoints", protect(rs.list))
	r.GET("/v1/webhooks/endpoints/{id}", protect(rs.get))
	r.PATCH("/v1/webhooks/endpoints/{id}", protect(rs.update))
	r.DELETE("/v1/webhooks/endpoints/{id}", protect(rs.delete))
	r.POST("/v1/webhooks/endpoints/{id}/rotate-secret", protect(rs.idem(rs.rotate)))
	r.POST("/v1/webhooks/endpoints/{id}/test", protect(rs.test))
	r.GET("/v1/webhooks/logs", protect(rs.logs))
}

// requestTimeout bounds the database work of one request; a test send adds its own 10 s.
const requestTimeout = 30 * time.Second

type endpointJSON struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	IsActive       bool     `json:"is_active"`
	DisabledReason *string  `json:"disabled_reason"`
	Secret         string   `json:"secret,omitempty"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
}

func endpointOut(e wh.Endpoint, secret string) endpointJSON {
	out := endpointJSON{ID: e.ID.String(), URL: e.URL, Events: e.Events, IsActive: e.IsActive, Secret: secret,
		CreatedAt: api.Time(e.CreatedAt), UpdatedAt: api.Time(e.UpdatedAt)}
	if out.Events == nil {
		out.Events = []string{}
	}
	if e.DisabledReason != "" {
		r := e.DisabledReason
		out.DisabledReason = &r
	}
	return out
}

type createBody struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// endpoint is the webhook endpoints resource for the generic handlers of api.
var endpoint = api.Resource{NotFound: wh.ErrNotFound, Timeout: requestTimeout}

// endpointView renders an endpoint without its secret.
func endpointView(e wh.Endpoint) endpointJSON { return endpointOut(e, "") }

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, endpoint, func(c context.Context, t payments.Tenant, b createBody) (wh.Created, error) {
		var v api.Validator
		v.Required("url", b.URL)
		if err := v.Err(); err != nil {
			return wh.Created{}, err
		}
		return rs.svc.Create(c, t, wh.CreateInput{URL: b.URL, Events: b.Events})
	}, func(e wh.Created) endpointJSON { return endpointOut(e.Endpoint, e.Secret) })
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	c, cancel := endpoint.Context(ctx)
	defer cancel()
	eps, err := rs.svc.List(c, t)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := make([]endpointJSON, len(eps))
	for i, e := range eps {
		out[i] = endpointOut(e, "")
	}
	n := int64(len(out))
	api.Array(ctx, out, &api.PageMeta{Total: n, Page: 1, Limit: len(out), TotalPages: min(n, 1)})
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, endpoint, rs.svc.Get, endpointView) }

type updateBody struct {
	URL      *string   `json:"url"`
	Events   *[]string `json:"events"`
	IsActive *bool     `json:"is_active"`
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, endpoint, func(c context.Context, t payments.Tenant, id uuid.UUID, b updateBody) (wh.Endpoint, error) {
		return rs.svc.Update(c, t, id, wh.UpdateInput{URL: b.URL, Events: b.Events, IsActive: b.IsActive})
	}, endpointView)
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	api.Delete(ctx, endpoint, rs.svc.Delete, "webhook endpoint deleted")
}

type rotateBody struct {
	// ExpiresIn is how many seconds the replaced secret keeps signing deliveries (default
	// 86400; 0: it stops at once).
	ExpiresIn *int64 `json:"expires_in"`
}

type rotatedJSON struct {
	ID                      string  `json:"id"`
	Secret                  string  `json:"secret"`
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
}

func (rs *Routes) rotate(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, endpoint.NotFound)
	if !ok {
		return
	}
	var b rotateBody
	if len(ctx.PostBody()) > 0 { // the body is optional
		if err := api.Decode(ctx, &b); err != nil {
			api.Fail(ctx, err)
			return
		}
	}
	var in wh.RotateInput
	if b.ExpiresIn != nil {
		max := int64(wh.MaxRotationOverlap / time.Second)
		if *b.ExpiresIn < 0 || *b.ExpiresIn > max {
			api.Fail(ctx, api.Invalid("expires_in", "must be from 0 to "+strconv.FormatInt(max, 10)+" seconds"))
			return
		}
		d := time.Duration(*b.ExpiresIn) * time.Second
		in.ExpiresIn = &d
	}
	c, cancel := endpoint.Context(ctx)
	defer cancel()
	r, err := rs.svc.RotateSecret(c, t, id, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := rotatedJSON{ID: r.ID.String(), Secret: r.Secret}
	if r.PreviousExpiresAt != nil {
		s := api.Time(*r.PreviousExpiresAt)
		out.PreviousSecretExpiresAt = &s
	}
	api.OK(ctx, out)
}

type testBody struct {
	Event string `json:"event"`
}

type testJSON struct {
	Success    bool    `json:"success"`
	Event      string  `json:"event"`
	StatusCode *int    `json:"status_code"`
	Error      *string `json:"error"`
	DurationMS int64   `json:"duration_ms"`
	LogID      string  `json:"log_id"`
}

func (rs *Routes) test(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, endpoint.NotFound)
	if !ok {
		return
	}
	var b testBody
	if len(ctx.PostBody()) > 0 { // the body is optional
		if err := api.Decode(ctx, &b); err != nil {
			api.Fail(ctx, err)
			return
		}
	}
	c, cancel := endpoint.Context(ctx)
	defer cancel()
	r, err := rs.svc.Test(c, t, id, b.Event)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, testJSON{Success: r.Success, Event: r.Event, StatusCode: r.StatusCode, Error: r.Error,
		DurationMS: r.Duration.Milliseconds(), LogID: r.LogID.String()})
}
