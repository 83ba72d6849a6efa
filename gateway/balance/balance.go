// Package balance is the HTTP edge of the merchant balance, funding addresses and balance
// transfers (spec "Merchant balance and funding") over payments/balance. POST .../transfer
// is idempotent with X-Idempotency-Key (the middleware given to New).
package balance

import (
	"context"
	"slices"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
	"svc/payments"
	pb "svc/payments/balance"
	"svc/payments/money"
	"svc/payments/providers"
)

// Service is what the handlers need; *payments/balance.Service is one.
type Service interface {
	Balance(ctx context.Context, t payments.Tenant) (pb.Balance, error)
	Funding(ctx context.Context, t payments.Tenant) ([]providers.Address, error)
	CreateTransfer(ctx context.Context, t payments.Tenant, in pb.TransferInput) (pb.Transfer, error)
	ListTransfers(ctx context.Context, t payments.Tenant, f pb.Filter) ([]pb.Transfer, int64, error)
}

var _ Service = (*pb.Service)(nil)

// Routes is the RouteSet of /v1/payments/merchant.
type Routes struct {
	svc  Service
	idem api.Middleware
}

// New returns the routes over svc; idem wraps the transfer POST (nil: none).
func New(svc Service, idem api.Middleware) *Routes {
	return &Routes{svc: svc, idem: api.OrNone(idem)}
}

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/payments/merchant/balance", protect(rs.balance))
	r.POST("/v1/payments/merchant/balance/transfer", protect(rs.idem(rs.transfer)))
	r.GET("/v1/payments/merchant/balance/transfers", protect(rs.transfers))
	r.GET("/v1/payments/merchant/funding", protect(rs.funding))
}

// AssetBalanceJSON is a balance in another asset.
type AssetBalanceJSON struct {
	Asset   string `json:"asset"`
	Purpose string `json:"purpose"` // available or pending
	Amount  string `json:"amount"`
}

// BalanceJSON is the spec's Merchant balance.
type BalanceJSON struct {
	Available string             `json:"available"`
	Pending   string             `json:"pending"`
	Currency  string             `json:"currency"`
	UpdatedAt *string            `json:"updated_at"`
	Assets    []AssetBalanceJSON `json:"other_assets"`
}

// reads bounds the reads of the balance and its transfers, for the generic handlers of api.
var reads = api.Resource{Timeout: 10 * time.Second}

func (rs *Routes) balance(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	c, cancel := reads.Context(ctx)
	defer cancel()
	b, err := rs.svc.Balance(c, t)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := BalanceJSON{Available: b.Available.String(), Pending: b.Pending.String(), Currency: "USDT", Assets: []AssetBalanceJSON{}}
	if b.UpdatedAt != nil {
		s := api.Time(*b.UpdatedAt)
		out.UpdatedAt = &s
	}
	for _, x := range b.Others {
		out.Assets = append(out.Assets, AssetBalanceJSON{Asset: string(x.Amount.Asset), Purpose: string(x.Account.Purpose), Amount: x.Amount.String()})
	}
	api.OK(ctx, out)
}

func (rs *Routes) funding(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	c, cancel := reads.Context(ctx)
	defer cancel()
	addrs, err := rs.svc.Funding(c, t)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	type addr struct {
		Chain   string `json:"chain"`
		Asset   string `json:"asset"`
		Address string `json:"address"`
	}
	out := make([]addr, len(addrs))
	for i, a := range addrs {
		out[i] = addr{string(a.Chain), string(a.Asset), a.Address}
	}
	api.OK(ctx, map[string]any{"addresses": out})
}

