package invoices_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth/authtest"
	gc "svc/gateway/checkout"
	"svc/gateway/gatewaytest"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	"svc/payments"
	pc "svc/payments/checkout"
	pi "svc/payments/invoices"
	"svc/payments/jobs"
	pp "svc/payments/products"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

type env struct {
	srv  *gatewaytest.Server
	pool *pgxpool.Pool
	a, b authtest.Merchant
}

func setup(t *testing.T) env {
	t.Helper()
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inv := pi.NewService(pool, client, pc.NewInvoiceLinks("https://pay.example", nil), nil)
	links := pc.NewService(pool, inv, pc.Config{BaseURL: "https://pay.example"})
	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)), gi.New(inv), gc.New(links))
	return env{srv: srv, pool: pool, a: authtest.New(t, pool), b: authtest.New(t, pool)}
}

type line struct {
	ID             string  `json:"id"`
	Description    string  `json:"description"`
	Quantity       int64   `json:"quantity"`
	UnitPrice      float64 `json:"unit_price"`
	ProductID      *string `json:"product_id"`
	Subtotal       string  `json:"-"`
	DiscountAmount float64 `json:"discount_amount"`
	TaxAmount      float64 `json:"tax_amount"`
	Total          float64 `json:"total"`
}

type invoice struct {
	ID            string  `json:"id"`
	InvoiceNumber string  `json:"invoice_number"`
	Status        string  `json:"status"`
	Currency      string  `json:"currency"`
	TotalAmount   float64 `json:"total_amount"`
	IssueDate     string  `json:"issue_date"`
	DueDate       *string `json:"due_date"`
	Notes         *string `json:"notes"`
	PaidAt        *string `json:"paid_at"`
	CustomerEmail string  `json:"customer_email"`
	LineItems     []line  `json:"line_items"`
}

