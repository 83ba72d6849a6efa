// Package invoices is the HTTP edge of invoices (spec "Invoices"): a gateway RouteSet over
// payments/invoices.
package invoices

import (
	"encoding/json"
	"slices"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	gp "svc/gateway/products"
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

// LineJSON is a line item in responses (invoices and checkout links).
type LineJSON struct {
	ID             string  `json:"id"`
	Description    string  `json:"description"`
	Quantity       int64   `json:"quantity"`
	UnitPrice      gp.Num  `json:"unit_price"`
	ProductID      *string `json:"product_id"`
	TaxType        string  `json:"tax_type"`
	TaxRate        gp.Num  `json:"tax_rate"`
	DiscountType   string  `json:"discount_type"`
	Discount       gp.Num  `json:"discount"`
	Subtotal       gp.Num  `json:"subtotal"`
	DiscountAmount gp.Num  `json:"discount_amount"`
	TaxAmount      gp.Num  `json:"tax_amount"`
	Total          gp.Num  `json:"total"`
}

// LineOut renders a line item.
func LineOut(l pi.Line, currency string) LineJSON {
	out := LineJSON{ID: l.ID.String(), Description: l.Description, Quantity: l.Quantity,
		UnitPrice: gp.Amount(currency, l.UnitPrice), TaxType: l.Tax.Type, TaxRate: gp.Adjustment(l.Tax, currency),
		DiscountType: l.Discount.Type, Discount: gp.Adjustment(l.Discount, currency),
		Subtotal: gp.Amount(currency, l.Subtotal), DiscountAmount: gp.Amount(currency, l.DiscountAmount),
		TaxAmount: gp.Amount(currency, l.TaxAmount), Total: gp.Amount(currency, l.Total)}
	if l.ProductID != nil {
		s := l.ProductID.String()
		out.ProductID = &s
	}
	return out
}

// LinesOut renders line items (never null).
func LinesOut(lines []pi.Line, currency string) []LineJSON {
	out := make([]LineJSON, len(lines))
	for i, l := range lines {
		out[i] = LineOut(l, currency)
	}
	return out
}

type invoiceJSON struct {
	ID            string     `json:"id"`
	InvoiceNumber string     `json:"invoice_number"`
	Title         string     `json:"title"`
	CustomerName  string     `json:"customer_name"`
	CustomerEmail string     `json:"customer_email"`
	CustomerID    *string    `json:"customer_id"`
	Currency      string     `json:"currency"`
	Status        string     `json:"status"`
	TotalAmount   gp.Num     `json:"total_amount"`
	IssueDate     string     `json:"issue_date"`
	DueDate       *string    `json:"due_date"`
	Notes         *string    `json:"notes"`
	PaidAt        *string    `json:"paid_at"`
	SentAt        *string    `json:"sent_at"`
	LineItems     []LineJSON `json:"line_items"`
	CreatedAt     string     `json:"created_at"`
	UpdatedAt     string     `json:"updated_at"`
}

func invoiceOut(inv pi.Invoice) invoiceJSON {
	out := invoiceJSON{ID: inv.ID.String(), InvoiceNumber: inv.InvoiceNumber(), Title: inv.Title,
		CustomerName: inv.CustomerName, CustomerEmail: inv.CustomerEmail, Currency: inv.Currency, Status: inv.Status,
		TotalAmount: gp.Amount(inv.Currency, inv.TotalAmount), IssueDate: pi.FormatDate(inv.IssueDate), Notes: inv.Notes,
		PaidAt: gp.TimePtr(inv.PaidAt), SentAt: gp.TimePtr(inv.SentAt), LineItems: LinesOut(inv.Lines, inv.Currency),
		CreatedAt: gp.Time(inv.CreatedAt), UpdatedAt: gp.Time(inv.UpdatedAt)}
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

// LineBody is a line item in requests (invoices and checkout links).
type LineBody struct {
	Description  string       `json:"description"`
	Quantity     *int64       `json:"quantity"`
	UnitPrice    *json.Number `json:"unit_price"`
	ProductID    *uuid.UUID   `json:"product_id"`
	TaxType      string       `json:"tax_type"`
	TaxRate      *json.Number `json:"tax_rate"`
	DiscountType string       `json:"discount_type"`
	Discount     *json.Number `json:"discount"`
}

// Input converts the body to the domain's input.
func (b LineBody) Input() pi.LineInput {
	return pi.LineInput{Description: b.Description, Quantity: b.Quantity, UnitPrice: gp.NumText(b.UnitPrice),
		ProductID: b.ProductID, TaxType: b.TaxType, TaxRate: gp.NumText(b.TaxRate), DiscountType: b.DiscountType,
		Discount: gp.NumText(b.Discount)}
}

// LineInputs converts line bodies.
func LineInputs(bs []LineBody) []pi.LineInput {
	out := make([]pi.LineInput, len(bs))
	for i, b := range bs {
		out[i] = b.Input()
	}
	return out
}

type createBody struct {
	Title         string     `json:"title"`
	CustomerName  string     `json:"customer_name"`
	CustomerEmail string     `json:"customer_email"`
	CustomerID    *uuid.UUID `json:"customer_id"`
	Currency      string     `json:"currency"`
	IssueDate     string     `json:"issue_date"`
	DueDate       *string    `json:"due_date"`
	Notes         *string    `json:"notes"`
	LineItems     []LineBody `json:"line_items"`
}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	t, ok := gp.Tenant(ctx)
	if !ok {
		return
	}
	var b createBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Create(c, t, pi.CreateInput{Title: b.Title, CustomerName: b.CustomerName, CustomerEmail: b.CustomerEmail,
		CustomerID: b.CustomerID, Currency: b.Currency, IssueDate: b.IssueDate, DueDate: b.DueDate, Notes: b.Notes,
		Lines: LineInputs(b.LineItems)})
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.Created(ctx, invoiceOut(inv))
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := gp.Tenant(ctx)
	if !ok {
		return
	}
	pg, ok := gp.Paging(ctx)
	if !ok {
		return
	}
	status := string(ctx.QueryArgs().Peek("status"))
	if status != "" && !slices.Contains(pi.Statuses, status) {
		api.Fail(ctx, api.Invalid("status", "must be one of [draft pending paid overdue canceled]"))
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	items, total, err := rs.svc.List(c, t, pi.Filter{Status: status, Search: string(ctx.QueryArgs().Peek("search")), Page: pg.Page, Limit: pg.Limit})
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, invoiceOut, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) {
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Get(c, t, id)
	if err != nil {
		gp.Fail(ctx, err)
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
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	var b updateBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Update(c, t, id, pi.UpdateInput(b))
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.OK(ctx, invoiceOut(inv))
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	if err := rs.svc.Delete(c, t, id); err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]string{"id": id.String()}, "invoice deleted")
}

func (rs *Routes) send(ctx *fasthttp.RequestCtx) {
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	inv, err := rs.svc.Send(c, t, id)
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.Message(ctx, invoiceOut(inv), "invoice sent to "+inv.CustomerEmail)
}

func (rs *Routes) addLine(ctx *fasthttp.RequestCtx) {
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	var b LineBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	l, err := rs.svc.AddLine(c, t, id, b.Input())
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	inv, err := rs.svc.Get(c, t, id)
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.Created(ctx, LineOut(l, inv.Currency))
}

func (rs *Routes) removeLine(ctx *fasthttp.RequestCtx) {
	t, id, ok := gp.Target(ctx, pi.ErrNotFound)
	if !ok {
		return
	}
	lineID, ok := api.PathUUID(ctx, "lineItemId", pi.ErrLineNotFound)
	if !ok {
		return
	}
	c, cancel := gp.Context(ctx)
	defer cancel()
	inv, err := rs.svc.RemoveLine(c, t, id, lineID)
	if err != nil {
		gp.Fail(ctx, err)
		return
	}
	api.OK(ctx, invoiceOut(inv))
}
