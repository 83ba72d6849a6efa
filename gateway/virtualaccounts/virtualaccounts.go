// Package virtualaccounts serves the NGN virtual account routes over
// payments/virtualaccounts: the customer's permanent account in the camelCase issuing shape
// (POST/GET /customers/:id/ngn-virtual-account), and the lists and reads in the snake_case
// concept shape (/customers/:id/virtual-accounts, /virtual-accounts, /virtual-accounts/:id),
// as DESIGN.md section 6 decides.
package virtualaccounts

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	o "svc/gateway/openapi"
	"svc/payments"
	"svc/payments/customers"
	va "svc/payments/virtualaccounts"
)

// Service is what the handlers need (*virtualaccounts.Service).
type Service interface {
	IssuePermanent(ctx context.Context, t payments.Tenant, customerID uuid.UUID) (va.Account, bool, error)
	CustomerAccount(ctx context.Context, t payments.Tenant, customerID uuid.UUID) (va.Account, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (va.Account, error)
	List(ctx context.Context, t payments.Tenant, f va.Filter) ([]va.Account, int64, error)
}

// Routes is the virtual accounts RouteSet.
type Routes struct {
	svc  Service
	idem api.Middleware
}

// New returns the routes; idem wraps the POST (nil: none).
func New(svc Service, idem api.Middleware) *Routes {
	return &Routes{svc: svc, idem: api.OrNone(idem)}
}

// Register adds the routes.
func (h *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/customers/{id}/ngn-virtual-account", protect(h.idem(h.issue)))
	r.GET("/v1/customers/{id}/ngn-virtual-account", protect(h.customerAccount))
	r.GET("/v1/customers/{id}/virtual-accounts", protect(h.customerList))
	r.GET("/v1/virtual-accounts", protect(h.list))
	r.GET("/v1/virtual-accounts/{id}", protect(h.get))
}

func issuing(a va.Account) map[string]any {
	var cid *string
	if a.CustomerID != nil {
		s := a.CustomerID.String()
		cid = &s
	}
	return map[string]any{
		"id": a.ID, "accountNumber": a.AccountNumber, "bankName": a.BankName, "accountName": a.AccountName,
		"status": a.Status, "type": a.Type, "customerId": cid, "created_at": api.Time(a.CreatedAt),
	}
}

func concept(a va.Account) map[string]any {
	var cid, amount, exp *string
	if a.CustomerID != nil {
		s := a.CustomerID.String()
		cid = &s
	}
	if a.Amount != nil {
		s := a.Amount.String()
		amount = &s
	}
	if a.ExpiresAt != nil {
		s := api.Time(*a.ExpiresAt)
		exp = &s
	}
	status := "inactive"
	if a.Status == "ACTIVE" {
		status = "active"
	}
	return map[string]any{
		"id": a.ID, "account_number": a.AccountNumber, "bank_name": a.BankName, "account_name": a.AccountName,
		"customer_id": cid, "type": a.Type, "status": status, "expires_at": exp, "amount": amount, "currency": "NGN",
		"created_at": api.Time(a.CreatedAt),
	}
}

// customer is a customer's accounts, and account a virtual account, for the generic
// handlers of api.
var (
	customer = api.Resource{NotFound: customers.ErrNotFound}
	account  = api.Resource{NotFound: va.ErrNotFound}
)

func (h *Routes) issue(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, customer.NotFound)
	if !ok {
		return
	}
	a, created, err := h.svc.IssuePermanent(api.Ctx(ctx), t, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	if created {
		api.Created(ctx, issuing(a))
		return
	}
	api.OK(ctx, issuing(a))
}

func (h *Routes) customerAccount(ctx *fasthttp.RequestCtx) {
	api.Get(ctx, customer, h.svc.CustomerAccount, issuing)
}

func (h *Routes) customerList(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, customer.NotFound)
	if !ok {
		return
	}
	if _, err := customersGet(ctx, h, t, id); err != nil {
		api.Fail(ctx, err)
		return
	}
	h.listWith(ctx, t, &id)
}

// customersGet checks the customer exists for this tenant (404 otherwise), through the
// service's CustomerAccount (which loads the customer first).
func customersGet(ctx *fasthttp.RequestCtx, h *Routes, t payments.Tenant, id uuid.UUID) (va.Account, error) {
	a, err := h.svc.CustomerAccount(api.Ctx(ctx), t, id)
	if err == va.ErrNotFound {
		return a, nil
	}
	return a, err
}

func (h *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	var cid *uuid.UUID
	if raw := string(ctx.QueryArgs().Peek("customer_id")); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil {
			api.Fail(ctx, api.Invalid("customer_id", "must be a UUID"))
			return
		}
		cid = &id
	}
	h.listWith(ctx, t, cid)
}

