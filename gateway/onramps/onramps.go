// Package onramps is the HTTP edge of /v1/payments/onramps (spec "Onramps") over
// payments/onramps. POST is idempotent with X-Idempotency-Key (the middleware given to New).
package onramps

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/gateway/openapi"
	"svc/payments"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
)

// Service is what the handlers need; *payments/onramps.Service is one.
type Service interface {
	Create(ctx context.Context, t payments.Tenant, in onramps.CreateInput) (onramps.Onramp, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (onramps.Onramp, error)
	List(ctx context.Context, t payments.Tenant, f onramps.Filter) ([]onramps.Onramp, int64, error)
	Now() time.Time
}

var _ Service = (*onramps.Service)(nil)

// Middleware wraps a handler (the idempotency middleware).
type Middleware = api.Middleware

// Routes is the RouteSet of /v1/payments/onramps.
type Routes struct {
	svc  Service
	idem Middleware
}

// New returns the routes over svc; idem wraps POST (nil: none).
func New(svc Service, idem Middleware) *Routes {
	return &Routes{svc: svc, idem: api.OrNone(idem)}
}

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/onramps", protect(rs.idem(rs.create)))
	r.GET("/v1/payments/onramps", protect(rs.list))
	r.GET("/v1/payments/onramps/{id}", protect(rs.get))
}

// SettlementJSON is an onramp's settlement.
type SettlementJSON struct {
	Mode               string  `json:"mode"`
	Asset              string  `json:"asset"`
	Chain              *string `json:"chain"`
	DestinationAddress *string `json:"destination_address"`
}

