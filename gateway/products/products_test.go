package products_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	gp "svc/gateway/products"
	pp "svc/payments/products"
	"svc/persistence/postgres/pgtest"
)

type product struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   *string  `json:"description"`
	Type          string   `json:"type"`
	Price         float64  `json:"price"`
	Currency      string   `json:"currency"`
	Status        string   `json:"status"`
	StockQuantity *int64   `json:"stock_quantity"`
	ImageURLs     []string `json:"image_urls"`
	TaxType       string   `json:"tax_type"`
	TaxRate       float64  `json:"tax_rate"`
	DiscountType  string   `json:"discount_type"`
	Discount      float64  `json:"discount"`
}

func setup(t *testing.T) (*gatewaytest.Server, authtest.Merchant) {
	t.Helper()
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)))
	return srv, authtest.New(t, pool)
}

func TestCreateAndRead(t *testing.T) {
	srv, m := setup(t)
	r := srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, `{"name":"Widget","price":1500.5,"description":"blue",
		"stock_quantity":3,"image_urls":["https://img.example/a.png"],"tax_type":"percentage","tax_rate":7.5,
		"discount_type":"fixed","discount":"100"}`)
	if !strings.Contains(string(r.Body), `"price":1500.50`) {
		t.Errorf("price not written as an exact number: %s", r.Body)
	}
	var p product
	r.Decode(t, &p)
	if p.Name != "Widget" || p.Price != 1500.5 || p.Type != "physical" || p.Currency != "NGN" || p.Status != "active" ||
		*p.StockQuantity != 3 || p.TaxRate != 7.5 || p.Discount != 100 || len(p.ImageURLs) != 1 {
		t.Fatalf("%+v", p)
	}
	srv.Must(t, 200, "GET", "/v1/products/"+p.ID, m.SandboxKey, nil)

	// defaults: unlimited stock, no tax, no images
	r = srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, map[string]any{"name": "Service hour", "price": 20, "type": "service", "currency": "USD"})
	var q product
	r.Decode(t, &q)
	if q.StockQuantity != nil || q.TaxType != "none" || q.ImageURLs == nil || len(q.ImageURLs) != 0 || q.Currency != "USD" {
		t.Fatalf("%+v %s", q, r.Body)
	}
}

func TestCreateValidation(t *testing.T) {
	srv, m := setup(t)
	long := strings.Repeat("x", 256)
	urls := make([]string, 11)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://img.example/%d.png", i)
	}
	cases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"missing name and price", map[string]any{}, []string{"name", "price"}},
		{"name too long", map[string]any{"name": long, "price": 1}, []string{"name"}},
		{"description too long", map[string]any{"name": "a", "price": 1, "description": strings.Repeat("d", 2001)}, []string{"description"}},
		{"bad type", map[string]any{"name": "a", "price": 1, "type": "food"}, []string{"type"}},
		{"zero price", map[string]any{"name": "a", "price": 0}, []string{"price"}},
		{"negative price", map[string]any{"name": "a", "price": -5}, []string{"price"}},
		{"three decimals", map[string]any{"name": "a", "price": 1.234}, []string{"price"}},
		{"bad currency", map[string]any{"name": "a", "price": 1, "currency": "EUR"}, []string{"currency"}},
		{"bad status", map[string]any{"name": "a", "price": 1, "status": "gone"}, []string{"status"}},
		{"negative stock", map[string]any{"name": "a", "price": 1, "stock_quantity": -1}, []string{"stock_quantity"}},
		{"too many images", map[string]any{"name": "a", "price": 1, "image_urls": urls}, []string{"image_urls"}},
		{"bad image url", map[string]any{"name": "a", "price": 1, "image_urls": []string{"ftp://x/y", "not a url"}}, []string{"image_urls[0]", "image_urls[1]"}},
		{"tax rate missing", map[string]any{"name": "a", "price": 1, "tax_type": "percentage"}, []string{"tax_rate"}},
		{"tax type bad", map[string]any{"name": "a", "price": 1, "tax_type": "vat", "tax_rate": 5}, []string{"tax_type"}},
		{"tax over 100%", map[string]any{"name": "a", "price": 1, "tax_type": "percentage", "tax_rate": 101}, []string{"tax_rate"}},
		{"discount missing", map[string]any{"name": "a", "price": 1, "discount_type": "fixed"}, []string{"discount"}},
		{"fixed discount above price", map[string]any{"name": "a", "price": 1, "discount_type": "fixed", "discount": 2}, []string{"discount"}},
		{"wrong type of price", map[string]any{"name": "a", "price": true}, []string{"price"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := srv.Must(t, 400, "POST", "/v1/products", m.SandboxKey, c.body)
			got := r.Fields()
			slices.Sort(got)
			slices.Sort(c.fields)
			if r.Message != "VALIDATION_ERROR" || !slices.Equal(got, c.fields) {
				t.Fatalf("fields %v, want %v: %s", r.Fields(), c.fields, r.Body)
			}
		})
	}
}

