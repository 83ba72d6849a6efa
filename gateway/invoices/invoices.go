// Package invoices is the HTTP edge of invoices (spec "Invoices"): a gateway RouteSet over
// payments/invoices.
package invoices

import (
	"slices"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	pi "svc/payments/invoices"
	pp "svc/payments/products"
)

// Routes is the RouteSet of /v1/invoices.
type Routes struct {
	svc *pi.Service
}

// New returns the routes over svc.
func New(svc *pi.Service) *Routes { return &Routes{svc: svc} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/invoices", protect(rs.create))
	r.GET("/v1/invoices", protect(rs.list))
	r.GET("/v1/invoices/{id}", protect(rs.get))
	r.PATCH("/v1/invoices/{id}", protect(rs.update))
	r.DELETE("/v1/invoices/{id}", protect(rs.delete))
	r.POST("/v1/invoices/{id}/send", protect(rs.send))
	r.POST("/v1/invoices/{id}/line-items", protect(rs.addLine))
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
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
}

func invoiceOut(inv pi.Invoice) invoiceJSON {
	out := invoiceJSON{ID: inv.ID.String(), InvoiceNumber: inv.InvoiceNumber(), Title: inv.Title,
		CustomerName: inv.CustomerName, CustomerEmail: inv.CustomerEmail, Currency: inv.Currency, Status: inv.Status,
		TotalAmount: shapes.Amount(inv.Currency, inv.TotalAmount), IssueDate: pi.FormatDate(inv.IssueDate), Notes: inv.Notes,
		PaidAt: api.TimePtr(inv.PaidAt), SentAt: api.TimePtr(inv.SentAt), LineItems: shapes.LinesOut(inv.Lines, inv.Currency),
		CreatedAt: api.Time(inv.CreatedAt), UpdatedAt: api.Time(inv.UpdatedAt)}
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
}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	var b createBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Create(c, t, pi.CreateInput{Title: b.Title, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
		CustomerID: b.CustomerID, Currency: b.Currency, IssueDate: b.IssueDate, DueDate: b.DueDate, Notes: b.Notes,
		Lines: shapes.LineInputs(b.LineItems)})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, invoiceOut(inv))
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	pg, err := api.Paging(ctx, "limit", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	status := string(ctx.QueryArgs().Peek("status"))
	if status != "" && !slices.Contains(pi.Statuses, status) {
		api.Fail(ctx, api.Invalid("status", "must be one of [draft pending paid overdue canceled]"))
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	items, total, err := rs.svc.List(c, t, pi.Filter{Status: status, Search: string(ctx.QueryArgs().Peek("search")), Page: pg.Page, Limit: pg.Limit})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, invoiceOut, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Get(c, t, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, invoiceOut(inv))
}

type updateBody struct {
	Title         pp.Patch[string] `json:"title"`
	CustomerName  pp.Patch[string] `json:"customer_name"`
	CustomerEmail pp.Patch[string] `json:"customer_email"`
	Currency      pp.Patch[string] `json:"currency"`
	IssueDate     pp.Patch[string] `json:"issue_date"`
	DueDate       pp.Patch[string] `json:"due_date"`
	Notes         pp.Patch[string] `json:"notes"`
	Status        pp.Patch[string] `json:"status"`
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	var b updateBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Update(c, t, id, pi.UpdateInput(b))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, invoiceOut(inv))
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	if err := rs.svc.Delete(c, t, id); err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]string{"id": id.String()}, "invoice deleted")
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
