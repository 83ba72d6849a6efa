// Package products is the HTTP edge of the catalog (spec "Products"): a gateway RouteSet
// over payments/products, and the small helpers the other commerce resources share.
package products

import (
	"context"
	"encoding/json"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/payments"
	"svc/payments/metadata"
	pp "svc/payments/products"
)

// Routes is the RouteSet of /v1/products.
type Routes struct {
	svc  *pp.Service
	idem api.Middleware
}

// New returns the routes over svc.
func New(svc *pp.Service) *Routes { return &Routes{svc: svc, idem: api.OrNone(nil)} }

// Idempotent honours X-Idempotency-Key on the route set's creates and state-changing POSTs
// (issue 30): m is gateway/idempotency's middleware; nil changes nothing.
func (rs *Routes) Idempotent(m api.Middleware) *Routes { rs.idem = api.OrNone(m); return rs }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/products", protect(rs.idem(rs.create)))
	r.GET("/v1/products", protect(rs.list))
	r.GET("/v1/products/{id}", protect(rs.get))
	r.PATCH("/v1/products/{id}", protect(rs.update))
	r.DELETE("/v1/products/{id}", protect(rs.delete))
}

type productJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Description   *string           `json:"description"`
	Type          string            `json:"type"`
	Price         api.Num           `json:"price"`
	Currency      string            `json:"currency"`
	Status        string            `json:"status"`
	StockQuantity *int64            `json:"stock_quantity"`
	ImageURLs     []string          `json:"image_urls"`
	TaxType       string            `json:"tax_type"`
	TaxRate       api.Num           `json:"tax_rate"`
	DiscountType  string            `json:"discount_type"`
	Discount      api.Num           `json:"discount"`
	Metadata      metadata.Metadata `json:"metadata"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
}

func productOut(p pp.Product) productJSON {
	return productJSON{
		ID: p.ID.String(), Name: p.Name, Description: p.Description, Type: p.Type,
		Price: shapes.Amount(p.Currency, p.Price), Currency: p.Currency, Status: p.Status, StockQuantity: p.StockQuantity,
		ImageURLs: p.ImageURLs, TaxType: p.Tax.Type, TaxRate: shapes.Adjustment(p.Tax, p.Currency),
		DiscountType: p.Discount.Type, Discount: shapes.Adjustment(p.Discount, p.Currency),
		Metadata: p.Metadata.OrEmpty(), CreatedAt: api.Time(p.CreatedAt), UpdatedAt: api.Time(p.UpdatedAt),
	}
}

type createBody struct {
	Name          string          `json:"name"`
	Description   *string         `json:"description"`
	Type          string          `json:"type"`
	Price         *json.Number    `json:"price"`
	Currency      string          `json:"currency"`
	Status        string          `json:"status"`
	StockQuantity *int64          `json:"stock_quantity"`
	ImageURLs     []string        `json:"image_urls"`
	TaxType       string          `json:"tax_type"`
	TaxRate       *json.Number    `json:"tax_rate"`
	DiscountType  string          `json:"discount_type"`
	Discount      *json.Number    `json:"discount"`
	Metadata      json.RawMessage `json:"metadata"`
}

// product is the products resource for the generic handlers of api.
var product = api.Resource{NotFound: pp.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, product, func(c context.Context, t payments.Tenant, b createBody) (pp.Product, error) {
		in := pp.CreateInput{Name: b.Name, Description: b.Description, Type: b.Type, Currency: b.Currency, Status: b.Status,
			StockQuantity: b.StockQuantity, ImageURLs: b.ImageURLs, TaxType: b.TaxType, TaxRate: api.NumText(b.TaxRate),
			DiscountType: b.DiscountType, Discount: api.NumText(b.Discount), Metadata: b.Metadata}
		if b.Price != nil {
			in.Price = b.Price.String()
		}
		return rs.svc.Create(c, t, in)
	}, productOut)
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	api.ListPage(ctx, product, func(c context.Context, q api.Listing) ([]pp.Product, int64, error) {
		md, err := api.MetadataFilter(ctx)
		if err != nil {
			return nil, 0, err
		}
		return rs.svc.List(c, q.Tenant, pp.Filter{Status: q.Status, Search: string(ctx.QueryArgs().Peek("search")), Metadata: md, Page: q.Page, Limit: q.Limit})
	}, productOut, pp.Statuses...)
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, product, rs.svc.Get, productOut) }

type updateBody struct {
	Name          pp.Patch[string]      `json:"name"`
	Description   pp.Patch[string]      `json:"description"`
	Type          pp.Patch[string]      `json:"type"`
	Status        pp.Patch[string]      `json:"status"`
	Price         pp.Patch[json.Number] `json:"price"`
	Currency      pp.Patch[string]      `json:"currency"`
	StockQuantity pp.Patch[int64]       `json:"stock_quantity"`
	ImageURLs     pp.Patch[[]string]    `json:"image_urls"`
	TaxType       pp.Patch[string]      `json:"tax_type"`
	TaxRate       pp.Patch[json.Number] `json:"tax_rate"`
	DiscountType  pp.Patch[string]      `json:"discount_type"`
	Discount      pp.Patch[json.Number] `json:"discount"`
	Metadata      json.RawMessage       `json:"metadata"`
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, product, func(c context.Context, t payments.Tenant, id uuid.UUID, b updateBody) (pp.Product, error) {
		return rs.svc.Update(c, t, id, pp.UpdateInput(b))
	}, productOut)
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	api.Delete(ctx, product, rs.svc.Delete, "product deleted")
}