// TransferJSON is a balance transfer.
type TransferJSON struct {
	ID            string  `json:"id"`
	Direction     string  `json:"direction"`
	AmountUSD     *string `json:"amount_usd"` // USDT, USDC and USD at par; null for NGN
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"` // the asset moved
	Status        string  `json:"status"`
	FailureReason *string `json:"failure_reason"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
	CompletedAt   *string `json:"completed_at"`
}

func transferOut(tr pb.Transfer) TransferJSON {
	out := TransferJSON{ID: tr.ID.String(), Direction: tr.Direction, Amount: tr.Amount.String(),
		Currency: string(tr.Amount.Asset), Status: tr.Status, CreatedAt: api.Time(tr.CreatedAt), UpdatedAt: api.Time(tr.UpdatedAt)}
	if tr.Amount.Asset != money.NGN {
		usd := tr.Amount.String()
		out.AmountUSD = &usd
	}
	if tr.FailureReason != "" {
		r := tr.FailureReason
		out.FailureReason = &r
	}
	if tr.CompletedAt != nil {
		s := api.Time(*tr.CompletedAt)
		out.CompletedAt = &s
	}
	return out
}

type transferBody struct {
	AmountUSD string `json:"amount_usd"` // USDT at 1:1 (the spec's field)
	Asset     string `json:"asset"`      // NGN, USDT, USDC or USD, with amount
	Amount    string `json:"amount"`
	Direction string `json:"direction"`
}

func (rs *Routes) transfer(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	var b transferBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	in := pb.TransferInput{Direction: b.Direction}
	switch {
	case b.Asset == "" && b.Amount != "":
		v.Add("asset", "is required with amount")
	case b.Asset == "":
		if v.Required("amount_usd", b.AmountUSD) {
			a, err := money.ParsePositive(money.USDT, b.AmountUSD)
			if v.Check(err == nil, "amount_usd", errText(err)) {
				in.Amount = a
			}
		}
	case !slices.Contains(pb.TransferAssets, money.Asset(b.Asset)):
		v.Add("asset", "must be one of NGN, USDT, USDC, USD")
	case b.AmountUSD != "":
		v.Add("amount_usd", "give amount with asset, or amount_usd alone")
	default:
		if v.Required("amount", b.Amount) {
			a, err := money.ParsePositive(money.Asset(b.Asset), b.Amount)
			if v.Check(err == nil, "amount", errText(err)) {
				in.Amount = a
			}
		}
	}
	if b.Direction != "" {
		v.OneOf("direction", b.Direction, pb.ToTrading, pb.ToPayments)
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.ContextTimeout(ctx, 30*time.Second)
	defer cancel()
	tr, err := rs.svc.CreateTransfer(c, t, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, transferOut(tr))
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (rs *Routes) transfers(ctx *fasthttp.RequestCtx) {
	api.ListPage(ctx, reads, func(c context.Context, q api.Listing) ([]pb.Transfer, int64, error) {
		return rs.svc.ListTransfers(c, q.Tenant, pb.Filter{Status: q.Status, Page: q.Page, Limit: q.Limit})
	}, transferOut, pb.Pending, pb.Completed, pb.Failed)
}

// Docs documents every route.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "merchant balance"
	transfer := openapi.Obj(map[string]openapi.Schema{
		"id":             openapi.UUID("also the engine's transfer id"),
		"direction":      openapi.Enum(pb.ToTrading, pb.ToPayments),
		"amount_usd":     openapi.Nullable(openapi.Decimal("the amount in USD at par for USDT, USDC and USD; null for NGN")),
		"amount":         openapi.Decimal("the amount moved, in currency"),
		"currency":       openapi.Enum("NGN", "USDT", "USDC", "USD"),
		"status":         openapi.Enum(pb.Pending, pb.Completed, pb.Failed),
		"failure_reason": openapi.Nullable(openapi.Str("")),
		"created_at":     openapi.Time(""),
		"updated_at":     openapi.Time(""),
		"completed_at":   openapi.Nullable(openapi.Time("when it became COMPLETED or FAILED")),
	}, "id", "direction", "amount_usd", "status", "created_at")
	return []openapi.Op{
		{Method: "GET", Path: "/v1/payments/merchant/balance", Tag: tag, Summary: "The merchant's USDT balance",
			Responses: map[int]openapi.Response{200: {Description: "the balance", Data: openapi.Named("MerchantBalance", openapi.Obj(map[string]openapi.Schema{
				"available":  openapi.Decimal("USDT"),
				"pending":    openapi.Decimal("USDT locked in pending operations (deposits converting, transfers in flight)"),
				"currency":   openapi.Enum("USDT"),
				"updated_at": openapi.Nullable(openapi.Time("")),
				"other_assets": openapi.Arr(openapi.Obj(map[string]openapi.Schema{
					"asset": openapi.Str(""), "purpose": openapi.Str(""), "amount": openapi.Decimal(""),
				})),
			}, "available", "pending", "currency"))}}},
		{Method: "POST", Path: "/v1/payments/merchant/balance/transfer", Tag: tag, Summary: "Move an asset to (or from) the trading balance",
			Description: "amount_usd moves USDT (1:1, the spec's field); asset with amount moves NGN, USDT, USDC or USD, exactly (no " +
				"conversion). PENDING until the exchange engine has journaled the credit (or debit), then COMPLETED; FAILED with the funds " +
				"back when the engine refuses it. Idempotent with X-Idempotency-Key; the transfer itself is applied once whatever " +
				"crashes in between.",
			Body: openapi.Obj(map[string]openapi.Schema{
				"amount_usd": openapi.Decimal("USDT to move, up to 6 places (without asset)"),
				"asset":      openapi.Enum("NGN", "USDT", "USDC", "USD"),
				"amount":     openapi.Decimal("with asset: the amount to move, up to the asset's places (NGN and USD 2, USDT and USDC 6)"),
				"direction":  openapi.Enum(pb.ToTrading, pb.ToPayments),
			}),
			Responses: map[int]openapi.Response{201: {Description: "the transfer", Data: transfer}},
			Errors: []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia, api.CodeInsufficientBalance,
				api.CodeIdempotencyKeyReused, api.CodeIdempotencyInUse, api.CodeProviderUnavailable}},
		{Method: "GET", Path: "/v1/payments/merchant/balance/transfers", Tag: tag, Summary: "Balance transfer history",
			Query: []openapi.Param{
				{Name: "page", In: "query", Schema: openapi.Int("1-indexed, default 1")},
				{Name: "limit", In: "query", Schema: openapi.Int("1 to 100, default 20")},
				{Name: "status", In: "query", Schema: openapi.Enum(pb.Pending, pb.Completed, pb.Failed)},
			},
			Responses: map[int]openapi.Response{200: {Description: "a page of transfers", Data: openapi.Obj(map[string]openapi.Schema{
				"items": openapi.Arr(transfer), "meta": openapi.PageMetaRequired})}},
			Errors: []string{api.CodeValidation}},
		{Method: "GET", Path: "/v1/payments/merchant/funding", Tag: tag, Summary: "Deposit addresses to fund the balance",
			Description: "One address per chain and asset, stable for the merchant.",
			Responses: map[int]openapi.Response{200: {Description: "the addresses", Data: openapi.Obj(map[string]openapi.Schema{
				"addresses": openapi.Arr(openapi.Obj(map[string]openapi.Schema{
					"chain": openapi.Enum(providers.ChainNames(providers.WalletChains)...), "asset": openapi.Enum("USDC", "USDT"),
					"address": openapi.Str(""),
				}, "chain", "asset", "address")),
			}, "addresses")}},
			Errors: []string{api.CodeProviderUnavailable}},
	}
}
