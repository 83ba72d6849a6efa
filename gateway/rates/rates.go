// Package rates is the HTTP edge of GET /v1/payments/rates (spec "Exchange rates") over
// payments/rates: quotes from the exchange's books, each stored with an id a merchant can
// lock into an onramp before its expires_at.
package rates

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
	"svc/payments"
	"svc/payments/money"
	prates "svc/payments/rates"
)

// Quoter is what the handler needs; *payments/rates.Service is one.
type Quoter interface {
	Quote(ctx context.Context, t payments.Tenant, req prates.Request) ([]prates.Quote, error)
}

var _ Quoter = (*prates.Service)(nil)

// Routes is the RouteSet of /v1/payments/rates.
type Routes struct{ svc Quoter }

// New returns the routes over svc.
func New(svc Quoter) *Routes { return &Routes{svc: svc} }

// Register adds the route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/payments/rates", protect(rs.list))
}

// RateJSON is the spec's Rate object.
type RateJSON struct {
	ID         string `json:"id"`
	Pair       string `json:"pair"` // e.g. NGN/USDT
	From       string `json:"from"`
	To         string `json:"to"`
	Rate       string `json:"rate"`  // one unit of from in to
	Price      string `json:"price"` // NGN per one unit of the asset
	Side       string `json:"side"`
	Source     string `json:"source"` // orderbook, treasury or reference
	ExpiresAt  string `json:"expires_at"`
	Timestamp  string `json:"timestamp"`
	TTLSeconds int    `json:"ttl_seconds"`
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	p, ok := api.RequirePrincipal(ctx, "not authenticated")
	if !ok {
		return
	}
	args := ctx.QueryArgs()
	from := strings.ToUpper(string(args.Peek("from")))
	to := strings.ToUpper(string(args.Peek("to")))
	side := strings.ToLower(string(args.Peek("side")))
	var v api.Validator
	var req prates.Request
	fromNGN := true
	switch {
	case from == "" || from == "NGN":
		if to != "" && v.OneOf("to", to, "USDT", "USDC") {
			req.Assets = []money.Asset{money.Asset(to)}
		}
	case from == "USDT" || from == "USDC":
		fromNGN = false
		req.Assets = []money.Asset{money.Asset(from)}
		v.Check(to == "" || to == "NGN", "to", "must be NGN when from is "+from)
	default:
		v.Add("from", "must be NGN, USDT or USDC")
	}
	if side != "" && v.OneOf("side", side, prates.Buy, prates.Sell) {
		req.Sides = []string{side}
	}
	if amt := string(args.Peek("amount")); amt != "" {
		// The size the quotes are priced for, in the from currency: NGN to spend, or units
		// of the asset to sell.
		cur := money.NGN
		if !fromNGN {
			cur = money.Asset(from)
		}
		a, err := money.ParsePositive(cur, amt)
		if err != nil {
			v.Add("amount", err.Error())
		} else {
			req.Size = a
		}
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qs, err := rs.svc.Quote(c, payments.Tenant{MerchantID: p.MerchantID, Environment: string(p.Environment)}, req)
	if err != nil {
		if errors.Is(err, prates.ErrRateUnavailable) {
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(prates.RetryAfter))
		}
		api.Fail(ctx, err)
		return
	}
	out := make([]RateJSON, len(qs))
	for i, q := range qs {
		f, t := "NGN", string(q.Asset)
		if !fromNGN {
			f, t = t, "NGN"
		}
		out[i] = RateJSON{ID: q.ID.String(), Pair: f + "/" + t, From: f, To: t, Rate: prates.RateString(q.Price, fromNGN),
			Price: prates.FormatPrice(q.Price), Side: q.Side, Source: q.Source,
			ExpiresAt: api.Time(q.ExpiresAt), Timestamp: api.Time(q.CreatedAt),
			TTLSeconds: int(q.ExpiresAt.Sub(q.CreatedAt) / time.Second)}
	}
	api.Array(ctx, out, nil)
}

// RateSchema documents RateJSON.
func RateSchema() openapi.Schema {
	return openapi.Named("Rate", openapi.Obj(map[string]openapi.Schema{
		"id":          openapi.UUID("lock it into an onramp (rate_id) before expires_at; usable once"),
		"pair":        openapi.Str("from/to, e.g. NGN/USDT"),
		"from":        openapi.Enum("NGN", "USDT", "USDC"),
		"to":          openapi.Enum("NGN", "USDT", "USDC"),
		"rate":        openapi.Decimal("one unit of from expressed in to (USDT per NGN when from is NGN)"),
		"price":       openapi.Decimal("NGN per one unit of the crypto asset (2 places)"),
		"side":        openapi.Enum(prates.Buy, prates.Sell),
		"source":      openapi.Enum(prates.SourceBook, prates.SourceTreasury, prates.SourceReference),
		"expires_at":  openapi.Time("after this the id cannot be locked (422 RATE_EXPIRED)"),
		"timestamp":   openapi.Time("when the rate was fetched"),
		"ttl_seconds": openapi.Int("validity of the id"),
	}, "id", "pair", "rate", "side", "expires_at", "timestamp"))
}

// Docs documents the route.
func (rs *Routes) Docs() []openapi.Op {
	return []openapi.Op{{
		Method: "GET", Path: "/v1/payments/rates", Tag: "rates", Summary: "Exchange rates (quotes with lockable ids)",
		Description: "Buy = the volume-weighted average of the asks of the asset's NGN book needed to fill the size, plus the " +
			"configured spread; sell = the same over the bids, minus it. Only levels within the configured band around the " +
			"reference price (+-2% by default) count, so an order far off the market neither moves nor blocks a quote; the " +
			"reference follows the book's depth-weighted mid (smoothed; a jump is followed only once it persists). When the " +
			"band cannot fill the size, the environment's treasury quotes from its inventory at the reference plus the spread " +
			"(source treasury) while its limits allow. 503 RATE_UNAVAILABLE with Retry-After answers an exhausted " +
			"treasury, or a book that cannot be read (an engine that does not answer within 250 ms by default, or one " +
			"that has stopped), which is never priced as an empty one. The size is `amount` (in the from currency) or " +
			"100 units of the asset. Each quote " +
			"is stored with an id valid until expires_at (60 s by default) and usable once. Without filters, every asset and " +
			"side is quoted.",
		Query: []openapi.Param{
			{Name: "from", In: "query", Description: "NGN (default), USDT or USDC", Schema: openapi.Enum("NGN", "USDT", "USDC")},
			{Name: "to", In: "query", Description: "USDT or USDC when from is NGN; NGN otherwise", Schema: openapi.Enum("USDT", "USDC", "NGN")},
			{Name: "side", In: "query", Description: "buy (NGN -> asset) or sell (asset -> NGN)", Schema: openapi.Enum("buy", "sell")},
			{Name: "amount", In: "query", Description: "size to price, in the from currency (NGN to spend, or units of the asset to sell); default 100 units of the asset", Schema: openapi.Decimal("a positive amount")},
		},
		Responses: map[int]openapi.Response{200: {Description: "the rates (data is the array)", Data: openapi.Arr(RateSchema())}},
		Errors:    []string{api.CodeValidation, api.CodeProviderUnavailable, api.CodeRateUnavailable},
	}}
}
