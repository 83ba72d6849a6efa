// Package withdrawals is the HTTP edge of withdrawals (spec "Withdrawals"): a gateway
// RouteSet over payments/withdrawals, and the small helpers the other money-out resources
// (offramps, recipients, transfers) share.
package withdrawals

import (
	"context"
	"encoding/json"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	gwidem "svc/gateway/idempotency"
	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/providers"
	pw "svc/payments/withdrawals"
)

// Routes is the RouteSet of /v1/payments/withdrawals.
type Routes struct {
	svc  *pw.Service
	keys *idempotency.Keys
	// AfterCreate, when set, runs between the service's write (the debit) and the response;
	// tests panic in it to simulate the process dying in between.
	AfterCreate func()
}

// New returns the routes over svc; POST takes X-Idempotency-Key through keys.
func New(svc *pw.Service, keys *idempotency.Keys) *Routes { return &Routes{svc: svc, keys: keys} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/withdrawals", protect(gwidem.Middleware(rs.keys)(rs.create)))
	r.GET("/v1/payments/withdrawals", protect(rs.list))
	r.GET("/v1/payments/withdrawals/{id}", protect(rs.get))
}

// JSON is a withdrawal as the API shows it.
type JSON struct {
	ID                 string            `json:"id"`
	AmountUSD          string            `json:"amount_usd"`
	Token              string            `json:"token"`
	Chain              string            `json:"chain"`
	DestinationAddress string            `json:"destination_address"`
	Status             string            `json:"status"`
	TxHash             *string           `json:"tx_hash"`
	FailureReason      *string           `json:"failure_reason"`
	CreatedAt          string            `json:"created_at"`
	UpdatedAt          string            `json:"updated_at"`
	SettledAt          *string           `json:"settled_at"`
	Metadata           map[string]string `json:"metadata"`
}

// Out renders a withdrawal.
func Out(w pw.Withdrawal) JSON {
	return JSON{ID: w.ID.String(), AmountUSD: w.Amount.String(), Token: w.Token, Chain: string(w.Chain),
		DestinationAddress: w.DestinationAddress, Status: w.Status, TxHash: api.StrPtr(w.TxHash), FailureReason: api.StrPtr(w.FailureReason),
		CreatedAt: api.Time(w.CreatedAt), UpdatedAt: api.Time(w.UpdatedAt), SettledAt: api.TimePtr(w.SettledAt),
		Metadata: w.Metadata.OrEmpty()}
}

type createBody struct {
	AmountUSD          string          `json:"amount_usd"`
	Token              string          `json:"token"`
	Chain              string          `json:"chain"`
	DestinationAddress string          `json:"destination_address"`
	Metadata           json.RawMessage `json:"metadata"`
}

// withdrawal is the withdrawals resource for the generic handlers of api.
var withdrawal = api.Resource{NotFound: pw.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, withdrawal, rs.createChecked, Out)
}

// createChecked checks the body (400 naming every bad field), then creates; AfterCreate runs
// after the write (the debit).
func (rs *Routes) createChecked(c context.Context, t payments.Tenant, b createBody) (pw.Withdrawal, error) {
	var v api.Validator
	amount := pw.CreateInput{AmountUSD: b.AmountUSD, Token: b.Token, Chain: b.Chain, DestinationAddress: b.DestinationAddress}.Validate(&v)
	md, _ := v.Metadata(b.Metadata, false)
	if err := v.Err(); err != nil {
		return pw.Withdrawal{}, err
	}
	w, err := rs.svc.Create(c, t, pw.Request{Amount: amount, Chain: providers.Chain(b.Chain), DestinationAddress: b.DestinationAddress, Metadata: md})
	if err == nil && rs.AfterCreate != nil {
		rs.AfterCreate()
	}
	return w, err
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	tn, pg, ok := api.TenantPaging(ctx)
	if !ok {
		return
	}
	status, ok := api.Query(ctx, "status", pw.FilterStatuses...)
	if !ok {
		return
	}
	md, err := api.MetadataFilter(ctx)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items, total, err := rs.svc.List(api.Ctx(ctx), tn, pw.Filter{Statuses: pw.ExpandStatus(status), Metadata: md, Page: pg.Page, Limit: pg.Limit})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, Out, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, withdrawal, rs.svc.Get, Out) }