func body(extra string) string {
	b := `{"title":"Website work","customer_name":"Ada Obi","customer_email":"ada@example.test","line_items":[{"description":"Design","quantity":2,"unit_price":49.99,"tax_type":"percentage","tax_rate":7.5}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func (e env) create(t *testing.T, key, b string) invoice {
	t.Helper()
	var inv invoice
	e.srv.Must(t, 201, "POST", "/v1/invoices", key, b).Decode(t, &inv)
	return inv
}

func TestCreateTotalsByHand(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var prod struct{ ID string }
	// product: 25.00 each, fixed discount 1.00 per unit, 10% tax
	e.srv.Must(t, 201, "POST", "/v1/products", e.a.SandboxKey, `{"name":"Widget","price":25,"discount_type":"fixed","discount":1,"tax_type":"percentage","tax_rate":10}`).Decode(t, &prod)
	inv := e.create(t, e.a.SandboxKey, `{"title":"Order","customer_name":"Ada","customer_email":"ada@example.test","currency":"NGN",
		"issue_date":"2030-01-02","due_date":"2030-02-01","notes":"thanks","line_items":[
		{"description":"Design","quantity":2,"unit_price":49.99,"tax_type":"percentage","tax_rate":7.5},
		{"description":"Hosting","quantity":4,"unit_price":"25.00","discount_type":"fixed","discount":15,"tax_type":"percentage","tax_rate":7.5},
		{"description":"Setup","quantity":1,"unit_price":10,"discount_type":"percentage","discount":10,"tax_type":"fixed","tax_rate":0.5},
		{"product_id":"`+prod.ID+`","quantity":3},
		{"description":"Free sample","quantity":1,"unit_price":0}]}`)
	// by hand: 99.98 + 7.50 = 107.48; 100.00 - 15.00 = 85.00 + 6.38 = 91.38; 10.00 - 1.00 + 0.50 = 9.50;
	// product: 75.00 - 3.00 = 72.00 + 7.20 = 79.20; 0.00. Sum 287.56.
	wantLines := []float64{107.48, 91.38, 9.50, 79.20, 0}
	for i, l := range inv.LineItems {
		if l.Total != wantLines[i] {
			t.Errorf("line %d total %v, want %v", i, l.Total, wantLines[i])
		}
	}
	if inv.TotalAmount != 287.56 || inv.Status != "draft" || inv.InvoiceNumber != "INV-000001" || inv.IssueDate != "2030-01-02" || *inv.DueDate != "2030-02-01" {
		t.Fatalf("%+v", inv)
	}
	if inv.LineItems[3].Description != "Widget" || inv.LineItems[3].UnitPrice != 25 || *inv.LineItems[3].ProductID != prod.ID {
		t.Fatalf("product line %+v", inv.LineItems[3])
	}

	// adding and removing lines recalculates
	var l line
	e.srv.Must(t, 201, "POST", "/v1/invoices/"+inv.ID+"/line-items", e.a.SandboxKey, `{"description":"Extra","quantity":3,"unit_price":0.33,"tax_type":"percentage","tax_rate":12.5}`).Decode(t, &l)
	if l.Total != 1.11 { // 0.99 + 0.12375 -> 0.12
		t.Fatalf("new line %+v", l)
	}
	var got invoice
	e.srv.Must(t, 200, "GET", "/v1/invoices/"+inv.ID, e.a.SandboxKey, nil).Decode(t, &got)
	if got.TotalAmount != 288.67 || len(got.LineItems) != 6 {
		t.Fatalf("after add: %v", got.TotalAmount)
	}
	e.srv.Must(t, 200, "DELETE", "/v1/invoices/"+inv.ID+"/line-items/"+inv.LineItems[0].ID, e.a.SandboxKey, nil).Decode(t, &got)
	if got.TotalAmount != 181.19 || len(got.LineItems) != 5 {
		t.Fatalf("after remove: %v", got.TotalAmount)
	}
	e.srv.Must(t, 404, "DELETE", "/v1/invoices/"+inv.ID+"/line-items/"+inv.LineItems[0].ID, e.a.SandboxKey, nil)

	// inactive product -> 422 PRODUCT_INACTIVE, on create and on add
	e.srv.Must(t, 200, "PATCH", "/v1/products/"+prod.ID, e.a.SandboxKey, `{"status":"archived"}`)
	r := e.srv.Must(t, 422, "POST", "/v1/invoices/"+inv.ID+"/line-items", e.a.SandboxKey, `{"product_id":"`+prod.ID+`","quantity":1}`)
	if r.Message != "PRODUCT_INACTIVE" {
		t.Fatal(r)
	}
	r = e.srv.Must(t, 422, "POST", "/v1/invoices", e.a.SandboxKey, `{"title":"x","customer_name":"y","customer_email":"a@b.test","line_items":[{"product_id":"`+prod.ID+`","quantity":1}]}`)
	if r.Message != "PRODUCT_INACTIVE" {
		t.Fatal(r)
	}
}

func TestRemovingTheLastLineIsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	inv := e.create(t, e.a.SandboxKey, body(""))
	r := e.srv.Must(t, 422, "DELETE", "/v1/invoices/"+inv.ID+"/line-items/"+inv.LineItems[0].ID, e.a.SandboxKey, nil)
	if r.Message != "INVALID_STATE" {
		t.Fatal(r)
	}
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cases := []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty", `{}`, []string{"customer_email", "customer_name", "line_items", "title"}},
		{"bad email", body(`"customer_email":"nope"`), []string{"customer_email"}},
		{"title too long", body(`"title":"` + strings.Repeat("t", 256) + `"`), []string{"title"}},
		{"name too long", body(`"customer_name":"` + strings.Repeat("n", 256) + `"`), []string{"customer_name"}},
		{"notes too long", body(`"notes":"` + strings.Repeat("n", 2001) + `"`), []string{"notes"}},
		{"currency", body(`"currency":"GBP"`), []string{"currency"}},
		{"dates", body(`"issue_date":"02/01/2030","due_date":"2030-13-01"`), []string{"due_date", "issue_date"}},
		{"due before issue", body(`"issue_date":"2030-01-02","due_date":"2030-01-01"`), []string{"due_date"}},
		{"line fields", `{"title":"a","customer_name":"b","customer_email":"c@d.test","line_items":[{"quantity":0,"unit_price":-1},{"description":"` + strings.Repeat("d", 501) + `","quantity":1,"unit_price":1.001,"tax_type":"percentage"}]}`,
			[]string{"line_items[0].description", "line_items[0].quantity", "line_items[0].unit_price", "line_items[1].description", "line_items[1].tax_rate", "line_items[1].unit_price"}},
		{"wrong json type", body(`"due_date":5`), []string{"due_date"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.srv.Must(t, 400, "POST", "/v1/invoices", e.a.SandboxKey, c.body)
			got := r.Fields()
			sort.Strings(got)
			if !slices.Equal(got, c.fields) {
				t.Fatalf("fields %v, want %v", got, c.fields)
			}
		})
	}
	inv := e.create(t, e.a.SandboxKey, body(""))
	for _, b := range []string{`{"quantity":1}`, `{"description":"x","unit_price":1}`, `{"description":"x","quantity":1,"unit_price":1,"discount_type":"fixed"}`} {
		e.srv.Must(t, 400, "POST", "/v1/invoices/"+inv.ID+"/line-items", e.a.SandboxKey, b)
	}
	for _, b := range []string{`{"status":"paid"}`, `{"status":"overdue"}`, `{"customer_email":"bad"}`, `{"title":null}`, `{"due_date":"tomorrow"}`} {
		e.srv.Must(t, 400, "PATCH", "/v1/invoices/"+inv.ID, e.a.SandboxKey, b)
	}
}

func (e env) status(t *testing.T, id string) invoice {
	t.Helper()
	var inv invoice
	e.srv.Must(t, 200, "GET", "/v1/invoices/"+id, e.a.SandboxKey, nil).Decode(t, &inv)
	return inv
}

func (e env) markPaid(t *testing.T, id string) {
	t.Helper()
	invID := mustUUID(t, id)
	err := postgres.InTx(context.Background(), e.pool, func(tx pgx.Tx) error {
		_, err := pi.MarkPaid(context.Background(), tx, payments.Tenant{MerchantID: e.a.ID, Environment: "sandbox"}, invID, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateTable walks the spec's invoice state table row by row.
func TestStateTable(t *testing.T) {
	t.Parallel()
	e := setup(t)
	key := e.a.SandboxKey

	t.Run("draft -> send -> pending, the email carries the pay link", func(t *testing.T) {
		inv := e.create(t, key, body(""))
		r := e.srv.Must(t, 200, "POST", "/v1/invoices/"+inv.ID+"/send", key, nil)
		var got invoice
		r.Decode(t, &got)
		if got.Status != "pending" {
			t.Fatal(got.Status)
		}
		var args string
		if err := e.pool.QueryRow(context.Background(), `select args::text from river_job where kind='invoice_mail'`).Scan(&args); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(args, "https://pay.example/pay/inv-000001-") {
			t.Fatalf("mail job %s", args)
		}
		// a reminder: sent again, stays pending, same link
		e.srv.Must(t, 200, "POST", "/v1/invoices/"+inv.ID+"/send", key, nil)
		var n, links int
		_ = e.pool.QueryRow(context.Background(), `select count(*) from river_job where kind='invoice_mail'`).Scan(&n)
		_ = e.pool.QueryRow(context.Background(), `select count(*) from checkout_links where invoice_id=$1`, inv.ID).Scan(&links)
		if n != 2 || links != 1 {
			t.Fatalf("mails %d links %d", n, links)
		}
		// the mail renders the invoice
		m := pi.RenderMail("Test Merchant", pi.Invoice{Number: 1, Title: "Website work", CustomerName: "Ada", CustomerEmail: "ada@example.test", Currency: "NGN", TotalAmount: 10748, Tenant: payments.Tenant{Environment: "sandbox"}}, "https://pay.example/pay/x")
		if !strings.Contains(m.Text, "INV-000001") || !strings.Contains(m.Text, "NGN 107.48") || !strings.Contains(m.Text, "https://pay.example/pay/x") {
			t.Fatal(m.Text)
		}
	})
	t.Run("draft or pending -> PATCH status draft, pending, canceled", func(t *testing.T) {
		inv := e.create(t, key, body(""))
		for _, st := range []string{"pending", "draft", "pending", "canceled"} {
			var got invoice
			e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"`+st+`"}`).Decode(t, &got)
			if got.Status != st {
				t.Fatalf("%s: %s", st, got.Status)
			}
		}
	})
	t.Run("pending -> paid through a checkout payment only; paid_at set", func(t *testing.T) {
		inv := e.create(t, key, body(""))
		e.srv.Must(t, 400, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"paid"}`)
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"pending"}`)
		e.markPaid(t, inv.ID)
		got := e.status(t, inv.ID)
		if got.Status != "paid" || got.PaidAt == nil {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("pending -> overdue when due_date passes (durable job)", func(t *testing.T) {
		inv := e.create(t, key, body(`"issue_date":"2030-01-01","due_date":"2030-01-10"`))
		e.srv.Must(t, 200, "POST", "/v1/invoices/"+inv.ID+"/send", key, nil)
		var at time.Time
		if err := e.pool.QueryRow(context.Background(), `select scheduled_at from river_job where kind='invoice_overdue' and args->>'invoice_id' = $1`, inv.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		if !at.Equal(time.Date(2030, 1, 11, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("scheduled at %v", at)
		}
		id := mustUUID(t, inv.ID)
		// on the due date itself it is not overdue yet
		if err := pi.MarkOverdue(context.Background(), e.pool, id, time.Date(2030, 1, 10, 23, 59, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, inv.ID).Status; s != "pending" {
			t.Fatal(s)
		}
		if err := pi.MarkOverdue(context.Background(), e.pool, id, at); err != nil {
			t.Fatal(err)
		}
		if s := e.status(t, inv.ID).Status; s != "overdue" {
			t.Fatal(s)
		}
		// a draft with a past due date is not made overdue
		d := e.create(t, key, body(`"issue_date":"2020-01-01","due_date":"2020-01-10"`))
		_ = pi.MarkOverdue(context.Background(), e.pool, mustUUID(t, d.ID), time.Now())
		if s := e.status(t, d.ID).Status; s != "draft" {
			t.Fatal(s)
		}
	})
	t.Run("PATCH only on draft and pending", func(t *testing.T) {
		pend := e.create(t, key, body(""))
		var got invoice
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+pend.ID, key, `{"status":"pending"}`)
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+pend.ID, key, `{"title":"New title","notes":"n","due_date":"2099-01-01"}`).Decode(t, &got)
		if got.Notes == nil || got.DueDate == nil {
			t.Fatal("not set")
		}
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+pend.ID, key, `{"notes":null,"due_date":null}`).Decode(t, &got)
		if got.Notes != nil || got.DueDate != nil || got.Status != "pending" {
			t.Fatalf("%+v", got)
		}
		paid := e.create(t, key, body(""))
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+paid.ID, key, `{"status":"pending"}`)
		e.markPaid(t, paid.ID)
		for path, code := range map[string]string{paid.ID: "INVOICE_PAID"} {
			if r := e.srv.Must(t, 422, "PATCH", "/v1/invoices/"+path, key, `{"title":"x"}`); r.Message != code {
				t.Fatal(r)
			}
			if r := e.srv.Must(t, 422, "POST", "/v1/invoices/"+path+"/line-items", key, `{"description":"x","quantity":1,"unit_price":1}`); r.Message != code {
				t.Fatal(r)
			}
			if r := e.srv.Must(t, 422, "POST", "/v1/invoices/"+path+"/send", key, nil); r.Message != code {
				t.Fatal(r)
			}
		}
		canceled := e.create(t, key, body(""))
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+canceled.ID, key, `{"status":"canceled"}`)
		if r := e.srv.Must(t, 422, "PATCH", "/v1/invoices/"+canceled.ID, key, `{"status":"draft"}`); r.Message != "INVALID_STATE" {
			t.Fatal(r)
		}
		if r := e.srv.Must(t, 422, "POST", "/v1/invoices/"+canceled.ID+"/send", key, nil); r.Message != "INVALID_STATE" {
			t.Fatal(r)
		}
	})
	t.Run("DELETE any except paid", func(t *testing.T) {
		for _, st := range []string{"draft", "pending", "canceled"} {
			inv := e.create(t, key, body(""))
			e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"`+st+`"}`)
			e.srv.Must(t, 200, "DELETE", "/v1/invoices/"+inv.ID, key, nil)
			e.srv.Must(t, 404, "GET", "/v1/invoices/"+inv.ID, key, nil)
		}
		inv := e.create(t, key, body(""))
		e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+inv.ID, key, `{"status":"pending"}`)
		e.markPaid(t, inv.ID)
		if r := e.srv.Must(t, 422, "DELETE", "/v1/invoices/"+inv.ID, key, nil); r.Message != "INVOICE_PAID" {
			t.Fatal(r)
		}
	})
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestListSearchAndTenancy(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.create(t, e.a.SandboxKey, body(`"customer_name":"Chidi Okeke","customer_email":"chidi@example.test"`))
	e.create(t, e.a.SandboxKey, body(`"customer_name":"Bola","customer_email":"bola@shop.test"`))
	third := e.create(t, e.a.SandboxKey, body(""))
	e.srv.Must(t, 200, "PATCH", "/v1/invoices/"+third.ID, e.a.SandboxKey, `{"status":"pending"}`)
	type page struct {
		Items []invoice
		Meta  struct {
			Total int `json:"total"`
		}
	}
	for q, want := range map[string]int{"search=chidi": 1, "search=SHOP.TEST": 1, "search=INV-000003": 1, "search=000": 3, "status=pending": 1, "status=draft&limit=1": 2} {
		var pg page
		e.srv.Must(t, 200, "GET", "/v1/invoices?"+q, e.a.SandboxKey, nil).Decode(t, &pg)
		if pg.Meta.Total != want {
			t.Errorf("%s: %d, want %d", q, pg.Meta.Total, want)
		}
	}
	e.srv.Must(t, 400, "GET", "/v1/invoices?status=lost", e.a.SandboxKey, nil)
	e.srv.Must(t, 400, "GET", "/v1/invoices?limit=101", e.a.SandboxKey, nil)

	for _, key := range []string{e.b.SandboxKey, e.a.LiveKey} {
		e.srv.Must(t, 404, "GET", "/v1/invoices/"+third.ID, key, nil)
		e.srv.Must(t, 404, "PATCH", "/v1/invoices/"+third.ID, key, `{"title":"x"}`)
		e.srv.Must(t, 404, "DELETE", "/v1/invoices/"+third.ID, key, nil)
		e.srv.Must(t, 404, "POST", "/v1/invoices/"+third.ID+"/send", key, nil)
		e.srv.Must(t, 404, "POST", "/v1/invoices/"+third.ID+"/line-items", key, `{"description":"x","quantity":1,"unit_price":1}`)
		e.srv.Must(t, 404, "DELETE", "/v1/invoices/"+third.ID+"/line-items/"+third.LineItems[0].ID, key, nil)
		var pg page
		e.srv.Must(t, 200, "GET", "/v1/invoices", key, nil).Decode(t, &pg)
		if pg.Meta.Total != 0 {
			t.Fatal("another tenant's invoices listed")
		}
	}
	// numbering is per merchant and environment
	if inv := e.create(t, e.a.LiveKey, body("")); inv.InvoiceNumber != "INV-000001" {
		t.Fatal(inv.InvoiceNumber)
	}
	if inv := e.create(t, e.b.SandboxKey, body("")); inv.InvoiceNumber != "INV-000001" {
		t.Fatal(inv.InvoiceNumber)
	}
}

func TestConcurrentCreationGivesConsecutiveNumbers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 30
	// one creation fails validation in the middle: it must not take a number
	var wg sync.WaitGroup
	numbers := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.srv.Do(t, "POST", "/v1/invoices", e.a.SandboxKey, body(""))
			if r.Status != 201 {
				t.Errorf("%d: %s", i, r)
				return
			}
			var inv invoice
			r.Decode(t, &inv)
			numbers[i] = inv.InvoiceNumber
		}(i)
		if i == n/2 {
			e.srv.Must(t, 400, "POST", "/v1/invoices", e.a.SandboxKey, body(`"customer_email":"bad"`))
		}
	}
	wg.Wait()
	sort.Strings(numbers)
	for i, num := range numbers {
		if want := fmt.Sprintf("INV-%06d", i+1); num != want {
			t.Fatalf("numbers %v: position %d is %s, want %s", numbers, i, num, want)
		}
	}
}