// statuses is what the status filter takes, in any case (the rows hold them upper-case).
var statuses = []string{"active", "inactive", "expired"}

func (h *Routes) listWith(ctx *fasthttp.RequestCtx, t payments.Tenant, cid *uuid.UUID) {
	p, err := api.Paging(ctx, "limit", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	status := strings.ToUpper(string(ctx.QueryArgs().Peek("status")))
	if status != "" && !slices.ContainsFunc(statuses, func(s string) bool { return strings.ToUpper(s) == status }) {
		api.Fail(ctx, api.Invalid("status", fmt.Sprintf("must be one of %v", statuses)))
		return
	}
	as, total, err := h.svc.List(api.Ctx(ctx), t, va.Filter{Status: status, CustomerID: cid, Limit: p.Limit, Offset: p.Offset()})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := make([]map[string]any, len(as))
	for i, a := range as {
		out[i] = concept(a)
	}
	meta := p.Meta(total)
	api.Array(ctx, out, &meta)
}

func (h *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, account, h.svc.Get, concept) }

var issuingSchema = o.Named("CustomerVirtualAccount", o.Obj(map[string]o.Schema{
	"id": o.UUID(""), "accountNumber": o.Str("10-digit NUBAN"), "bankName": o.Str(""), "accountName": o.Str("the customer's name"),
	"status": o.Enum("ACTIVE", "EXPIRED", "INACTIVE"), "type": o.Enum("PERMANENT"), "customerId": o.UUID(""), "created_at": o.Time(""),
}))

var conceptSchema = o.Named("VirtualAccount", o.Obj(map[string]o.Schema{
	"id": o.UUID(""), "account_number": o.Str("10-digit NUBAN"), "bank_name": o.Str(""), "account_name": o.Str(""),
	"customer_id": o.Nullable(o.UUID("")), "type": o.Enum("TEMPORARY", "PERMANENT"), "status": o.Enum("active", "inactive"),
	"expires_at": o.Nullable(o.Time("null for permanent accounts")), "amount": o.Nullable(o.Decimal("NGN, temporary only")),
	"currency": o.Enum("NGN"), "created_at": o.Time(""),
}))

// Docs documents the routes.
func (h *Routes) Docs() []o.Op {
	paging := []o.Param{{Name: "page", Schema: o.Int("1-indexed, default 1")}, {Name: "limit", Schema: o.Int("default 20, at most 100")},
		{Name: "status", Schema: o.Enum(statuses...)}}
	return []o.Op{
		{Method: "POST", Path: "/v1/customers/{id}/ngn-virtual-account", Tag: "virtual accounts", Summary: "Issue the customer's permanent NGN virtual account",
			Description: "Requires TIER_1. One per customer: 201 when issued (virtual_account.created and onramp.completed are recorded), 200 with the same account afterwards. Deposits settle to the customer's USDT balance. Live without a configured bank partner: 503 PROVIDER_UNAVAILABLE, nothing created. Accepts X-Idempotency-Key.",
			Responses:   map[int]o.Response{201: {Description: "the new account (camelCase issuing shape)", Data: issuingSchema}, 200: {Description: "the existing account", Data: issuingSchema}},
			Errors:      []string{"NOT_FOUND", "KYC_TIER_REQUIRED", "PROVIDER_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/customers/{id}/ngn-virtual-account", Tag: "virtual accounts", Summary: "The customer's permanent NGN virtual account",
			Responses: map[int]o.Response{200: {Description: "the account (camelCase issuing shape)", Data: issuingSchema}},
			Errors:    []string{"NOT_FOUND"}},
		{Method: "GET", Path: "/v1/customers/{id}/virtual-accounts", Tag: "virtual accounts", Summary: "All virtual accounts of a customer", Query: paging,
			Responses: map[int]o.Response{200: {Description: "data is the array; paging in the top-level meta", Data: o.Arr(conceptSchema)}},
			Errors:    []string{"VALIDATION_ERROR", "NOT_FOUND"}},
		{Method: "GET", Path: "/v1/virtual-accounts", Tag: "virtual accounts", Summary: "List virtual accounts",
			Query:     append(paging, o.Param{Name: "customer_id", Schema: o.UUID("")}),
			Responses: map[int]o.Response{200: {Description: "data is the array; paging in the top-level meta", Data: o.Arr(conceptSchema)}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/virtual-accounts/{id}", Tag: "virtual accounts", Summary: "Get a virtual account",
			Responses: map[int]o.Response{200: {Description: "the account", Data: conceptSchema}}, Errors: []string{"NOT_FOUND"}},
	}
}
