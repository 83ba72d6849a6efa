package invoices_test

import (
	"testing"
)

// The commerce routes answer their refusals word for word as before they shared the generic
// handlers of gateway/api: the status filters name their choices, bad ids are the resource's
// 404, a deletion answers its id and sentence.
func TestCommerceAnswersWordForWord(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const validation = `{"success":false,"message":"VALIDATION_ERROR","detail":"request validation failed","errors":[`
	for _, c := range []struct {
		name, method, path string
		status             int
		body               string
	}{
		{"invoice status", "GET", "/v1/invoices?status=lost", 400,
			validation + `{"field":"status","message":"must be one of [draft pending paid overdue canceled]"}]}`},
		{"product status", "GET", "/v1/products?status=lost", 400,
			validation + `{"field":"status","message":"must be one of [active inactive archived]"}]}`},
		{"link status", "GET", "/v1/checkout-links?status=lost", 400,
			validation + `{"field":"status","message":"must be one of [active inactive]"}]}`},
		{"paging before status", "GET", "/v1/invoices?status=lost&limit=101", 400,
			validation + `{"field":"limit","message":"must be an integer from 1 to 100"}]}`},
		{"invoice id not a UUID", "GET", "/v1/invoices/x", 404, `{"success":false,"message":"NOT_FOUND","detail":"invoice not found"}`},
		{"product id not a UUID", "DELETE", "/v1/products/x", 404, `{"success":false,"message":"NOT_FOUND","detail":"product not found"}`},
		{"link id not a UUID", "PATCH", "/v1/checkout-links/x", 404, `{"success":false,"message":"NOT_FOUND","detail":"checkout link not found"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.srv.Do(t, c.method, c.path, e.a.SandboxKey, nil)
			if r.Status != c.status || string(r.Body) != c.body {
				t.Fatalf("answered %s\nwant %d %s", r, c.status, c.body)
			}
		})
	}
	inv := e.create(t, e.a.SandboxKey, body(""))
	r := e.srv.Must(t, 200, "DELETE", "/v1/invoices/"+inv.ID, e.a.SandboxKey, nil)
	if want := `{"success":true,"data":{"id":"` + inv.ID + `"},"message":"invoice deleted"}`; string(r.Body) != want {
		t.Fatalf("delete answered %s, want %s", r.Body, want)
	}
}
