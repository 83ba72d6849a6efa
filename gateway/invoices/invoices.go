// Package invoices is the HTTP edge of invoices (spec "Invoices"): a gateway RouteSet over
// payments/invoices.
package invoices

import (
	"context"
	"encoding/json"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/payments"
	pi "svc/payments/invoices"
	"svc/payments/metadata"
	pp "svc/payments/products"
)

// Routes is the RouteSet of /v1/invoices.
type Routes struct {
	svc  *pi.Service
	idem api.Middleware
}

// New returns the routes over svc.
func New(svc *pi.Service) *Routes { return &Routes{svc: svc, idem: api.OrNone(nil)} }

// Idempotent honours X-Idempotency-Key on the route set's creates and state-changing POSTs
// (issue 30): m is gateway/idempotency's middleware; nil changes nothing.
func (rs *Routes) Idempotent(m api.Middleware) *Routes { rs.idem = api.OrNone(m); return rs }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/invoices", protect(rs.idem(rs.create)))
	r.GET("/v1/invoices", protect(rs.list))
	r.GET("/v1/invoices/{id}", protect(rs.get))
	r.PATCH("/v1/invoices/{id}", protect(rs.update))
	r.DELETE("/v1/invoices/{id}", protect(rs.delete))
	r.POST("/v1/invoices/{id}/send", protect(rs.idem(rs.send)))
	r.POST("/v1/invoices/{id}/line-items", protect(rs.idem(rs.addLine)))
	r.DELETE("/v1/invoices/{id}/line-items/{lineItemId}", protect(rs.removeLine))
}

type invoiceJSON struct {
	ID            string            `json:"id"`
	InvoiceNumber string            `json:"invoice_number"`
	Title         string            `json:"title"`
	CustomerName  string            `json:"customer_name"`
	CustomerEmail string            `json:"customer_email"`
	CustomerID    *string           `json:"customer_id"`
	Currency      string            `json:"currency"`
	Status        string            `json:"status"`
	TotalAmount   api.Num           `json:"total_amount"`
	IssueDate     string            `json:"issue_date"`
	DueDate       *string           `json:"due_date"`
	Notes         *string           `json:"notes"`
	PaidAt        *string           `json:"paid_at"`
	SentAt        *string           `json:"sent_at"`
	LineItems     []shapes.LineJSON `json:"line_items"`
	Metadata      metadata.Metadata `json:"metadata"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
}

func invoiceOut(inv pi.Invoice) invoiceJSON {
	out := invoiceJSON{ID: inv.ID.String(), InvoiceNumber: inv.InvoiceNumber(), Title: inv.Title,
		CustomerName: inv.CustomerName, CustomerEmail: inv.CustomerEmail, Currency: inv.Currency, Status: inv.Status,
		TotalAmount: shapes.Amount(inv.Currency, inv.TotalAmount), IssueDate: pi.FormatDate(inv.IssueDate), Notes: inv.Notes,
		PaidAt: api.TimePtr(inv.PaidAt), SentAt: api.TimePtr(inv.SentAt), LineItems: shapes.LinesOut(inv.Lines, inv.Currency),
		Metadata: inv.Metadata.OrEmpty(), CreatedAt: api.Time(inv.CreatedAt), UpdatedAt: api.Time(inv.UpdatedAt)}
	if inv.CustomerID != nil {
		s := inv.CustomerID.String()
		out.CustomerID = &s
	}
	if inv.DueDate != nil {
		s := pi.FormatDate(*inv.DueDate)
		out.DueDate = &s
	}
	return out
}

type createBody struct {
	Title         string            `json:"title"`
	CustomerName  string            `json:"customer_name"`
	CustomerEmail string            `json:"customer_email"`
	CustomerID    *uuid.UUID        `json:"customer_id"`
	Currency      string            `json:"currency"`
	IssueDate     string            `json:"issue_date"`
	DueDate       *string           `json:"due_date"`
	Notes         *string           `json:"notes"`
	LineItems     []shapes.LineBody `json:"line_items"`
	Metadata      json.RawMessage   `json:"metadata"`
}

// invoice is the invoices resource for the generic handlers of api.
var invoice = api.Resource{NotFound: pi.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, invoice, func(c context.Context, t payments.Tenant, b createBody) (pi.Invoice, error) {
		return rs.svc.Create(c, t, pi.CreateInput{Title: b.Title, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
			CustomerID: b.CustomerID, Currency: b.Currency, IssueDate: b.IssueDate, DueDate: b.DueDate, Notes: b.Notes,
			Lines: shapes.LineInputs(b.LineItems), Metadata: b.Metadata})
	}, invoiceOut)
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	api.ListPage(ctx, invoice, func(c context.Context, q api.Listing) ([]pi.Invoice, int64, error) {
		md, err := api.MetadataFilter(ctx)
		if err != nil {
			return nil, 0, err
		}
		return rs.svc.List(c, q.Tenant, pi.Filter{Status: q.Status, Metadata: md, Search: string(ctx.QueryArgs().Peek("search")), Page: q.Page, Limit: q.Limit})
	}, invoiceOut, pi.Statuses...)
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, invoice, rs.svc.Get, invoiceOut) }

type updateBody struct {
	Title         pp.Patch[string] `json:"title"`
	CustomerName  pp.Patch[string] `json:"customer_name"`
	CustomerEmail pp.Patch[string] `json:"customer_email"`
	Currency      pp.Patch[string] `json:"currency"`
	IssueDate     pp.Patch[string] `json:"issue_date"`
	DueDate       pp.Patch[string] `json:"due_date"`
	Notes         pp.Patch[string] `json:"notes"`
	Status        pp.Patch[string] `json:"status"`
	Metadata      json.RawMessage  `json:"metadata"`
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, invoice, func(c context.Context, t payments.Tenant, id uuid.UUID, b updateBody) (pi.Invoice, error) {
		return rs.svc.Update(c, t, id, pi.UpdateInput(b))
	}, invoiceOut)
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	api.Delete(ctx, invoice, rs.svc.Delete, "invoice deleted")
}

func (rs *Routes) send(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Send(c, t, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, invoiceOut(inv), "invoice sent to "+inv.CustomerEmail)
}

func (rs *Routes) addLine(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	var b shapes.LineBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	l, err := rs.svc.AddLine(c, t, id, b.Input())
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	inv, err := rs.svc.Get(c, t, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, shapes.LineOut(l, inv.Currency))
}

func (rs *Routes) removeLine(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	lineID, ok := api.PathUUID(ctx, "lineItemId", pi.ErrLineNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	inv, err := rs.svc.RemoveLine(c, t, id, lineID)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, invoiceOut(inv))
}
