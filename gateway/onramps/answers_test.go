package onramps_test

import (
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/balance"
	"svc/gateway/deposits"
	"svc/gateway/gatewaytest"
	"svc/gateway/offramps"
	"svc/gateway/onramps"
	"svc/gateway/recipients"
	"svc/gateway/virtualaccounts"
	"svc/gateway/webhooks"
	pb "svc/payments/balance"
	pd "svc/payments/deposits"
	pon "svc/payments/onramps"
	pva "svc/payments/virtualaccounts"
	pwh "svc/payments/webhooks"
	"svc/persistence/postgres/pgtest"
)

// The payment routes refuse bad requests word for word as before they shared the generic
// handlers of gateway/api. Every request here is refused before its service is asked (the
// services are nil pointers: reaching one would panic), so what is compared is the edge's own glue:
// status filters, the order of checks, bad ids as the resource's 404, body validation.
func TestRefusalsWordForWord(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, onramps.New((*pon.Service)(nil), nil), deposits.New((*pd.Service)(nil), nil),
		balance.New((*pb.Service)(nil), nil), virtualaccounts.New((*pva.Service)(nil), nil), offramps.New(nil, nil, nil),
		recipients.New(nil, nil), webhooks.New((*pwh.Service)(nil)))
	m := authtest.New(t, pool)
	const validation = `{"success":false,"message":"VALIDATION_ERROR","detail":"request validation failed","errors":[`
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"onramp status", "GET", "/v1/payments/onramps?status=PAID", "", 400,
			validation + `{"field":"status","message":"must be one of [ACTIVE EXPIRED INACTIVE]"}]}`},
		{"onramp paging before status", "GET", "/v1/payments/onramps?status=PAID&page=0", "", 400,
			validation + `{"field":"page","message":"must be an integer of at least 1"}]}`},
		{"onramp id", "GET", "/v1/payments/onramps/nope", "", 404,
			`{"success":false,"message":"NOT_FOUND","detail":"onramp not found"}`},
		{"onramp body", "POST", "/v1/payments/onramps", `{"type":"TEMPORARY","rate_id":"x"}`, 400,
			validation + `{"field":"rate_id","message":"must be a rate id (UUID)"},{"field":"amount","message":"is required for a TEMPORARY onramp"}]}`},
		{"onramp unknown field", "POST", "/v1/payments/onramps", `{"kind":"TEMPORARY"}`, 400, ""},
		{"deposit id", "GET", "/v1/payments/deposits/nope", "", 404,
			`{"success":false,"message":"NOT_FOUND","detail":"deposit not found"}`},
		{"deposit status", "GET", "/v1/payments/deposits?status=LOST", "", 400,
			validation + `{"field":"status","message":"must be one of PENDING, COMPLETED, PENDING_FX, PENDING_WITHDRAWAL, SETTLED, FAILED, FLAGGED, REVERSED"}]}`},
		{"balance transfer status", "GET", "/v1/payments/merchant/balance/transfers?status=DONE", "", 400,
			validation + `{"field":"status","message":"must be one of [PENDING COMPLETED FAILED]"}]}`},
		{"virtual account id", "GET", "/v1/virtual-accounts/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"virtual account not found"}`},
		{"customer of a virtual account", "GET", "/v1/customers/nope/ngn-virtual-account", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"virtual account status", "GET", "/v1/virtual-accounts?status=gone", "", 400,
			validation + `{"field":"status","message":"must be one of [active inactive expired]"}]}`},
		{"offramp id", "GET", "/v1/payments/offramps/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"offramp not found"}`},
		{"offramp body", "POST", "/v1/payments/offramps", `{"customer":{"customer_id":"x"}}`, 400,
			validation + `{"field":"customer.customer_id","message":"must be a UUID"},{"field":"type","message":"is required"},{"field":"chain","message":"is required"},{"field":"asset","message":"is required"},{"field":"settlement","message":"is required"}]}`},
		{"recipient id", "GET", "/v1/recipients/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"recipient not found"}`},
		{"recipient body", "POST", "/v1/recipients", `{"type":"BANK","customer_id":"x"}`, 400,
			validation + `{"field":"customer_id","message":"must be a UUID"}]}`},
		{"webhook endpoint id", "GET", "/v1/webhooks/endpoints/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"webhook endpoint not found"}`},
		{"webhook endpoint delete", "DELETE", "/v1/webhooks/endpoints/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"webhook endpoint not found"}`},
		{"webhook endpoint body", "POST", "/v1/webhooks/endpoints", `{"events":[]}`, 400,
			validation + `{"field":"url","message":"is required"}]}`},
		{"webhook endpoint patch", "PATCH", "/v1/webhooks/endpoints/nope", `{"url":1}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"webhook endpoint not found"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			r := srv.Do(t, c.method, c.path, m.SandboxKey, body)
			if r.Status != c.status || c.want != "" && string(r.Body) != c.want {
				t.Fatalf("answered %s\nwant %d %s", r, c.status, c.want)
			}
		})
	}
}
