package checkout_test

import (
	"context"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth/authtest"
	gc "svc/gateway/checkout"
	"svc/gateway/gatewaytest"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	"svc/payments"
	pc "svc/payments/checkout"
	"svc/payments/checkout/checkouttest"
	"svc/payments/events"
	pi "svc/payments/invoices"
	"svc/payments/jobs"
	pp "svc/payments/products"
	"svc/persistence/postgres/pgtest"
)

type env struct {
	srv     *gatewaytest.Server
	pool    *pgxpool.Pool
	a, b    authtest.Merchant
	onramps *checkouttest.Onramps
}

func setup(t *testing.T) env {
	t.Helper()
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inv := pi.NewService(pool, client, pc.NewInvoiceLinks("https://pay.example/", nil), nil)
	onramps := &checkouttest.Onramps{Pool: pool, Completer: pc.NewCompleter(events.NewRecorder(client), nil)}
	links := pc.NewService(pool, inv, pc.Config{BaseURL: "https://pay.example/", Onramps: onramps})
	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)), gi.New(inv), gc.New(links))
	return env{srv: srv, pool: pool, a: authtest.New(t, pool), b: authtest.New(t, pool), onramps: onramps}
}

type link struct {
	ID             string  `json:"id"`
	URL            string  `json:"url"`
	Slug           string  `json:"slug"`
	Type           string  `json:"type"`
	Amount         float64 `json:"amount"`
	Currency       string  `json:"currency"`
	Status         string  `json:"status"`
	Description    *string `json:"description"`
	RedirectURL    *string `json:"redirect_url"`
	SuccessMessage *string `json:"success_message"`
	InvoiceID      *string `json:"invoice_id"`
	LineItems      []struct {
		Total float64 `json:"total"`
	} `json:"line_items"`
	PaymentsCount int `json:"payments_count"`
}

func (e env) link(t *testing.T, key, body string) link {
	t.Helper()
	var l link
	e.srv.Must(t, 201, "POST", "/v1/checkout-links", key, body).Decode(t, &l)
	return l
}

