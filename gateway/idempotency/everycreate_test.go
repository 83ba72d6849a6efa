package idempotency_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/gateway/auth/authtest"
	gc "svc/gateway/checkout"
	gwevents "svc/gateway/events"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	gwwebhooks "svc/gateway/webhooks"
	pc "svc/payments/checkout"
	"svc/payments/events"
	"svc/payments/idempotency"
	pi "svc/payments/invoices"
	"svc/payments/jobs"
	pp "svc/payments/products"
	"svc/payments/webhooks"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// TestEveryCreateIsIdempotent (issue 30): every create and state-changing POST of the
// commerce, webhook, event and API-key routes honours X-Idempotency-Key with the middleware's
// semantics: the same key and body replay the stored answer (Idempotent-Replayed: true) and
// change nothing more; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED; a
// malformed key is 400. The services write in the key's transaction (idempotency.InTx).
func TestEveryCreateIsIdempotent(t *testing.T) {
	pool, _ := pgtest.New(t)
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys := idempotency.New(pool, idempotency.Config{})
	idem := gwidem.Middleware(keys)
	inv := pi.NewService(pool, inserter, pc.NewInvoiceLinks("https://pay.example/", nil), nil)
	links := pc.NewService(pool, inv, pc.Config{BaseURL: "https://pay.example/"})
	rec := events.NewRecorder(inserter)
	hooks := webhooks.NewService(pool, webhooks.DevCipher("idem"), webhooks.NewSender(webhooks.SenderConfig{}))
	srv := gatewaytest.New(t, pool,
		gp.New(pp.NewService(pool, nil)).Idempotent(idem), gi.New(inv).Idempotent(idem), gc.New(links).Idempotent(idem),
		gwwebhooks.New(hooks).Idempotent(idem), gwevents.New(events.NewService(pool, rec), gwevents.Options{Idempotency: idem}))
	m := authtest.New(t, pool)
	key := m.SandboxKey
	ctx := context.Background()

	// Records the state-changing routes act on.
	var invoice, draft, endpoint, apiKey struct {
		ID string `json:"id"`
	}
	invoiceBody := `{"title":"Order 7","customer_name":"Ada","customer_email":"ada@example.test","line_items":[{"description":"Tea","quantity":1,"unit_price":100}]}`
	srv.Must(t, 201, "POST", "/v1/invoices", key, invoiceBody).Decode(t, &invoice)
	srv.Must(t, 201, "POST", "/v1/invoices", key, invoiceBody).Decode(t, &draft)
	srv.Must(t, 201, "POST", "/v1/webhooks/endpoints", key, `{"url":"https://hooks.example/one"}`).Decode(t, &endpoint)
	srv.Must(t, 201, "POST", "/v1/api-keys", key, `{"name":"to revoke"}`).Decode(t, &apiKey)
	var eventID uuid.UUID
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		eventID, err = rec.Record(ctx, tx, m.ID, "sandbox", events.CustomerCreated, events.Sample(events.CustomerCreated))
		return err
	}); err != nil {
		t.Fatal(err)
	}

	count := func(sql string) func() int {
		return func() int {
			var n int
			if err := pool.QueryRow(ctx, sql, m.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	jobsOf := func(kind string) func() int {
		return count(`select count(*) from river_job where kind = '` + kind + `' and $1::uuid is not null`)
	}
	rows := []struct {
		name, method, path, body, other string
		want                            int
		changed                         func() int // what one run adds to; nil: nothing to count
	}{
		{"product", "POST", "/v1/products", `{"name":"Tea","price":100}`, `{"name":"Coffee","price":100}`, 201,
			count(`select count(*) from products where merchant_id = $1`)},
		{"invoice", "POST", "/v1/invoices", invoiceBody, `{"title":"Other","customer_name":"Bo","customer_email":"bo@example.test"}`, 201,
			count(`select count(*) from invoices where merchant_id = $1`)},
		{"line item", "POST", "/v1/invoices/" + draft.ID + "/line-items", `{"description":"Cake","quantity":2,"unit_price":50}`, `{"description":"Pie","quantity":1,"unit_price":50}`, 201,
			count(`select count(*) from invoice_line_items l join invoices i on i.id = l.invoice_id where i.merchant_id = $1`)},
		{"send invoice", "POST", "/v1/invoices/" + invoice.ID + "/send", "", `{"x":1}`, 200, jobsOf("invoice_mail")},
		{"checkout link", "POST", "/v1/checkout-links", `{"title":"Donate","amount":500}`, `{"title":"Donate","amount":600}`, 201,
			count(`select count(*) from checkout_links where merchant_id = $1`)},
		{"webhook endpoint", "POST", "/v1/webhooks/endpoints", `{"url":"https://hooks.example/two"}`, `{"url":"https://hooks.example/three"}`, 201,
			count(`select count(*) from webhook_endpoints where merchant_id = $1`)},
		{"rotate secret", "POST", "/v1/webhooks/endpoints/" + endpoint.ID + "/rotate-secret", `{"expires_in":60}`, `{"expires_in":0}`, 200, nil},
		{"api key", "POST", "/v1/api-keys", `{"name":"ci"}`, `{"name":"cd"}`, 201,
			count(`select count(*) from api_keys where merchant_id = $1`)},
		{"revoke key", "PATCH", "/v1/api-keys/" + apiKey.ID + "/revoke", "", `{"x":1}`, 200, nil},
		{"resend event", "POST", "/v1/events/" + eventID.String() + "/resend", `{"endpoint_id":"` + endpoint.ID + `"}`, "", 200, jobsOf("webhook_delivery")},
	}
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			k := fmt.Sprintf("idem-%d-%s", i, uuid.NewString()[:8])
			var body any
			if r.body != "" {
				body = r.body
			}
			before := 0
			if r.changed != nil {
				before = r.changed()
			}
			first := srv.Must(t, r.want, r.method, r.path, key, body, "X-Idempotency-Key", k)
			if first.Header["Idempotent-Replayed"] != "" {
				t.Fatal("the first request says it was replayed")
			}
			after := 0
			if r.changed != nil {
				if after = r.changed(); after != before+1 {
					t.Fatalf("the first request added %d, want 1", after-before)
				}
			}
			again := srv.Must(t, r.want, r.method, r.path, key, body, "X-Idempotency-Key", k)
			if again.Header["Idempotent-Replayed"] != "true" || string(again.Body) != string(first.Body) {
				t.Fatalf("retry: replayed %q, body %s, want %s", again.Header["Idempotent-Replayed"], again.Body, first.Body)
			}
			if r.changed != nil && r.changed() != after {
				t.Fatalf("the retry ran again: %d, want %d", r.changed(), after)
			}
			if r.other != "" {
				if reused := srv.Must(t, 422, r.method, r.path, key, r.other, "X-Idempotency-Key", k); reused.Message != "IDEMPOTENCY_KEY_REUSED" {
					t.Fatalf("another body: %s", reused)
				}
			}
			bad := srv.Must(t, 400, r.method, r.path, key, body, "X-Idempotency-Key", "caf\u00e9")
			if f := bad.Fields(); len(f) != 1 || f[0] != gwidem.HeaderKey {
				t.Fatalf("malformed key: %s", bad)
			}
		})
	}
}
