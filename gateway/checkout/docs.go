package checkout

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var linkSchema = o.Named("CheckoutLink", o.Obj(map[string]o.Schema{
	"id":              o.UUID(""),
	"title":           o.Str(""),
	"description":     o.Nullable(o.Str("")),
	"url":             o.Str("the hosted page: <public base URL>/pay/<slug>"),
	"slug":            o.Str("3 to 100 lowercase letters, digits and dashes"),
	"type":            o.Enum("one_time", "invoice"),
	"amount":          o.Number("one_time: the link's amount; invoice: the invoice's current total"),
	"currency":        o.Enum("NGN", "USD"),
	"status":          o.Enum("active", "inactive"),
	"redirect_url":    o.Nullable(o.Str("")),
	"success_message": o.Nullable(o.Str("")),
	"invoice_id":      o.Nullable(o.UUID("")),
	"line_items":      o.Arr(shapes.LineSchema),
	"payments_count":  o.Int("completed payments"),
	"metadata":        o.Metadata(),
	"created_at":      o.Time(""),
	"updated_at":      o.Time(""),
}, "id", "title", "url", "slug", "type", "amount", "currency", "status", "metadata", "created_at"))

// Docs documents the checkout-link routes and the hosted page.
func (rs *Routes) Docs() []o.Op {
	one := map[int]o.Response{200: {Description: "the link", Data: linkSchema}}
	html := map[int]o.Response{200: {Description: "the page", ContentType: "text/html", Data: o.Str("")},
		404: {Description: "unknown link", ContentType: "text/html", Data: o.Str("")},
		409: {Description: "inactive link, or its invoice is paid or not open", ContentType: "text/html", Data: o.Str("")},
		410: {Description: "deleted link", ContentType: "text/html", Data: o.Str("")},
		422: {Description: "out of stock", ContentType: "text/html", Data: o.Str("")}}
	return []o.Op{
		{Method: "POST", Path: "/v1/checkout-links", Idempotent: true, Tag: "checkout", Summary: "Create a checkout link",
			Description: "Three flavors: one-time (amount + currency, or line_items); invoice-linked (invoice_id); inline (customer_name + customer_email + line_items create a pending invoice and its link). amount, currency and the invoice are fixed after creation.",
			Body: o.Obj(map[string]o.Schema{
				"title": o.Str("required, at most 255"), "description": o.Str("at most 2000"), "type": o.Enum("one_time", "invoice"),
				"slug": o.Str("3-100 lowercase alphanumeric and dashes; generated when omitted"), "currency": o.Enum("NGN", "USD"),
				"redirect_url": o.Str("http(s) URL the payer goes to after paying"), "success_message": o.Str("at most 500"),
				"amount": o.Number("one_time without line_items"), "invoice_id": o.UUID(""), "customer_name": o.Str(""),
				"customer_email": o.Str(""), "line_items": o.Arr(shapes.LineBodySchema),
				"metadata": o.Metadata(),
			}, "title"),
			Responses: map[int]o.Response{201: {Description: "the link", Data: linkSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "SLUG_TAKEN", "PRODUCT_INACTIVE", "INVOICE_PAID", "INVALID_STATE"}},
		{Method: "GET", Path: "/v1/checkout-links", Tag: "checkout", Summary: "List checkout links",
			Query:     append([]o.Param{{Name: "status", Schema: o.Enum("active", "inactive")}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses: map[int]o.Response{200: {Description: "a page of links", Data: o.Obj(map[string]o.Schema{"items": o.Arr(linkSchema), "meta": o.PageMeta})}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/checkout-links/{id}", Tag: "checkout", Summary: "Get a checkout link", Responses: one, Errors: []string{"NOT_FOUND"}},
		{Method: "PATCH", Path: "/v1/checkout-links/{id}", Tag: "checkout", Summary: "Update a checkout link",
			Description: "title, description (null clears), redirect_url (null removes), success_message (null clears), status (active or inactive), metadata (the keys sent are set, a key sent as \"\" is removed). amount, currency and invoice_id cannot change (400). A one_time link already paid cannot be made active again (422 INVALID_STATE).",
			Body: o.Obj(map[string]o.Schema{"title": o.Str(""), "description": o.Nullable(o.Str("")), "redirect_url": o.Nullable(o.Str("")),
				"success_message": o.Nullable(o.Str("")), "status": o.Enum("active", "inactive"), "metadata": o.MetadataPatch()}),
			Responses: one, Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "INVALID_STATE"}},
		{Method: "DELETE", Path: "/v1/checkout-links/{id}", Tag: "checkout", Summary: "Delete a checkout link (irreversible)",
			Description: "The hosted page answers 410 Gone at once; the slug is never reused.",
			Responses:   map[int]o.Response{200: {Description: "deleted", Data: o.Obj(map[string]o.Schema{"id": o.UUID("")})}},
			Errors:      []string{"NOT_FOUND"}},
		{Method: "GET", Path: "/pay/{slug}", Tag: "checkout", Public: true, Summary: "Hosted checkout page (HTML)",
			Description: "Limited per client address (--pay-read-limit a minute, shared with the status poll): 429 page with Retry-After above it.",
			Query: []o.Param{{Name: "payment", Description: "a payment attempt to show (account details, progress, result)"},
				{Name: "notice", Description: "a notice code set by the page's own redirects (link_inactive, invoice_paid, not_payable, payment_closed, out_of_stock, product_inactive, too_many_attempts, sandbox_only, unavailable, refused); unknown codes show nothing"}},
			Responses: html},
		{Method: "POST", Path: "/pay/{slug}/transfer", Tag: "checkout", Public: true, Summary: "Start paying by bank transfer (form post)",
			Description: "Creates a TEMPORARY onramp for the amount (USD at a locked rate) and answers 303 to the page showing the account. Limited per client address (--pay-write-limit a minute, shared with simulate): 429 page with Retry-After above it.",
			Responses:   map[int]o.Response{303: {Description: "to /pay/{slug}?payment=<id>", ContentType: "text/html"}}},
		{Method: "GET", Path: "/pay/{slug}/status", Tag: "checkout", Public: true, Summary: "Status of a payment attempt (the page's poll)",
			Query: []o.Param{{Name: "payment", Required: true}},
			Responses: map[int]o.Response{200: {Description: "status", ContentType: "application/json", Data: o.Obj(map[string]o.Schema{
				"status": o.Enum("awaiting", "completed", "failed", "expired"), "expires_at": o.Time(""),
				"success_message": o.Nullable(o.Str("")), "redirect_url": o.Nullable(o.Str("")), "failure_reason": o.Nullable(o.Str("")),
			})}},
			Errors: []string{"NOT_FOUND", "RATE_LIMITED"}},
		{Method: "POST", Path: "/pay/{slug}/simulate", Tag: "checkout", Public: true, Summary: "Sandbox: simulate the payer's transfer (form post)",
			Responses: map[int]o.Response{303: {Description: "back to the page", ContentType: "text/html"}}},
		{Method: "GET", Path: "/checkout-assets/{file}", Tag: "checkout", Public: true, Summary: "The hosted page's stylesheet and script",
			Responses: map[int]o.Response{200: {Description: "the file", ContentType: "text/plain"}}},
	}
}
