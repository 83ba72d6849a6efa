package products

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var productSchema = o.Named("Product", o.Obj(map[string]o.Schema{
	"id":             o.UUID(""),
	"name":           o.Str("at most 255 characters"),
	"description":    o.Nullable(o.Str("at most 2000 characters")),
	"type":           o.Enum("physical", "digital", "service"),
	"price":          o.Number("positive, at most the currency's 2 decimal places"),
	"currency":       o.Enum("NGN", "USD"),
	"status":         o.Enum("active", "inactive", "archived"),
	"stock_quantity": o.Nullable(o.Int("null: unlimited")),
	"image_urls":     o.Arr(o.Str("absolute http(s) URL")),
	"tax_type":       shapes.AdjustType,
	"tax_rate":       o.Number("percent (up to 4 places) when percentage; an amount per unit when fixed"),
	"discount_type":  shapes.AdjustType,
	"discount":       o.Number("percent when percentage; an amount per unit when fixed"),
	"metadata":       o.Metadata(),
	"created_at":     o.Time(""),
	"updated_at":     o.Time(""),
}, "id", "name", "type", "price", "currency", "status", "metadata"))

var productBody = map[string]o.Schema{
	"name":           o.Str("required, at most 255 characters"),
	"description":    o.Nullable(o.Str("at most 2000 characters")),
	"type":           o.Enum("physical", "digital", "service"),
	"price":          o.Number("required, > 0"),
	"currency":       o.Enum("NGN", "USD"),
	"status":         o.Enum("active", "inactive", "archived"),
	"stock_quantity": o.Nullable(o.Int(">= 0; null or omitted: unlimited")),
	"image_urls":     o.Arr(o.Str("at most 10 absolute http(s) URLs")),
	"tax_type":       shapes.AdjustType,
	"tax_rate":       o.Number("required unless tax_type is none"),
	"discount_type":  shapes.AdjustType,
	"discount":       o.Number("required unless discount_type is none"),
	"metadata":       o.Metadata(),
}

// withMetadataPatch is body with metadata as an update takes it.
func withMetadataPatch(body map[string]o.Schema) map[string]o.Schema {
	out := make(map[string]o.Schema, len(body))
	for k, v := range body {
		out[k] = v
	}
	out["metadata"] = o.MetadataPatch()
	return out
}

// Docs documents the product routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/products", Idempotent: true, Tag: "products", Summary: "Create a product",
			Body:      o.Obj(productBody, "name", "price"),
			Responses: map[int]o.Response{201: {Description: "the product", Data: productSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON"}},
		{Method: "GET", Path: "/v1/products", Tag: "products", Summary: "List products",
			Query:     append([]o.Param{{Name: "status", Schema: o.Enum("active", "inactive", "archived")}, {Name: "search", Description: "part of the name, case-insensitive"}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses: map[int]o.Response{200: {Description: "a page of products", Data: o.Obj(map[string]o.Schema{"items": o.Arr(productSchema), "meta": o.PageMeta})}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/products/{id}", Tag: "products", Summary: "Get a product",
			Responses: map[int]o.Response{200: {Description: "the product", Data: productSchema}}, Errors: []string{"NOT_FOUND"}},
		{Method: "PATCH", Path: "/v1/products/{id}", Tag: "products", Summary: "Update a product",
			Description: "Only the fields sent change. metadata: the keys sent are set, a key sent as \"\" is removed. description: null clears it; stock_quantity: null makes stock unlimited; status moves between active, inactive and archived.",
			Body:        o.Obj(withMetadataPatch(productBody)),
			Responses:   map[int]o.Response{200: {Description: "the product", Data: productSchema}},
			Errors:      []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND"}},
		{Method: "DELETE", Path: "/v1/products/{id}", Tag: "products", Summary: "Delete a product (irreversible)",
			Description: "Invoices and links that used it keep their own copy of its description and price.",
			Responses:   map[int]o.Response{200: {Description: "deleted", Data: o.Obj(map[string]o.Schema{"id": o.UUID("")})}},
			Errors:      []string{"NOT_FOUND"}},
	}
}