func TestCreateFlavors(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey

	one := e.link(t, key, `{"title":"Donation","amount":2500,"currency":"NGN","slug":"give-now","success_message":"Thanks!"}`)
	if one.Type != "one_time" || one.Amount != 2500 || one.URL != "https://pay.example/pay/give-now" || one.Status != "active" {
		t.Fatalf("%+v", one)
	}
	items := e.link(t, key, `{"title":"Two T-shirts & a hat!","currency":"USD","line_items":[{"description":"T-shirt","quantity":2,"unit_price":10,"tax_type":"percentage","tax_rate":7.5},{"description":"Hat","quantity":1,"unit_price":5}]}`)
	if items.Type != "one_time" || items.Amount != 26.5 || len(items.LineItems) != 2 || !strings.HasPrefix(items.Slug, "two-t-shirts-a-hat-") {
		t.Fatalf("%+v", items)
	}
	var inv struct {
		ID     string
		Status string
	}
	e.srv.Must(t, 201, "POST", "/v1/invoices", key, `{"title":"Consulting","customer_name":"Ada","customer_email":"ada@example.test","line_items":[{"description":"Hours","quantity":3,"unit_price":100}]}`).Decode(t, &inv)
	byInvoice := e.link(t, key, `{"title":"Pay INV","invoice_id":"`+inv.ID+`"}`)
	if byInvoice.Type != "invoice" || byInvoice.Amount != 300 || *byInvoice.InvoiceID != inv.ID || byInvoice.Currency != "NGN" {
		t.Fatalf("%+v", byInvoice)
	}
	inline := e.link(t, key, `{"title":"Catering","customer_name":"Bola","customer_email":"bola@example.test","line_items":[{"description":"Lunch","quantity":10,"unit_price":1500}]}`)
	if inline.Type != "invoice" || inline.InvoiceID == nil || inline.Amount != 15000 {
		t.Fatalf("%+v", inline)
	}
	var created struct {
		Status        string `json:"status"`
		CustomerEmail string `json:"customer_email"`
		InvoiceNumber string `json:"invoice_number"`
	}
	e.srv.Must(t, 200, "GET", "/v1/invoices/"+*inline.InvoiceID, key, nil).Decode(t, &created)
	if created.Status != "pending" || created.CustomerEmail != "bola@example.test" || created.InvoiceNumber != "INV-000002" {
		t.Fatalf("%+v", created)
	}

	// slug taken (by any merchant: slugs are the public address)
	if r := e.srv.Must(t, 409, "POST", "/v1/checkout-links", e.b.SandboxKey, `{"title":"x","amount":1,"slug":"give-now"}`); r.Message != "SLUG_TAKEN" {
		t.Fatal(r)
	}
	// a deleted link's slug stays taken
	e.srv.Must(t, 200, "DELETE", "/v1/checkout-links/"+one.ID, key, nil)
	e.srv.Must(t, 409, "POST", "/v1/checkout-links", key, `{"title":"x","amount":1,"slug":"give-now"}`)

	// a paid invoice cannot get a link
	e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"canceled"}`)
	if r := e.srv.Must(t, 422, "POST", "/v1/checkout-links", key, `{"title":"x","invoice_id":"`+inv.ID+`"}`); r.Message != "INVALID_STATE" {
		t.Fatal(r)
	}
}

func TestCreateValidation(t *testing.T) {
	e := setup(t)
	cases := []struct {
		name   string
		body   string
		fields []string
	}{
		{"nothing", `{}`, []string{"amount", "title"}},
		{"title too long", `{"title":"` + strings.Repeat("t", 256) + `","amount":1}`, []string{"title"}},
		{"description too long", `{"title":"t","amount":1,"description":"` + strings.Repeat("d", 2001) + `"}`, []string{"description"}},
		{"success message too long", `{"title":"t","amount":1,"success_message":"` + strings.Repeat("d", 501) + `"}`, []string{"success_message"}},
		{"bad slugs", `{"title":"t","amount":1,"slug":"AB"}`, []string{"slug"}},
		{"slug with double dash", `{"title":"t","amount":1,"slug":"a--b"}`, []string{"slug"}},
		{"slug too long", `{"title":"t","amount":1,"slug":"` + strings.Repeat("a", 101) + `"}`, []string{"slug"}},
		{"bad redirect", `{"title":"t","amount":1,"redirect_url":"javascript:alert(1)"}`, []string{"redirect_url"}},
		{"bad type", `{"title":"t","amount":1,"type":"subscription"}`, []string{"type"}},
		{"bad currency", `{"title":"t","amount":1,"currency":"EUR"}`, []string{"currency"}},
		{"zero amount", `{"title":"t","amount":0}`, []string{"amount"}},
		{"amount and items", `{"title":"t","amount":1,"line_items":[{"description":"x","quantity":1,"unit_price":1}]}`, []string{"amount"}},
		{"invoice type without invoice", `{"title":"t","type":"invoice","amount":1}`, []string{"invoice_id"}},
		{"inline without email", `{"title":"t","customer_name":"x","line_items":[{"description":"x","quantity":1,"unit_price":1}]}`, []string{"customer_email"}},
		{"inline without items", `{"title":"t","customer_name":"x","customer_email":"x@y.test"}`, []string{"line_items"}},
		{"bad line", `{"title":"t","line_items":[{"quantity":-1}]}`, []string{"line_items[0].description", "line_items[0].quantity", "line_items[0].unit_price"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.srv.Must(t, 400, "POST", "/v1/checkout-links", e.a.SandboxKey, c.body)
			got := r.Fields()
			sort.Strings(got)
			if !slices.Equal(got, c.fields) {
				t.Fatalf("fields %v, want %v: %s", got, c.fields, r.Body)
			}
		})
	}
}

func TestPatchListDeleteTenancy(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey
	l := e.link(t, key, `{"title":"Gift","amount":10,"description":"d","redirect_url":"https://shop.example/thanks","success_message":"yay"}`)
	var got link
	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+l.ID, key, `{"description":null,"redirect_url":null,"success_message":null,"status":"inactive"}`).Decode(t, &got)
	if got.Description != nil || got.RedirectURL != nil || got.SuccessMessage != nil || got.Status != "inactive" || got.Amount != 10 {
		t.Fatalf("%+v", got)
	}
	for _, b := range []string{`{"amount":20}`, `{"currency":"USD"}`, `{"invoice_id":null}`, `{"status":"gone"}`, `{"title":""}`, `{"redirect_url":"ftp://x"}`} {
		e.srv.Must(t, 400, "PATCH", "/v1/checkout-links/"+l.ID, key, b)
	}
	e.link(t, key, `{"title":"Other","amount":5}`)
	var pg struct {
		Items []link
		Meta  struct {
			Total int `json:"total"`
		}
	}
	e.srv.Must(t, 200, "GET", "/v1/checkout-links?status=inactive", key, nil).Decode(t, &pg)
	if pg.Meta.Total != 1 || pg.Items[0].ID != l.ID {
		t.Fatalf("%+v", pg)
	}
	e.srv.Must(t, 400, "GET", "/v1/checkout-links?status=x", key, nil)
	e.srv.Must(t, 400, "GET", "/v1/checkout-links?limit=500", key, nil)
	for _, k := range []string{e.b.SandboxKey, e.a.LiveKey} {
		e.srv.Must(t, 404, "GET", "/v1/checkout-links/"+l.ID, k, nil)
		e.srv.Must(t, 404, "PATCH", "/v1/checkout-links/"+l.ID, k, `{"title":"x"}`)
		e.srv.Must(t, 404, "DELETE", "/v1/checkout-links/"+l.ID, k, nil)
		e.srv.Must(t, 200, "GET", "/v1/checkout-links", k, nil).Decode(t, &pg)
		if pg.Meta.Total != 0 {
			t.Fatal("another tenant's links listed")
		}
	}
	e.srv.Must(t, 200, "DELETE", "/v1/checkout-links/"+l.ID, key, nil)
	e.srv.Must(t, 404, "GET", "/v1/checkout-links/"+l.ID, key, nil)
	e.srv.Must(t, 404, "DELETE", "/v1/checkout-links/"+l.ID, key, nil)
}

func paymentOf(t *testing.T, r gatewaytest.Response) string {
	t.Helper()
	if r.Status != 303 {
		t.Fatalf("want 303: %s", r)
	}
	u, err := url.Parse(r.Header["Location"])
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("payment")
}

func form(kv ...string) (string, []string) {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode(), []string{"Content-Type", "application/x-www-form-urlencoded"}
}

func TestHostedPagePayment(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey
	var prod struct{ ID string }
	e.srv.Must(t, 201, "POST", "/v1/products", key, `{"name":"Poster","price":500,"stock_quantity":3}`).Decode(t, &prod)
	l := e.link(t, key, `{"title":"Posters","slug":"posters","customer_name":"Ada","customer_email":"ada@example.test",
		"success_message":"Your posters are on the way","line_items":[{"product_id":"`+prod.ID+`","quantity":2}]}`)

	page := e.srv.Must(t, 200, "GET", "/pay/posters", "", nil)
	for _, want := range []string{"Test Merchant", "Posters", "Pay by bank transfer", "NGN 1,000.00", "Test mode"} {
		if !strings.Contains(string(page.Body), want) {
			t.Fatalf("page lacks %q", want)
		}
	}
	pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/posters/transfer", "", nil))
	page = e.srv.Must(t, 200, "GET", "/pay/posters?payment="+pay, "", nil)
	for _, want := range []string{"9900000001", "Test Bank", "NGN 1,000.00", "Simulate transfer"} {
		if !strings.Contains(string(page.Body), want) {
			t.Fatalf("payment page lacks %q", want)
		}
	}
	st := e.srv.Must(t, 200, "GET", "/pay/posters/status?payment="+pay, "", nil)
	if !strings.Contains(string(st.Body), `"status":"awaiting"`) || !st.Success {
		t.Fatal(st)
	}
	b, h := form("payment", pay)
	r := e.srv.Do(t, "POST", "/pay/posters/simulate", "", b, h...)
	if r.Status != 303 || strings.Contains(r.Header["Location"], "notice") {
		t.Fatal(r, r.Header["Location"])
	}
	st = e.srv.Must(t, 200, "GET", "/pay/posters/status?payment="+pay, "", nil)
	var sj struct {
		Status         string  `json:"status"`
		SuccessMessage *string `json:"success_message"`
	}
	st.Decode(t, &sj)
	if sj.Status != "completed" || *sj.SuccessMessage != "Your posters are on the way" {
		t.Fatal(st)
	}
	page = e.srv.Must(t, 200, "GET", "/pay/posters?payment="+pay, "", nil)
	if !strings.Contains(string(page.Body), "Your posters are on the way") {
		t.Fatal("no success message")
	}
	// invoice paid, stock taken, event recorded: all in the settlement's transaction
	var inv struct {
		Status string  `json:"status"`
		PaidAt *string `json:"paid_at"`
	}
	e.srv.Must(t, 200, "GET", "/v1/invoices/"+*l.InvoiceID, key, nil).Decode(t, &inv)
	if inv.Status != "paid" || inv.PaidAt == nil {
		t.Fatalf("%+v", inv)
	}
	var p struct {
		StockQuantity int `json:"stock_quantity"`
	}
	e.srv.Must(t, 200, "GET", "/v1/products/"+prod.ID, key, nil).Decode(t, &p)
	if p.StockQuantity != 1 {
		t.Fatal(p.StockQuantity)
	}
	var data string
	if err := e.pool.QueryRow(context.Background(), `select data::text from events where type='checkout.payment.completed'`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data, l.ID) || !strings.Contains(data, `"amount": "1000.00"`) || !strings.Contains(data, *l.InvoiceID) {
		t.Fatal(data)
	}
	// the paid invoice's page refuses a new payment
	r = e.srv.Do(t, "GET", "/pay/posters", "", nil)
	if r.Status != 409 || !strings.Contains(string(r.Body), "already been paid") {
		t.Fatal(r.Status)
	}
	r = e.srv.Do(t, "POST", "/pay/posters/transfer", "", nil)
	if !strings.Contains(r.Header["Location"], "notice=") {
		t.Fatal(r.Header)
	}
	// settling the same onramp again changes nothing
	var onramp string
	_ = e.pool.QueryRow(context.Background(), `select onramp_id from checkout_payments where id=$1`, pay).Scan(&onramp)
	if err := e.onramps.SimulateDeposit(context.Background(), payments.Tenant{MerchantID: e.a.ID, Environment: "sandbox"}, onramp); err != nil {
		t.Fatal(err)
	}
	var n int
	_ = e.pool.QueryRow(context.Background(), `select count(*) from events where type='checkout.payment.completed'`).Scan(&n)
	if n != 1 {
		t.Fatal(n)
	}
}

func TestOneTimeLinkTakesOnePaymentAndStock(t *testing.T) {
	e := setup(t)
	key := e.a.SandboxKey
	var prod struct{ ID string }
	e.srv.Must(t, 201, "POST", "/v1/products", key, `{"name":"Rare print","price":100,"stock_quantity":1}`).Decode(t, &prod)
	e.link(t, key, `{"title":"Print","slug":"print","line_items":[{"product_id":"`+prod.ID+`","quantity":1}]}`)
	e.link(t, key, `{"title":"Two prints","slug":"two-prints","line_items":[{"product_id":"`+prod.ID+`","quantity":2}]}`)

	// not enough stock: the page says so (422) and refuses to start a payment
	if r := e.srv.Do(t, "GET", "/pay/two-prints", "", nil); r.Status != 422 || !strings.Contains(string(r.Body), "out of stock") {
		t.Fatal(r.Status)
	}
	if r := e.srv.Do(t, "POST", "/pay/two-prints/transfer", "", nil); !strings.Contains(r.Header["Location"], "notice=") {
		t.Fatal(r.Header)
	}

	// two payers start at once; the first settles, the second finds the link used up
	first := paymentOf(t, e.srv.Do(t, "POST", "/pay/print/transfer", "", nil))
	second := paymentOf(t, e.srv.Do(t, "POST", "/pay/print/transfer", "", nil))
	b, h := form("payment", first)
	e.srv.Do(t, "POST", "/pay/print/simulate", "", b, h...)
	b, h = form("payment", second)
	e.srv.Do(t, "POST", "/pay/print/simulate", "", b, h...)
	var status, reason string
	_ = e.pool.QueryRow(context.Background(), `select status, coalesce(failure_reason,'') from checkout_payments where id=$1`, second).Scan(&status, &reason)
	if status != "failed" || !strings.Contains(reason, "INVALID_STATE") {
		t.Fatal(status, reason)
	}
	var l link
	var pg struct{ Items []link }
	e.srv.Must(t, 200, "GET", "/v1/checkout-links", key, nil).Decode(t, &pg)
	for _, x := range pg.Items {
		if x.Slug == "print" {
			l = x
		}
	}
	if l.Status != "inactive" || l.PaymentsCount != 1 {
		t.Fatalf("%+v", l)
	}
	if r := e.srv.Do(t, "GET", "/pay/print", "", nil); r.Status != 409 {
		t.Fatal(r.Status)
	}
}

func TestPagesForUnknownDeletedInactiveAndLive(t *testing.T) {
	e := setup(t)
	if r := e.srv.Do(t, "GET", "/pay/no-such-link", "", nil); r.Status != 404 || !strings.Contains(string(r.Body), "not found") {
		t.Fatal(r.Status)
	}
	if r := e.srv.Do(t, "GET", "/pay/BAD..slug", "", nil); r.Status != 404 {
		t.Fatal(r.Status)
	}
	l := e.link(t, e.a.SandboxKey, `{"title":"Soon gone","amount":5,"slug":"soon-gone"}`)
	pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/soon-gone/transfer", "", nil))
	e.srv.Must(t, 200, "PATCH", "/v1/checkout-links/"+l.ID, e.a.SandboxKey, `{"status":"inactive"}`)
	if r := e.srv.Do(t, "GET", "/pay/soon-gone", "", nil); r.Status != 409 || !strings.Contains(string(r.Body), "not accepting payments") {
		t.Fatal(r.Status)
	}
	e.srv.Must(t, 200, "DELETE", "/v1/checkout-links/"+l.ID, e.a.SandboxKey, nil)
	for _, path := range []string{"/pay/soon-gone", "/pay/soon-gone/status?payment=" + pay} {
		if r := e.srv.Do(t, "GET", path, "", nil); r.Status != 410 {
			t.Fatal(path, r.Status)
		}
	}
	if r := e.srv.Do(t, "POST", "/pay/soon-gone/transfer", "", nil); r.Status != 410 {
		t.Fatal(r.Status)
	}

	// live links cannot simulate
	e.link(t, e.a.LiveKey, `{"title":"Real","amount":5,"slug":"real-money"}`)
	page := e.srv.Must(t, 200, "GET", "/pay/real-money", "", nil)
	if strings.Contains(string(page.Body), "Test mode") {
		t.Fatal("live page shows test mode")
	}
	pay = paymentOf(t, e.srv.Do(t, "POST", "/pay/real-money/transfer", "", nil))
	if strings.Contains(string(e.srv.Must(t, 200, "GET", "/pay/real-money?payment="+pay, "", nil).Body), "Simulate") {
		t.Fatal("live page offers simulation")
	}
	b, h := form("payment", pay)
	if r := e.srv.Do(t, "POST", "/pay/real-money/simulate", "", b, h...); !strings.Contains(r.Header["Location"], "notice=") {
		t.Fatal(r.Header)
	}
	// assets are embedded
	if r := e.srv.Do(t, "GET", "/checkout-assets/pay.js", "", nil); r.Status != 200 || !strings.Contains(string(r.Body), "statusURL") {
		t.Fatal(r.Status)
	}
}

func TestUSDLinkShowsLockedRate(t *testing.T) {
	e := setup(t)
	e.link(t, e.a.SandboxKey, `{"title":"USD","amount":12.5,"currency":"USD","slug":"usd-link"}`)
	pay := paymentOf(t, e.srv.Do(t, "POST", "/pay/usd-link/transfer", "", nil))
	body := string(e.srv.Must(t, 200, "GET", "/pay/usd-link?payment="+pay, "", nil).Body)
	if !strings.Contains(body, "NGN 18,750.00") || !strings.Contains(body, "1 USD = NGN 1500.00 (locked)") {
		t.Fatal(body)
	}
}
