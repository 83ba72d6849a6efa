package invoices

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var invoiceSchema = o.Named("Invoice", o.Obj(map[string]o.Schema{
	"id":             o.UUID(""),
	"invoice_number": o.Str("INV-000001, consecutive per merchant and environment"),
	"title":          o.Str(""),
	"customer_name":  o.Str(""),
	"customer_email": o.Str(""),
	"customer_id":    o.Nullable(o.UUID("")),
	"currency":       o.Enum("NGN", "USD"),
	"status":         o.Enum("draft", "pending", "paid", "overdue", "canceled"),
	"total_amount":   o.Number("sum of the line totals"),
	"issue_date":     o.Str("YYYY-MM-DD"),
	"due_date":       o.Nullable(o.Str("YYYY-MM-DD")),
	"notes":          o.Nullable(o.Str("")),
	"paid_at":        o.Nullable(o.Time("")),
	"sent_at":        o.Nullable(o.Time("last time the invoice was emailed")),
	"line_items":     o.Arr(shapes.LineSchema),
	"metadata":       o.Metadata(),
	"created_at":     o.Time(""),
	"updated_at":     o.Time(""),
}, "id", "invoice_number", "status", "total_amount", "line_items", "metadata"))

// Docs documents the invoice routes.
func (rs *Routes) Docs() []o.Op {
	one := map[int]o.Response{200: {Description: "the invoice", Data: invoiceSchema}}
	return []o.Op{
		{Method: "POST", Path: "/v1/invoices", Idempotent: true, Tag: "invoices", Summary: "Create a draft invoice",
			Body: o.Obj(map[string]o.Schema{
				"title": o.Str("at most 255"), "customer_name": o.Str("at most 255"), "customer_email": o.Str(""),
				"customer_id": o.UUID(""), "currency": o.Enum("NGN", "USD"), "issue_date": o.Str("YYYY-MM-DD, default today (UTC)"),
				"due_date": o.Str("YYYY-MM-DD"), "notes": o.Str("at most 2000"), "line_items": o.Arr(shapes.LineBodySchema),
				"metadata": o.Metadata(),
			}, "title", "customer_name", "customer_email", "line_items"),
			Responses: map[int]o.Response{201: {Description: "the invoice", Data: invoiceSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "PRODUCT_INACTIVE"}},
		{Method: "GET", Path: "/v1/invoices", Tag: "invoices", Summary: "List invoices",
			Query: append([]o.Param{{Name: "status", Schema: o.Enum("draft", "pending", "paid", "overdue", "canceled")},
				{Name: "search", Description: "customer name, email or invoice number (case-insensitive)"}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses: map[int]o.Response{200: {Description: "a page of invoices", Data: o.Obj(map[string]o.Schema{"items": o.Arr(invoiceSchema), "meta": o.PageMeta})}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/invoices/{id}", Tag: "invoices", Summary: "Get an invoice", Responses: one, Errors: []string{"NOT_FOUND"}},
		{Method: "PATCH", Path: "/v1/invoices/{id}", Tag: "invoices", Summary: "Update a draft or pending invoice",
			Description: "Only the fields sent change; due_date null removes it, notes null clears them; status may be draft, pending or canceled; metadata: the keys sent are set, a key sent as \"\" is removed. Paid -> 422 INVOICE_PAID; overdue or canceled -> 422 INVALID_STATE.",
			Body: o.Obj(map[string]o.Schema{"title": o.Str(""), "customer_name": o.Str(""), "customer_email": o.Str(""),
				"currency": o.Enum("NGN", "USD"), "issue_date": o.Str(""), "due_date": o.Nullable(o.Str("")), "notes": o.Nullable(o.Str("")),
				"status": o.Enum("draft", "pending", "canceled"), "metadata": o.MetadataPatch()}),
			Responses: one, Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "INVOICE_PAID", "INVALID_STATE"}},
		{Method: "DELETE", Path: "/v1/invoices/{id}", Tag: "invoices", Summary: "Delete an invoice that is not paid",
			Description: "Its checkout links are deleted with it.",
			Responses:   map[int]o.Response{200: {Description: "deleted", Data: o.Obj(map[string]o.Schema{"id": o.UUID("")})}},
			Errors:      []string{"NOT_FOUND", "INVOICE_PAID"}},
		{Method: "POST", Path: "/v1/invoices/{id}/send", Idempotent: true, Tag: "invoices", Summary: "Email the invoice with its pay link",
			Description: "Creates the invoice's checkout link when it has none; draft -> pending; a pending or overdue invoice is sent again as a reminder.",
			Responses:   one, Errors: []string{"VALIDATION_ERROR", "NOT_FOUND", "INVOICE_PAID", "INVALID_STATE"}},
		{Method: "POST", Path: "/v1/invoices/{id}/line-items", Idempotent: true, Tag: "invoices", Summary: "Add a line item (total recalculated)",
			Body: shapes.LineBodySchema, Responses: map[int]o.Response{201: {Description: "the new line item", Data: shapes.LineSchema}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "PRODUCT_INACTIVE", "INVOICE_PAID", "INVALID_STATE"}},
		{Method: "DELETE", Path: "/v1/invoices/{id}/line-items/{lineItemId}", Tag: "invoices", Summary: "Remove a line item (total recalculated)",
			Description: "The last line item cannot be removed (422 INVALID_STATE).",
			Responses:   one, Errors: []string{"NOT_FOUND", "INVOICE_PAID", "INVALID_STATE"}},
	}
}
