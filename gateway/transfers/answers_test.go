package transfers_test

import (
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/transfers"
	pt "svc/payments/transfers"
	"svc/persistence/postgres/pgtest"
)

// The transfer routes refuse bad requests word for word as before they shared the generic
// handlers of gateway/api. Every request here is refused before the service is asked (it is
// a nil pointer: reaching it would panic), so what is compared is the edge's own glue: the
// filters, the order of checks, a bad id as the transfer's 404, body validation.
func TestRefusalsWordForWord(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, transfers.New((*pt.Service)(nil), nil))
	m := authtest.New(t, pool)
	r, invalid := gatewaytest.Refused, gatewaytest.Validation
	srv.Refusals(t, m.SandboxKey, []gatewaytest.Refusal{
		r("status", "GET", "/v1/payments/transfers?status=DONE", "", 400,
			invalid+`{"field":"status","message":"must be one of PROCESSING, SETTLED, FAILED"}]}`),
		r("currency", "GET", "/v1/payments/transfers?currency=EUR", "", 400,
			invalid+`{"field":"currency","message":"must be one of NGN, USD"}]}`),
		r("status before currency", "GET", "/v1/payments/transfers?currency=EUR&status=DONE", "", 400,
			invalid+`{"field":"status","message":"must be one of PROCESSING, SETTLED, FAILED"}]}`),
		r("paging before status", "GET", "/v1/payments/transfers?status=DONE&page=0", "", 400,
			invalid+`{"field":"page","message":"must be an integer of at least 1"}]}`),
		r("limit", "GET", "/v1/payments/transfers?limit=101", "", 400,
			invalid+`{"field":"limit","message":"must be an integer from 1 to 100"}]}`),
		r("id", "GET", "/v1/payments/transfers/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"transfer not found"}`),
		r("empty body", "POST", "/v1/payments/transfers", `{}`, 400,
			invalid+`{"field":"currency","message":"is required"},{"field":"amount","message":"is required"},{"field":"reference","message":"is required"},{"field":"recipient_id","message":"exactly one of recipient_id and destination must be given"}]}`),
		r("body", "POST", "/v1/payments/transfers", `{"currency":"EUR","amount":"1.001","reference":"a","recipient_id":"r","on_behalf_of":{"customer_id":"c"}}`, 400,
			invalid+`{"field":"currency","message":"must be NGN or USD"},{"field":"recipient_id","message":"must be a UUID"},{"field":"on_behalf_of.customer_id","message":"must be a UUID"}]}`),
		r("destination", "POST", "/v1/payments/transfers", `{"currency":"NGN","amount":"1","reference":"a","destination":{"type":"BANK_ACCOUNT"}}`, 400,
			invalid+`{"field":"destination.bank_account","message":"is required"}]}`),
		r("unknown field ignored", "POST", "/v1/payments/transfers", `{"kind":"x"}`, 400,
			invalid+`{"field":"currency","message":"is required"},{"field":"amount","message":"is required"},{"field":"reference","message":"is required"},{"field":"recipient_id","message":"exactly one of recipient_id and destination must be given"}]}`),
		r("not json", "POST", "/v1/payments/transfers", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("amount as a number", "POST", "/v1/payments/transfers", `{"currency":"NGN","amount":1}`, 400,
			invalid+`{"field":"amount","message":"must be a string"}]}`),
	})
}