func TestPatchChangesOnlySentFields(t *testing.T) {
	srv, m := setup(t)
	var p product
	srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, `{"name":"Mug","price":10,"description":"white","stock_quantity":5}`).Decode(t, &p)

	var q product
	srv.Must(t, 200, "PATCH", "/v1/products/"+p.ID, m.SandboxKey, `{"price":12.25}`).Decode(t, &q)
	if q.Price != 12.25 || q.Name != "Mug" || *q.Description != "white" || *q.StockQuantity != 5 {
		t.Fatalf("%+v", q)
	}
	srv.Must(t, 200, "PATCH", "/v1/products/"+p.ID, m.SandboxKey, `{"description":null,"stock_quantity":null,"status":"archived"}`).Decode(t, &q)
	if q.Description != nil || q.StockQuantity != nil || q.Status != "archived" || q.Price != 12.25 {
		t.Fatalf("%+v", q)
	}
	for _, body := range []string{`{"name":null}`, `{"price":null}`, `{"status":"deleted"}`, `{"type":"x"}`, `{"price":0}`, `{"name":""}`} {
		r := srv.Must(t, 400, "PATCH", "/v1/products/"+p.ID, m.SandboxKey, body)
		if r.Message != "VALIDATION_ERROR" {
			t.Fatalf("%s: %s", body, r.Body)
		}
	}
	srv.Must(t, 200, "PATCH", "/v1/products/"+p.ID, m.SandboxKey, `{"tax_type":"fixed","tax_rate":0.5}`).Decode(t, &q)
	if q.TaxType != "fixed" || q.TaxRate != 0.5 {
		t.Fatalf("%+v", q)
	}
	srv.Must(t, 200, "PATCH", "/v1/products/"+p.ID, m.SandboxKey, `{"tax_type":"none"}`).Decode(t, &q)
	if q.TaxType != "none" || q.TaxRate != 0 {
		t.Fatalf("%+v", q)
	}
}

func TestListFilterSearchPaging(t *testing.T) {
	srv, m := setup(t)
	for i, name := range []string{"Blue Shirt", "red shirt", "Hat", "SHIRT 3"} {
		status := "active"
		if i == 3 {
			status = "inactive"
		}
		srv.Must(t, 201, "POST", "/v1/products", m.SandboxKey, map[string]any{"name": name, "price": 1, "status": status})
	}
	type page struct {
		Items []product `json:"items"`
		Meta  struct {
			Total      int `json:"total"`
			TotalPages int `json:"total_pages"`
		} `json:"meta"`
	}
	var pg page
	srv.Must(t, 200, "GET", "/v1/products?search=shirt", m.SandboxKey, nil).Decode(t, &pg)
	if len(pg.Items) != 3 {
		t.Fatalf("search: %d items", len(pg.Items))
	}
	srv.Must(t, 200, "GET", "/v1/products?search=shirt&status=active&limit=1&page=2", m.SandboxKey, nil).Decode(t, &pg)
	if len(pg.Items) != 1 || pg.Items[0].Name != "Blue Shirt" || pg.Meta.TotalPages != 2 || pg.Meta.Total != 2 {
		t.Fatalf("%+v", pg)
	}
	srv.Must(t, 200, "GET", "/v1/products?search=%25", m.SandboxKey, nil).Decode(t, &pg)
	if len(pg.Items) != 0 {
		t.Fatal("% is not a wildcard")
	}
	for _, q := range []string{"limit=101", "limit=0", "page=0", "status=gone"} {
		srv.Must(t, 400, "GET", "/v1/products?"+q, m.SandboxKey, nil)
	}
}

func TestTenancyAndDelete(t *testing.T) {
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)))
	a, b := authtest.New(t, pool), authtest.New(t, pool)
	var p product
	srv.Must(t, 201, "POST", "/v1/products", a.SandboxKey, `{"name":"Mine","price":1}`).Decode(t, &p)
	for _, key := range []string{b.SandboxKey, a.LiveKey} {
		srv.Must(t, 404, "GET", "/v1/products/"+p.ID, key, nil)
		srv.Must(t, 404, "PATCH", "/v1/products/"+p.ID, key, `{"name":"theirs"}`)
		srv.Must(t, 404, "DELETE", "/v1/products/"+p.ID, key, nil)
		var pg struct{ Items []product }
		srv.Must(t, 200, "GET", "/v1/products", key, nil).Decode(t, &pg)
		if len(pg.Items) != 0 {
			t.Fatal("listed another tenant's product")
		}
	}
	srv.Must(t, 404, "GET", "/v1/products/not-a-uuid", a.SandboxKey, nil)
	srv.Must(t, 404, "GET", "/v1/products/"+uuid.NewString(), a.SandboxKey, nil)
	srv.Must(t, 401, "GET", "/v1/products", "", nil)
	srv.Must(t, 200, "DELETE", "/v1/products/"+p.ID, a.SandboxKey, nil)
	srv.Must(t, 404, "GET", "/v1/products/"+p.ID, a.SandboxKey, nil)
}
