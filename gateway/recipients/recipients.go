// Package recipients is the HTTP edge of saved payout destinations (spec "Recipients"):
// POST /recipients as specified, and GET /recipients, GET /recipients/:id and
// DELETE /recipients/:id as our extension.
package recipients

import (
	"context"
	"encoding/json"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
	"svc/payments/idempotency"
	pr "svc/payments/recipients"

	gwidem "svc/gateway/idempotency"
)

// Routes is the RouteSet of /v1/recipients.
type Routes struct {
	svc  *pr.Service
	keys *idempotency.Keys
}

// New returns the routes over svc; POST also takes X-Idempotency-Key through keys.
func New(svc *pr.Service, keys *idempotency.Keys) *Routes { return &Routes{svc: svc, keys: keys} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/recipients", protect(gwidem.Middleware(rs.keys)(rs.create)))
	r.GET("/v1/recipients", protect(rs.list))
	r.GET("/v1/recipients/{id}", protect(rs.get))
	r.DELETE("/v1/recipients/{id}", protect(rs.delete))
}

// JSON is a recipient as the API shows it: its type's object beside the common fields.
type JSON struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	CustomerID *string `json:"customer_id"`
	pr.Details
	Metadata  map[string]string `json:"metadata"`
	CreatedAt string            `json:"created_at"`
}

func out(r pr.Recipient) JSON {
	j := JSON{ID: r.ID.String(), Type: r.Type, Details: r.Details, Metadata: r.Metadata.OrEmpty(), CreatedAt: api.Time(r.CreatedAt)}
	if r.CustomerID != nil {
		s := r.CustomerID.String()
		j.CustomerID = &s
	}
	return j
}

type createBody struct {
	Type             string          `json:"type"`
	CustomerID       *string         `json:"customer_id"`
	BankAccount      *pr.Bank        `json:"bank_account"`
	CryptoAddress    *pr.Crypto      `json:"crypto_address"`
	USBankAccount    *pr.USBank      `json:"us_bank_account"`
	SWIFTBankAccount *pr.SWIFT       `json:"swift_bank_account"`
	Metadata         json.RawMessage `json:"metadata"`
}

// recipient is the recipients resource for the generic handlers of api.
var recipient = api.Resource{NotFound: pr.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, recipient, func(c context.Context, t payments.Tenant, b createBody) (pr.Recipient, error) {
		var v api.Validator
		in := pr.CreateInput{Type: b.Type, CustomerID: api.UUIDField(&v, "customer_id", b.CustomerID), Details: pr.Details{
			BankAccount: b.BankAccount, CryptoAddress: b.CryptoAddress, USBankAccount: b.USBankAccount, SWIFTBankAccount: b.SWIFTBankAccount}}
		if v.Ok() {
			in.Validate(&v)
		}
		in.Metadata, _ = v.Metadata(b.Metadata, false)
		if err := v.Err(); err != nil {
			return pr.Recipient{}, err
		}
		return rs.svc.Create(c, t, in)
	}, out)
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, pg, ok := api.TenantPaging(ctx)
	if !ok {
		return
	}
	typ, ok := api.Query(ctx, "type", pr.Types...)
	if !ok {
		return
	}
	f := pr.Filter{Type: typ, Page: pg.Page, Limit: pg.Limit}
	if s := string(ctx.QueryArgs().Peek("customer_id")); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			api.Fail(ctx, api.Invalid("customer_id", "must be a UUID"))
			return
		}
		f.CustomerID = &id
	}
	md, err := api.MetadataFilter(ctx)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	f.Metadata = md
	items, total, err := rs.svc.List(api.Ctx(ctx), t, f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, out, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, recipient, rs.svc.Get, out) }

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	tn, id, ok := api.Target(ctx, recipient.NotFound)
	if !ok {
		return
	}
	if err := rs.svc.Delete(api.Ctx(ctx), tn, id); err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, map[string]any{"id": id.String(), "deleted": true})
}
