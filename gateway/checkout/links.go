// Package checkout is the HTTP edge of checkout links (spec "Checkout links", a RouteSet over
// payments/checkout) and the hosted checkout page at /pay/{slug}: server-rendered
// html/template with embedded assets (no CDN), readable on a phone, usable by keyboard and
// without JavaScript (the script only counts down and polls).
package checkout

import (
	"context"
	"encoding/json"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/gateway/ratelimit"
	"svc/payments"
	pc "svc/payments/checkout"
	"svc/payments/metadata"
	pp "svc/payments/products"
)

// Routes is the RouteSet of /v1/checkout-links and the hosted pages.
type Routes struct {
	svc     *pc.Service
	limiter *ratelimit.Limiter
	limits  PayLimits
	idem    api.Middleware
}

// New returns the routes over svc, the hosted pages limited per client address by
// DefaultPayLimits (see WithPayLimits).
func New(svc *pc.Service) *Routes {
	rs := &Routes{svc: svc, limiter: ratelimit.New(nil), idem: api.OrNone(nil)}
	return rs.WithPayLimits(DefaultPayLimits())
}

// Idempotent honours X-Idempotency-Key on the route set's creates and state-changing POSTs
// (issue 30): m is gateway/idempotency's middleware; nil changes nothing.
func (rs *Routes) Idempotent(m api.Middleware) *Routes { rs.idem = api.OrNone(m); return rs }

// Register adds the API routes behind protect and the public hosted-page routes.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/checkout-links", protect(rs.idem(rs.create)))
	r.GET("/v1/checkout-links", protect(rs.list))
	r.GET("/v1/checkout-links/{id}", protect(rs.get))
	r.PATCH("/v1/checkout-links/{id}", protect(rs.update))
	r.DELETE("/v1/checkout-links/{id}", protect(rs.delete))

	r.GET("/pay/{slug}", rs.limited(false, false, rs.page))
	r.POST("/pay/{slug}/transfer", rs.limited(true, false, rs.transfer))
	r.GET("/pay/{slug}/status", rs.limited(false, true, rs.status))
	r.POST("/pay/{slug}/simulate", rs.limited(true, false, rs.simulate))
	r.GET("/checkout-assets/{file}", rs.asset)
}

type linkJSON struct {
	ID             string            `json:"id"`
	Title          string            `json:"title"`
	Description    *string           `json:"description"`
	URL            string            `json:"url"`
	Slug           string            `json:"slug"`
	Type           string            `json:"type"`
	Amount         api.Num           `json:"amount"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	RedirectURL    *string           `json:"redirect_url"`
	SuccessMessage *string           `json:"success_message"`
	InvoiceID      *string           `json:"invoice_id"`
	LineItems      []shapes.LineJSON `json:"line_items"`
	PaymentsCount  int               `json:"payments_count"`
	Metadata       metadata.Metadata `json:"metadata"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
}

func (rs *Routes) linkOut(l pc.Link) linkJSON {
	out := linkJSON{ID: l.ID.String(), Title: l.Title, Description: l.Description, URL: rs.svc.URL(l.Slug), Slug: l.Slug,
		Type: l.Type, Amount: shapes.Amount(l.Currency, l.Amount), Currency: l.Currency, Status: l.Status,
		RedirectURL: l.RedirectURL, SuccessMessage: l.SuccessMessage, LineItems: shapes.LinesOut(l.Lines, l.Currency),
		PaymentsCount: l.PaymentsCount, Metadata: l.Metadata.OrEmpty(), CreatedAt: api.Time(l.CreatedAt), UpdatedAt: api.Time(l.UpdatedAt)}
	if l.InvoiceID != nil {
		s := l.InvoiceID.String()
		out.InvoiceID = &s
	}
	return out
}

type createBody struct {
	Title          string            `json:"title"`
	Description    *string           `json:"description"`
	Type           string            `json:"type"`
	Slug           string            `json:"slug"`
	Currency       string            `json:"currency"`
	RedirectURL    *string           `json:"redirect_url"`
	SuccessMessage *string           `json:"success_message"`
	Amount         *jsonNumber       `json:"amount"`
	InvoiceID      *uuid.UUID        `json:"invoice_id"`
	CustomerName   string            `json:"customer_name"`
	CustomerEmail  string            `json:"customer_email"`
	LineItems      []shapes.LineBody `json:"line_items"`
	Metadata       json.RawMessage   `json:"metadata"`
}

// link is the checkout links resource for the generic handlers of api.
var link = api.Resource{NotFound: pc.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, link, func(c context.Context, t payments.Tenant, b createBody) (pc.Link, error) {
		return rs.svc.Create(c, t, pc.CreateInput{Title: b.Title, Description: b.Description, Type: b.Type, Slug: b.Slug,
			Currency: b.Currency, RedirectURL: b.RedirectURL, SuccessMessage: b.SuccessMessage, Amount: api.NumText(b.Amount),
			InvoiceID: b.InvoiceID, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail, Lines: shapes.LineInputs(b.LineItems),
			Metadata: b.Metadata})
	}, rs.linkOut)
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	api.ListPage(ctx, link, func(c context.Context, q api.Listing) ([]pc.Link, int64, error) {
		md, err := api.MetadataFilter(ctx)
		if err != nil {
			return nil, 0, err
		}
		return rs.svc.List(c, q.Tenant, pc.Filter{Status: q.Status, Metadata: md, Page: q.Page, Limit: q.Limit})
	}, rs.linkOut, pc.StatusActive, pc.StatusInactive)
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, link, rs.svc.Get, rs.linkOut) }

type updateBody struct {
	Title          pp.Patch[string] `json:"title"`
	Description    pp.Patch[string] `json:"description"`
	RedirectURL    pp.Patch[string] `json:"redirect_url"`
	SuccessMessage pp.Patch[string] `json:"success_message"`
	Status         pp.Patch[string] `json:"status"`
	Metadata       json.RawMessage  `json:"metadata"`
	// Fixed after creation: sending them is an error, not a silent no-op.
	Amount    pp.Patch[jsonNumber] `json:"amount"`
	Currency  pp.Patch[string]     `json:"currency"`
	InvoiceID pp.Patch[string]     `json:"invoice_id"`
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, link, func(c context.Context, t payments.Tenant, id uuid.UUID, b updateBody) (pc.Link, error) {
		var v api.Validator
		v.Check(!b.Amount.Set, "amount", "cannot be changed after creation")
		v.Check(!b.Currency.Set, "currency", "cannot be changed after creation")
		v.Check(!b.InvoiceID.Set, "invoice_id", "cannot be changed after creation")
		if err := v.Err(); err != nil {
			return pc.Link{}, err
		}
		return rs.svc.Update(c, t, id, pc.UpdateInput{Title: b.Title, Description: b.Description, RedirectURL: b.RedirectURL,
			SuccessMessage: b.SuccessMessage, Status: b.Status, Metadata: b.Metadata})
	}, rs.linkOut)
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	api.Delete(ctx, link, rs.svc.Delete, "checkout link deleted")
}
