// Package transfers is the HTTP edge of bank transfers (spec "Transfers"): a gateway RouteSet
// over payments/transfers.
package transfers

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	gwidem "svc/gateway/idempotency"
	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/money"
	pr "svc/payments/recipients"
	pt "svc/payments/transfers"
)

// Routes is the RouteSet of /v1/payments/transfers.
type Routes struct {
	svc  *pt.Service
	keys *idempotency.Keys
	// AfterCreate, when set, runs between the service's write (the debit) and the response;
	// tests panic in it to simulate the process dying in between.
	AfterCreate func()
}

// New returns the routes over svc; POST takes X-Idempotency-Key or Idempotency-Key.
func New(svc *pt.Service, keys *idempotency.Keys) *Routes { return &Routes{svc: svc, keys: keys} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/transfers", protect(gwidem.Middleware(rs.keys, gwidem.AlsoIdempotencyKey())(rs.create)))
	r.GET("/v1/payments/transfers", protect(rs.list))
	r.GET("/v1/payments/transfers/{id}", protect(rs.get))
}

type destinationJSON struct {
	Type string `json:"type"`
	pr.Details
}

type quoteJSON struct {
	SourceCurrency string `json:"source_currency"`
	SourceAmount   string `json:"source_amount"`
	Rate           string `json:"rate"`
	Side           string `json:"side"`
}

type onBehalfJSON struct {
	CustomerID string `json:"customer_id"`
}

// JSON is a transfer as the API shows it.
type JSON struct {
	ID            string            `json:"id"`
	Currency      string            `json:"currency"`
	Amount        string            `json:"amount"`
	Reference     string            `json:"reference"`
	Status        string            `json:"status"`
	Rail          string            `json:"rail"`
	RecipientID   *string           `json:"recipient_id"`
	Destination   destinationJSON   `json:"destination"`
	OnBehalfOf    *onBehalfJSON     `json:"on_behalf_of"`
	Quote         quoteJSON         `json:"quote"`
	FailureReason *string           `json:"failure_reason"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	SettledAt     *string           `json:"settled_at"`
	Metadata      map[string]string `json:"metadata"`
}

// Out renders a transfer.
func Out(t pt.Transfer) JSON {
	j := JSON{ID: t.ID.String(), Currency: string(t.Amount.Asset), Amount: t.Amount.String(), Reference: t.Reference,
		Status: t.Status, Rail: t.Rail, Destination: destinationJSON{Type: t.Destination.Type, Details: t.Destination.Details},
		Quote:         quoteJSON{SourceCurrency: string(t.SourceAmount.Asset), SourceAmount: t.SourceAmount.String(), Rate: t.Rate(), Side: "sell"},
		FailureReason: api.StrPtr(t.FailureReason), CreatedAt: api.Time(t.CreatedAt), UpdatedAt: api.Time(t.UpdatedAt), SettledAt: api.TimePtr(t.SettledAt),
		Metadata: t.Metadata.OrEmpty()}
	if t.RecipientID != nil {
		s := t.RecipientID.String()
		j.RecipientID = &s
	}
	if t.CustomerID != nil {
		j.OnBehalfOf = &onBehalfJSON{CustomerID: t.CustomerID.String()}
	}
	return j
}

type destinationBody struct {
	Type             string     `json:"type"`
	BankAccount      *pr.Bank   `json:"bank_account"`
	CryptoAddress    *pr.Crypto `json:"crypto_address"`
	USBankAccount    *pr.USBank `json:"us_bank_account"`
	SWIFTBankAccount *pr.SWIFT  `json:"swift_bank_account"`
}

type createBody struct {
	Currency    string           `json:"currency"`
	Amount      string           `json:"amount"`
	Reference   string           `json:"reference"`
	RecipientID *string          `json:"recipient_id"`
	Destination *destinationBody `json:"destination"`
	OnBehalfOf  *struct {
		CustomerID *string `json:"customer_id"`
	} `json:"on_behalf_of"`
	Metadata json.RawMessage `json:"metadata"`
}

// validate checks every field of the body and returns the request.
func validate(b createBody, v *api.Validator) pt.Request {
	var r pt.Request
	currencyOK := false
	switch b.Currency {
	case "":
		v.Add("currency", "is required")
	case "NGN", "USD":
		currencyOK = true
	default:
		v.Add("currency", "must be NGN or USD")
	}
	switch {
	case b.Amount == "":
		v.Add("amount", "is required")
	case currencyOK:
		a, err := money.ParsePositive(money.Asset(b.Currency), b.Amount)
		if err != nil {
			v.Add("amount", "must be a decimal string above zero with at most 2 decimal places")
		}
		r.Amount = a
	}
	switch n := utf8.RuneCountInString(b.Reference); {
	case b.Reference == "":
		v.Add("reference", "is required")
	case n > pt.MaxReference:
		v.Add("reference", "must be at most 128 characters")
	}
	r.Reference = b.Reference
	switch {
	case (b.RecipientID == nil) == (b.Destination == nil):
		v.Add("recipient_id", "exactly one of recipient_id and destination must be given")
	case b.RecipientID != nil:
		r.RecipientID = api.UUIDField(v, "recipient_id", b.RecipientID)
	default:
		d := b.Destination
		det := pr.Details{BankAccount: d.BankAccount, CryptoAddress: d.CryptoAddress, USBankAccount: d.USBankAccount, SWIFTBankAccount: d.SWIFTBankAccount}
		switch d.Type {
		case "":
			v.Add("destination.type", "is required")
		case pr.BankAccount, pr.USBankAccount, pr.SWIFTBankAccount:
			det.Validate(v, "destination", d.Type)
		default:
			v.Add("destination.type", "must be one of BANK_ACCOUNT, US_BANK_ACCOUNT, SWIFT_BANK_ACCOUNT")
		}
		r.Destination = &pt.Destination{Type: d.Type, Details: det}
	}
	if b.OnBehalfOf != nil {
		if b.OnBehalfOf.CustomerID == nil {
			v.Add("on_behalf_of.customer_id", "is required")
		} else {
			r.CustomerID = api.UUIDField(v, "on_behalf_of.customer_id", b.OnBehalfOf.CustomerID)
		}
	}
	r.Metadata, _ = v.Metadata(b.Metadata, false)
	return r
}

// transfer is the transfers resource for the generic handlers of api.
var transfer = api.Resource{NotFound: pt.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) { api.Create(ctx, transfer, rs.createChecked, Out) }

// createChecked checks the body (400 naming every bad field), then creates; AfterCreate runs
// after the write (the debit).
func (rs *Routes) createChecked(c context.Context, t payments.Tenant, b createBody) (pt.Transfer, error) {
	var v api.Validator
	req := validate(b, &v)
	if err := v.Err(); err != nil {
		return pt.Transfer{}, err
	}
	tr, err := rs.svc.Create(c, t, req)
	if err == nil && rs.AfterCreate != nil {
		rs.AfterCreate()
	}
	return tr, err
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	tn, pg, ok := api.TenantPaging(ctx)
	if !ok {
		return
	}
	status, ok := api.Query(ctx, "status", pt.Statuses...)
	if !ok {
		return
	}
	currency, ok := api.Query(ctx, "currency", pt.Currencies...)
	if !ok {
		return
	}
	md, err := api.MetadataFilter(ctx)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items, total, err := rs.svc.List(api.Ctx(ctx), tn, pt.Filter{Status: status, Currency: currency, Metadata: md, Page: pg.Page, Limit: pg.Limit})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, Out, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, transfer, rs.svc.Get, Out) }
