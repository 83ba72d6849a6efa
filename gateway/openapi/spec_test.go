package openapi_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"

	"github.com/fasthttp/router"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/auth"
	"svc/gateway/balance"
	"svc/gateway/checkout"
	"svc/gateway/customers"
	"svc/gateway/deposits"
	"svc/gateway/events"
	"svc/gateway/invoices"
	"svc/gateway/market"
	"svc/gateway/offramps"
	"svc/gateway/onramps"
	o "svc/gateway/openapi"
	"svc/gateway/partners"
	"svc/gateway/products"
	"svc/gateway/rates"
	"svc/gateway/recipients"
	"svc/gateway/sandbox"
	"svc/gateway/trading"
	"svc/gateway/transfers"
	"svc/gateway/virtualaccounts"
	"svc/gateway/webhooks"
	"svc/gateway/withdrawals"
	"svc/gateway/ws"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the route sets (go generate ./gateway/openapi)")

// docsOnly serves a route set's documented operations with a no-op handler: enough for the
// gateway to build the document of every route without the services behind them.
type docsOnly struct{ ops []o.Op }

func (d docsOnly) Register(r *router.Router, _ func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	for _, op := range d.ops {
		r.Handle(op.Method, op.Path, func(*fasthttp.RequestCtx) {})
	}
}

func (d docsOnly) Docs() []o.Op { return d.ops }

// allRouteSets lists the documentation of every route set svcd serves (cmd/svcd/main.go).
// A new route set goes here too, so openapi.json and the generated client cover it.
func allRouteSets() []gateway.RouteSet {
	var docs [][]o.Op
	docs = append(docs,
		(&auth.Routes{}).Docs(),
		(&balance.Routes{}).Docs(),
		(&checkout.Routes{}).Docs(),
		(&customers.Routes{}).Docs(),
		(&customers.KYCRoutes{}).Docs(),
		(&deposits.Routes{}).Docs(),
		(&events.Routes{}).Docs(),
		(&invoices.Routes{}).Docs(),
		(&market.Handlers{}).Docs(),
		(&offramps.Routes{}).Docs(),
		(&onramps.Routes{}).Docs(),
		(&partners.Routes{}).Docs(),
		(&products.Routes{}).Docs(),
		(&rates.Routes{}).Docs(),
		(&recipients.Routes{}).Docs(),
		(&sandbox.Routes{}).Docs(),
		(&trading.Handlers{}).Docs(),
		(&transfers.Routes{}).Docs(),
		(&virtualaccounts.Routes{}).Docs(),
		(&webhooks.Routes{}).Docs(),
		(&withdrawals.Routes{}).Docs(),
		(&ws.Server{}).Docs(),
	)
	var out []gateway.RouteSet
	for _, d := range docs {
		out = append(out, docsOnly{d})
	}
	return out
}

// fullDocument renders the document of every route, as svcd serves it.
func fullDocument(t *testing.T) []byte {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Version = "1.0.0"
	srv, err := gateway.New(cfg, gateway.Deps{Routes: allRouteSets()})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := srv.Doc().JSON()
	if err != nil {
		t.Fatal(err)
	}
	return append(raw, '\n')
}

// TestDocumentIsValidOpenAPI loads the whole document with kin-openapi and validates it
// (structure, references, parameters, examples against their schemas).
func TestDocumentIsValidOpenAPI(t *testing.T) {
	raw := fullDocument(t)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("the OpenAPI document is not valid: %v", err)
	}
	// Every resource the gateway serves is a component, and so are its list shapes.
	for _, name := range []string{"Error", "FieldError", "PageMeta"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("component %s missing", name)
		}
	}
	for _, name := range []string{"IdempotencyKey", "Environment"} {
		if doc.Components.Parameters[name] == nil {
			t.Errorf("parameter %s missing", name)
		}
	}
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "Idempotent-Replayed"} {
		if doc.Components.Headers[name] == nil {
			t.Errorf("header %s missing", name)
		}
	}
}

// TestSpecFileIsCurrent keeps openapi.json (the generated client's input) equal to what the
// route sets document. After changing a route's documentation: go generate ./gateway/openapi
func TestSpecFileIsCurrent(t *testing.T) {
	raw := fullDocument(t)
	if *update {
		if err := os.WriteFile("openapi.json", raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, raw) {
		t.Fatal("gateway/openapi/openapi.json is out of date: run `go generate ./gateway/openapi` and commit openapi.json and client/")
	}
}
