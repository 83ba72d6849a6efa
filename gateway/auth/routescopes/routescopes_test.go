package routescopes_test

import (
	"testing"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/auth"
	gwbalance "svc/gateway/balance"
	gc "svc/gateway/checkout"
	gwcustomers "svc/gateway/customers"
	gwdeposits "svc/gateway/deposits"
	gwevents "svc/gateway/events"
	gi "svc/gateway/invoices"
	"svc/gateway/market"
	gwofframps "svc/gateway/offramps"
	gwonramps "svc/gateway/onramps"
	gwpartners "svc/gateway/partners"
	gp "svc/gateway/products"
	gwrates "svc/gateway/rates"
	gwrecipients "svc/gateway/recipients"
	gwsandbox "svc/gateway/sandbox"
	"svc/gateway/trading"
	gwtransfers "svc/gateway/transfers"
	gwva "svc/gateway/virtualaccounts"
	gwwebhooks "svc/gateway/webhooks"
	gwwithdrawals "svc/gateway/withdrawals"
	"svc/gateway/ws"
)

// allRouteSets is every route set svcd serves (cmd/svcd/main.go), built without services:
// only their routes are read.
func allRouteSets(t *testing.T) []gateway.RouteSet {
	svc, err := auth.New(nil, auth.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return []gateway.RouteSet{svc.Routes(), gwbalance.New(nil, nil), gc.New(nil), gwcustomers.New(nil, nil), gwcustomers.NewKYC(nil, nil), gwdeposits.New(nil, nil), gi.New(nil),
		market.New(nil, nil, nil), gwofframps.New(nil, nil, nil), gwonramps.New(nil, nil), gp.New(nil), gwrates.New(nil),
		gwrecipients.New(nil, nil), gwsandbox.New(nil), trading.New(nil, nil, nil), gwtransfers.New(nil, nil), gwva.New(nil, nil),
		gwwebhooks.New(nil), gwevents.New(nil, gwevents.Options{}), gwwithdrawals.New(nil, nil), ws.NewServer(ws.Config{}), gwpartners.New(nil, gwpartners.Config{})}
}

// TestEveryRouteHasAScope registers every route set and the server's own routes, finds
// which handlers sit behind the protect middleware (by calling each one with a marking
// protect), and checks the scope table against them both ways: every protected route has a
// scope, every unprotected one is marked public (or authenticates itself), and the table
// names no route that does not exist.
func TestEveryRouteHasAScope(t *testing.T) {
	routes := map[string][]string{}
	protected := map[string]bool{}
	const mark = "scope-test-protected"
	probe := func(h fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) { ctx.SetUserValue(mark, true) }
	}
	isProtected := func(r *router.Router, method, path string) (prot bool) {
		h, _ := r.Lookup(method, path, &fasthttp.RequestCtx{})
		if h == nil {
			t.Fatalf("%s %s: no handler", method, path)
		}
		var ctx fasthttp.RequestCtx
		defer func() {
			_ = recover() // an unprotected handler without its service may panic: it is not protected
			prot = ctx.UserValue(mark) == true
		}()
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(path)
		h(&ctx)
		return
	}
	add := func(r *router.Router) {
		for method, paths := range r.List() {
			for _, p := range paths {
				routes[method] = append(routes[method], p)
				protected[method+" "+p] = isProtected(r, method, p)
			}
		}
	}
	for _, rs := range allRouteSets(t) {
		r := router.New()
		rs.Register(r, probe)
		add(r)
	}
	srv, err := gateway.New(gateway.DefaultConfig(), gateway.Deps{}) // the system routes alone
	if err != nil {
		t.Fatal(err)
	}
	for method, paths := range srv.Router().List() {
		for _, p := range paths {
			routes[method] = append(routes[method], p)
			protected[method+" "+p] = false
		}
	}
	if len(protected) < 100 {
		t.Fatalf("only %d routes found", len(protected))
	}
	for _, problem := range auth.RouteScopes(routes, func(m, p string) bool { return protected[m+" "+p] }) {
		t.Error(problem)
	}
}
