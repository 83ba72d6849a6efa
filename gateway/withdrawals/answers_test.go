package withdrawals_test

import (
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/withdrawals"
	pw "svc/payments/withdrawals"
	"svc/persistence/postgres/pgtest"
)

// The withdrawal routes refuse bad requests word for word as before they shared the generic
// handlers of gateway/api. Every request here is refused before the service is asked (it is
// a nil pointer: reaching it would panic), so what is compared is the edge's own glue: the
// filters, the order of checks, a bad id as the withdrawal's 404, body validation.
func TestRefusalsWordForWord(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, withdrawals.New((*pw.Service)(nil), nil))
	m := authtest.New(t, pool)
	r, invalid := gatewaytest.Refused, gatewaytest.Validation
	srv.Refusals(t, m.SandboxKey, []gatewaytest.Refusal{
		r("status", "GET", "/v1/payments/withdrawals?status=DONE", "", 400,
			invalid+`{"field":"status","message":"must be one of PENDING, SUBMITTED, SETTLED, FAILED, PROCESSING"}]}`),
		r("paging before status", "GET", "/v1/payments/withdrawals?status=DONE&page=0", "", 400,
			invalid+`{"field":"page","message":"must be an integer of at least 1"}]}`),
		r("limit", "GET", "/v1/payments/withdrawals?limit=0", "", 400,
			invalid+`{"field":"limit","message":"must be an integer from 1 to 100"}]}`),
		r("id", "GET", "/v1/payments/withdrawals/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"withdrawal not found"}`),
		r("empty body", "POST", "/v1/payments/withdrawals", `{}`, 400,
			invalid+`{"field":"amount_usd","message":"is required"},{"field":"token","message":"is required"},{"field":"chain","message":"is required"},{"field":"destination_address","message":"is required"}]}`),
		r("body", "POST", "/v1/payments/withdrawals", `{"amount_usd":"1.0000001","token":"USDC","chain":"BITCOIN","destination_address":"x"}`, 400,
			invalid+`{"field":"amount_usd","message":"must be a decimal string above zero with at most 6 decimal places"},{"field":"token","message":"must be USDT"},{"field":"chain","message":"must be one of APTOS, BASE, CELO, ETHEREUM, POLYGON, SOLANA, TRON"}]}`),
		r("address", "POST", "/v1/payments/withdrawals", `{"amount_usd":"1","token":"USDT","chain":"BASE","destination_address":"0x12"}`, 400,
			invalid+`{"field":"destination_address","message":"must be a BASE address: 0x followed by 40 hex digits"}]}`),
		r("unknown field ignored", "POST", "/v1/payments/withdrawals", `{"kind":"x"}`, 400,
			invalid+`{"field":"amount_usd","message":"is required"},{"field":"token","message":"is required"},{"field":"chain","message":"is required"},{"field":"destination_address","message":"is required"}]}`),
		r("not json", "POST", "/v1/payments/withdrawals", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("amount as a number", "POST", "/v1/payments/withdrawals", `{"amount_usd":5}`, 400,
			invalid+`{"field":"amount_usd","message":"must be a string"}]}`),
	})
}
