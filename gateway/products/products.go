// Package products is the HTTP edge of the catalog (spec "Products"): a gateway RouteSet
// over payments/products, and the small helpers the other commerce resources share.
package products

import (
	"encoding/json"
	"slices"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	pp "svc/payments/products"
)

// Routes is the RouteSet of /v1/products.
type Routes struct {
	svc *pp.Service
}

// New returns the routes over svc.
func New(svc *pp.Service) *Routes { return &Routes{svc: svc} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/products", protect(rs.create))
	r.GET("/v1/products", protect(rs.list))
	r.GET("/v1/products/{id}", protect(rs.get))
	r.PATCH("/v1/products/{id}", protect(rs.update))
	r.DELETE("/v1/products/{id}", protect(rs.delete))
}

type productJSON struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   *string  `json:"description"`
	Type          string   `json:"type"`
	Price         api.Num  `json:"price"`
	Currency      string   `json:"currency"`
	Status        string   `json:"status"`
	StockQuantity *int64   `json:"stock_quantity"`
	ImageURLs     []string `json:"image_urls"`
	TaxType       string   `json:"tax_type"`
	TaxRate       api.Num  `json:"tax_rate"`
	DiscountType  string   `json:"discount_type"`
	Discount      api.Num  `json:"discount"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

func productOut(p pp.Product) productJSON {
	return productJSON{
		ID: p.ID.String(), Name: p.Name, Description: p.Description, Type: p.Type,
		Price: shapes.Amount(p.Currency, p.Price), Currency: p.Currency, Status: p.Status, StockQuantity: p.StockQuantity,
		ImageURLs: p.ImageURLs, TaxType: p.Tax.Type, TaxRate: shapes.Adjustment(p.Tax, p.Currency),
		DiscountType: p.Discount.Type, Discount: shapes.Adjustment(p.Discount, p.Currency),
		CreatedAt: api.Time(p.CreatedAt), UpdatedAt: api.Time(p.UpdatedAt),
	}
}

type createBody struct {
	Name          string       `json:"name"`
	Description   *string      `json:"description"`
	Type          string       `json:"type"`
	Price         *json.Number `json:"price"`
	Currency      string       `json:"currency"`
	Status        string       `json:"status"`
	StockQuantity *int64       `json:"stock_quantity"`
	ImageURLs     []string     `json:"image_urls"`
	TaxType       string       `json:"tax_type"`
	TaxRate       *json.Number `json:"tax_rate"`
	DiscountType  string       `json:"discount_type"`
	Discount      *json.Number `json:"discount"`
}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	var b createBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	in := pp.CreateInput{Name: b.Name, Description: b.Description, Type: b.Type, Currency: b.Currency, Status: b.Status,
		StockQuantity: b.StockQuantity, ImageURLs: b.ImageURLs, TaxType: b.TaxType, TaxRate: api.NumText(b.TaxRate),
		DiscountType: b.DiscountType, Discount: api.NumText(b.Discount)}
	if b.Price != nil {
		in.Price = b.Price.String()
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	p, err := rs.svc.Create(c, t, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, productOut(p))
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	pg, err := api.Paging(ctx, "limit", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	status := string(ctx.QueryArgs().Peek("status"))
	if status != "" && !slices.Contains(pp.Statuses, status) {
		api.Fail(ctx, api.Invalid("status", "must be one of [active inactive archived]"))
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	items, total, err := rs.svc.List(c, t, pp.Filter{Status: status, Search: string(ctx.QueryArgs().Peek("search")), Page: pg.Page, Limit: pg.Limit})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, productOut, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pp.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	p, err := rs.svc.Get(c, t, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, productOut(p))
}

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
}

func (rs *Routes) update(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pp.ErrNotFound)
	if !ok {
		return
	}
	var b updateBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	p, err := rs.svc.Update(c, t, id, pp.UpdateInput(b))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, productOut(p))
}

func (rs *Routes) delete(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, pp.ErrNotFound)
	if !ok {
		return
	}
	c, cancel := api.Context(ctx)
	defer cancel()
	if err := rs.svc.Delete(c, t, id); err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]string{"id": id.String()}, "product deleted")
}
