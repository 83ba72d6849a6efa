package checkout_test

import (
	"testing"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	gc "svc/gateway/checkout"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
)

// TestEveryCommerceRouteIsDocumented checks the products, invoices and checkout route sets
// against their OpenAPI operations, both ways.
func TestEveryCommerceRouteIsDocumented(t *testing.T) {
	for _, rs := range []gateway.RouteSet{gp.New(nil), gi.New(nil), gc.New(nil)} {
		r := router.New()
		rs.Register(r, func(h fasthttp.RequestHandler) fasthttp.RequestHandler { return h })
		documented := map[string]bool{}
		for _, op := range rs.Docs() {
			documented[op.Method+" "+op.Path] = true
		}
		registered := map[string]bool{}
		for method, paths := range r.List() {
			for _, p := range paths {
				registered[method+" "+p] = true
				if !documented[method+" "+p] {
					t.Errorf("route %s %s is not documented", method, p)
				}
			}
		}
		for op := range documented {
			if !registered[op] {
				t.Errorf("%s is documented but not routed", op)
			}
		}
	}
}
