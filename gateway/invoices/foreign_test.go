package invoices_test

import (
	"testing"
)

// Another merchant's product or invoice is 404 NOT_FOUND wherever its id is sent in a body
// (invoice lines, checkout-link lines, a link's invoice_id), exactly like an id that does
// not exist and like a foreign id in a path: nothing tells a caller it exists.
func TestForeignProductAndInvoiceIdsAre404(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var prod struct{ ID string }
	e.srv.Must(t, 201, "POST", "/v1/products", e.b.SandboxKey, `{"name":"Poster","price":100,"currency":"NGN"}`).Decode(t, &prod)
	theirs := e.create(t, e.b.SandboxKey, body(""))
	mine := e.create(t, e.a.SandboxKey, body(`"currency":"NGN"`))
	const unknown = "0190d6a0-0000-7000-8000-000000000000"

	for _, c := range []struct{ name, method, path, body string }{
		{"foreign product on a new invoice", "POST", "/v1/invoices", `{"title":"x","customer_name":"y","customer_email":"a@b.test","currency":"NGN","line_items":[{"product_id":"` + prod.ID + `","quantity":1}]}`},
		{"unknown product on a new invoice", "POST", "/v1/invoices", `{"title":"x","customer_name":"y","customer_email":"a@b.test","currency":"NGN","line_items":[{"product_id":"` + unknown + `","quantity":1}]}`},
		{"foreign product added to an invoice", "POST", "/v1/invoices/" + mine.ID + "/line-items", `{"product_id":"` + prod.ID + `","quantity":1}`},
		{"foreign product on a link", "POST", "/v1/checkout-links", `{"title":"x","currency":"NGN","line_items":[{"product_id":"` + prod.ID + `","quantity":1}]}`},
		{"foreign invoice on a link", "POST", "/v1/checkout-links", `{"title":"x","invoice_id":"` + theirs.ID + `"}`},
		{"unknown invoice on a link", "POST", "/v1/checkout-links", `{"title":"x","invoice_id":"` + unknown + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.srv.Do(t, c.method, c.path, e.a.SandboxKey, c.body)
			if r.Status != 404 || r.Message != "NOT_FOUND" {
				t.Fatalf("%s, want 404 NOT_FOUND", r)
			}
		})
	}
	// and nothing was written
	var got invoice
	e.srv.Must(t, 200, "GET", "/v1/invoices/"+mine.ID, e.a.SandboxKey, nil).Decode(t, &got)
	if len(got.LineItems) != 1 {
		t.Fatalf("lines %d", len(got.LineItems))
	}
}