// OnrampJSON is the spec's Onramp object (camelCase account fields as the spec gives them)
// plus what a merchant needs to show a payer.
type OnrampJSON struct {
	ID            string            `json:"id"`
	Type          string            `json:"type"`
	Status        string            `json:"status"`
	AccountNumber string            `json:"accountNumber"`
	BankName      string            `json:"bankName"`
	AccountName   string            `json:"accountName"`
	ExpiresAt     *string           `json:"expiresAt,omitempty"`
	CustomerID    *string           `json:"customer_id"`
	Amount        *string           `json:"amount"`
	Currency      string            `json:"currency"`
	Rate          *string           `json:"rate"`
	RateID        *string           `json:"rate_id"`
	Settlement    SettlementJSON    `json:"settlement"`
	Reference     *string           `json:"reference"`
	Metadata      map[string]string `json:"metadata"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
}

// Out renders an onramp as of now.
func Out(o onramps.Onramp, now time.Time) OnrampJSON {
	out := OnrampJSON{ID: o.ID.String(), Type: o.Type, Status: o.StatusAt(now), AccountNumber: o.AccountNumber,
		BankName: o.BankName, AccountName: o.AccountName, Currency: "NGN",
		Settlement: SettlementJSON{Mode: o.Settlement.Mode, Asset: string(o.Settlement.Asset)},
		Metadata:   o.Metadata.OrEmpty(), CreatedAt: api.Time(o.CreatedAt), UpdatedAt: api.Time(o.UpdatedAt)}
	if o.ExpiresAt != nil {
		e := api.Time(*o.ExpiresAt)
		out.ExpiresAt = &e
	}
	if o.CustomerID != nil {
		c := o.CustomerID.String()
		out.CustomerID = &c
	}
	if o.Amount != nil {
		a := o.Amount.String()
		out.Amount = &a
	}
	if o.Price > 0 {
		r := money.Format(money.NGN, o.Price)
		out.Rate = &r
	}
	if o.RateID != nil {
		r := o.RateID.String()
		out.RateID = &r
	}
	if o.Settlement.Chain != "" {
		c, d := o.Settlement.Chain, o.Settlement.DestinationAddress
		out.Settlement.Chain, out.Settlement.DestinationAddress = &c, &d
	}
	if o.Reference != "" {
		r := o.Reference
		out.Reference = &r
	}
	return out
}

type settlementBody struct {
	Mode               string `json:"mode"`
	Asset              string `json:"asset"`
	Chain              string `json:"chain"`
	DestinationAddress string `json:"destination_address"`
}

type createBody struct {
	Type       string          `json:"type"`
	CustomerID string          `json:"customer_id"`
	RateID     string          `json:"rate_id"`
	Amount     json.RawMessage `json:"amount"` // a JSON number (the spec) or a decimal string
	Settlement *settlementBody `json:"settlement"`
	Reference  string          `json:"reference"`
	Metadata   json.RawMessage `json:"metadata"`
}

// out renders an onramp as of the service's now.
func (rs *Routes) out(o onramps.Onramp) OnrampJSON { return Out(o, rs.svc.Now()) }

// writes bounds the creation of an onramp (a quote, a bank partner), for api.Create.
var writes = api.Resource{Timeout: 30 * time.Second}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, writes, rs.createChecked, rs.out)
}

// createChecked checks the body field by field (400 naming every bad field), then creates.
func (rs *Routes) createChecked(c context.Context, t payments.Tenant, b createBody) (onramps.Onramp, error) {
	var v api.Validator
	in := onramps.CreateInput{Type: b.Type, Reference: b.Reference}
	if v.Required("type", b.Type) {
		v.OneOf("type", b.Type, onramps.Temporary, onramps.Permanent)
	}
	if b.CustomerID != "" {
		id, err := uuid.Parse(b.CustomerID)
		if v.Check(err == nil, "customer_id", "must be a UUID") {
			in.CustomerID = &id
		}
	} else if b.Type == onramps.Permanent {
		v.Add("customer_id", "is required for a PERMANENT onramp")
	}
	if b.RateID != "" {
		id, err := uuid.Parse(b.RateID)
		if v.Check(err == nil, "rate_id", "must be a rate id (UUID)") {
			in.RateID = &id
		}
		v.Check(b.Type != onramps.Permanent, "rate_id", "does not apply to a PERMANENT onramp (it converts at the market rate at deposit time)")
	}
	if len(b.Amount) > 0 && string(b.Amount) != "null" {
		if b.Type == onramps.Permanent {
			v.Add("amount", "does not apply to a PERMANENT onramp (it takes any amount at the market rate)")
		} else if a, msg := shapes.ParseNGN(b.Amount); v.Check(msg == "", "amount", msg) {
			in.Amount = &a
		}
	} else if b.Type == onramps.Temporary {
		v.Add("amount", "is required for a TEMPORARY onramp")
	}
	if s := b.Settlement; s != nil {
		st := onramps.Settlement{Mode: s.Mode, Asset: money.Asset(s.Asset), Chain: s.Chain, DestinationAddress: s.DestinationAddress}
		if v.Required("settlement.mode", s.Mode) {
			v.OneOf("settlement.mode", s.Mode, onramps.ModeOnchain, onramps.ModeInternal)
		}
		if v.Required("settlement.asset", s.Asset) {
			v.OneOf("settlement.asset", s.Asset, "USDC", "USDT")
		}
		if s.Mode == onramps.ModeOnchain {
			c := providers.Chain(s.Chain)
			if v.Required("settlement.chain", s.Chain) && v.OneOf("settlement.chain", s.Chain, providers.ChainNames(providers.WalletChains)...) &&
				v.Required("settlement.destination_address", s.DestinationAddress) {
				if err := providers.ValidateAddress(c, s.DestinationAddress); err != nil {
					v.Add("settlement.destination_address", err.Error())
				}
			}
		} else if s.Mode == onramps.ModeInternal {
			v.Check(s.Chain == "", "settlement.chain", "applies to ONCHAIN settlement only")
			v.Check(s.DestinationAddress == "", "settlement.destination_address", "applies to ONCHAIN settlement only")
		}
		in.Settlement = &st
	}
	v.Length("reference", b.Reference, 0, 200)
	in.Metadata, _ = v.Metadata(b.Metadata, false)
	if err := v.Err(); err != nil {
		return onramps.Onramp{}, err
	}
	return rs.svc.Create(c, t, in)
}

// onramp is the onramps resource (reads bounded to 10 s) for the generic handlers of api.
var onramp = api.Resource{NotFound: onramps.ErrNotFound, Timeout: 10 * time.Second}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) {
	api.Get(ctx, onramp, rs.svc.Get, rs.out)
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	var now time.Time // one clock reading for the page, taken after the query
	md, err := api.MetadataFilter(ctx)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.ListPage(ctx, onramp, func(c context.Context, q api.Listing) ([]onramps.Onramp, int64, error) {
		os, total, err := rs.svc.List(c, q.Tenant, onramps.Filter{Status: q.Status, Metadata: md, Page: q.Page, Limit: q.Limit})
		now = rs.svc.Now()
		return os, total, err
	}, func(o onramps.Onramp) OnrampJSON { return Out(o, now) }, onramps.Active, onramps.Expired, onramps.Inactive)
}

// OnrampSchema documents OnrampJSON.
func OnrampSchema() openapi.Schema {
	return openapi.Named("Onramp", openapi.Obj(map[string]openapi.Schema{
		"id":            openapi.UUID(""),
		"type":          openapi.Enum(onramps.Temporary, onramps.Permanent),
		"status":        openapi.Enum(onramps.Active, onramps.Expired, onramps.Inactive),
		"accountNumber": openapi.Str("10-digit NUBAN to transfer NGN to"),
		"bankName":      openapi.Str(""),
		"accountName":   openapi.Str(""),
		"expiresAt":     openapi.Time("TEMPORARY only: 25 minutes after creation"),
		"customer_id":   openapi.Nullable(openapi.UUID("")),
		"amount":        openapi.Nullable(openapi.Decimal("NGN to transfer, exactly (TEMPORARY only)")),
		"currency":      openapi.Enum("NGN"),
		"rate":          openapi.Nullable(openapi.Decimal("locked NGN price of one unit of the settlement asset (TEMPORARY only)")),
		"rate_id":       openapi.Nullable(openapi.UUID("the locked rate, when one was given")),
		"settlement": openapi.Obj(map[string]openapi.Schema{
			"mode":                openapi.Enum(onramps.ModeOnchain, onramps.ModeInternal),
			"asset":               openapi.Enum("USDC", "USDT"),
			"chain":               openapi.Nullable(openapi.Enum(providers.ChainNames(providers.WalletChains)...)),
			"destination_address": openapi.Nullable(openapi.Str("")),
		}, "mode", "asset"),
		"reference":  openapi.Nullable(openapi.Str("payment reference deposits carry")),
		"metadata":   openapi.Metadata(),
		"created_at": openapi.Time(""),
		"updated_at": openapi.Time(""),
	}, "id", "type", "status", "accountNumber", "bankName", "accountName", "metadata", "created_at"))
}

// Docs documents every route.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "onramps"
	return []openapi.Op{
		{Method: "POST", Path: "/v1/payments/onramps", Tag: tag, Summary: "Create an onramp (NGN bank account that converts to USDT/USDC)",
			Description: "TEMPORARY: amount required, rate locked from rate_id or a fresh quote, expires 25 minutes after creation, " +
				"INACTIVE once paid. PERMANENT: customer_id of a TIER_1 customer required, no amount, market rate at deposit time; one " +
				"active per customer. settlement defaults to INTERNAL_BALANCE in USDT (the customer's balance when there is a " +
				"customer, else the merchant's). Idempotent with X-Idempotency-Key.",
			Body: openapi.Obj(map[string]openapi.Schema{
				"type":        openapi.Enum(onramps.Temporary, onramps.Permanent),
				"customer_id": openapi.UUID("required for PERMANENT"),
				"rate_id":     openapi.UUID("a rate id of GET /payments/rates (buy side of the settlement asset), TEMPORARY only"),
				"amount":      openapi.Schema{"type": "number", "description": "NGN amount (number or decimal string, at most 2 places); required for TEMPORARY"},
				"settlement": openapi.Obj(map[string]openapi.Schema{
					"mode":                openapi.Enum(onramps.ModeOnchain, onramps.ModeInternal),
					"asset":               openapi.Enum("USDC", "USDT"),
					"chain":               openapi.Enum(providers.ChainNames(providers.WalletChains)...),
					"destination_address": openapi.Str("ONCHAIN: an address valid for chain"),
				}, "mode", "asset"),
				"reference": openapi.Str("optional payment reference, up to 200 characters"),
				"metadata":  openapi.Metadata(),
			}, "type"),
			Responses: map[int]openapi.Response{201: {Description: "the onramp", Data: OnrampSchema()}},
			Errors: []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia, api.CodeNotFound,
				api.CodeKYCTierRequired, api.CodeRateExpired, api.CodeRateAlreadyUsed, api.CodeConflict,
				api.CodeIdempotencyKeyReused, api.CodeIdempotencyInUse, api.CodeProviderUnavailable}},
		{Method: "GET", Path: "/v1/payments/onramps", Tag: tag, Summary: "List onramps",
			Query: []openapi.Param{
				{Name: "page", In: "query", Schema: openapi.Int("1-indexed, default 1")},
				{Name: "limit", In: "query", Schema: openapi.Int("1 to 100, default 20")},
				{Name: "status", In: "query", Schema: openapi.Enum(onramps.Active, onramps.Expired, onramps.Inactive)},
				openapi.MetadataFilter(),
			},
			Responses: map[int]openapi.Response{200: {Description: "a page of onramps", Data: openapi.Obj(map[string]openapi.Schema{
				"items": openapi.Arr(OnrampSchema()), "meta": openapi.PageMetaRequired,
			})}},
			Errors: []string{api.CodeValidation}},
		{Method: "GET", Path: "/v1/payments/onramps/{id}", Tag: tag, Summary: "Get an onramp",
			Responses: map[int]openapi.Response{200: {Description: "the onramp", Data: OnrampSchema()}},
			Errors:    []string{api.CodeNotFound}},
	}
}
