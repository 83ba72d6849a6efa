package customers_test

import (
	"testing"

	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	"svc/payments/customers"
	"svc/persistence/postgres/pgtest"
)

// The customer routes refuse bad requests word for word as before they shared the generic
// handlers of gateway/api. Every request here is refused before the service is asked (it is
// a nil pointer: reaching it would panic), so what is compared is the edge's own glue: the
// filters, the order of checks, a bad id as the customer's 404, body validation.
func TestRefusalsWordForWord(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool, gwcustomers.New((*customers.Service)(nil), nil), gwcustomers.NewKYC((*customers.Service)(nil), nil))
	m := authtest.New(t, pool)
	const validation = `{"success":false,"message":"VALIDATION_ERROR","detail":"request validation failed","errors":[`
	const id = "/v1/customers/0b6e2a56-8d8f-4a4e-9c49-4d1f2f8a9e01"
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"create empty", "POST", "/v1/customers", `{}`, 400,
			validation + `{"field":"email","message":"is required"},{"field":"first_name","message":"is required"},{"field":"last_name","message":"is required"}]}`},
		{"create body", "POST", "/v1/customers", `{"email":"nope","first_name":"","last_name":"x"}`, 400,
			validation + `{"field":"email","message":"must be a valid email address"},{"field":"first_name","message":"is required"}]}`},
		{"create not json", "POST", "/v1/customers", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`},
		{"create email as a number", "POST", "/v1/customers", `{"email":1}`, 400,
			validation + `{"field":"email","message":"must be a string"}]}`},
		{"list kyc tier", "GET", "/v1/customers?kyc_tier=TIER_9", "", 400,
			validation + `{"field":"kyc_tier","message":"must be one of [TIER_0 TIER_1 TIER_2]"}]}`},
		{"list cursor", "GET", "/v1/customers?cursor=bm9wZQ", "", 400,
			validation + `{"field":"cursor","message":"is not a cursor returned by this API"}]}`},
		{"list limit", "GET", "/v1/customers?limit=201", "", 400,
			validation + `{"field":"limit","message":"must be an integer from 1 to 200"}]}`},
		{"get id", "GET", "/v1/customers/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"patch id before body", "PATCH", "/v1/customers/nope", `{not json`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"patch empty", "PATCH", id, `{}`, 400,
			validation + `{"field":"first_name","message":"at least one of first_name and last_name is required"}]}`},
		{"patch body", "PATCH", id, `{"first_name":""}`, 400,
			validation + `{"field":"first_name","message":"is required"}]}`},
		{"patch not json", "PATCH", id, `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`},
		{"tier1 id", "POST", "/v1/customers/nope/tier1-verification", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"tier1 empty", "POST", id + "/tier1-verification", `{}`, 400,
			validation + `{"field":"bvn","message":"is required"},{"field":"image_url","message":"is required"}]}`},
		{"tier1 body", "POST", id + "/tier1-verification", `{"bvn":"123","image_url":"ftp://x"}`, 400,
			validation + `{"field":"bvn","message":"must be exactly 11 digits"},{"field":"image_url","message":"must be an http(s) URL"}]}`},
		{"tier2 id", "POST", "/v1/customers/nope/tier2-verification", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"tier2 empty", "POST", id + "/tier2-verification", `{}`, 400,
			validation + `{"field":"residential_address","message":"is required"},{"field":"nationality","message":"is required"},{"field":"birth_date","message":"is required"},{"field":"identifying_information","message":"must list at least one identity document"},{"field":"source_of_funds","message":"is required"},{"field":"account_purpose","message":"is required"},{"field":"expected_monthly_payments_usd","message":"is required"},{"field":"acting_as_intermediary","message":"is required"},{"field":"employment_status","message":"is required"}]}`},
		{"tier2 not json", "POST", id + "/tier2-verification", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`},
		{"initiate id", "POST", "/v1/customers/nope/kyc/initiate", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"initiate body", "POST", id + "/kyc/initiate", `{"bvn":"1","redirect_url":"x","bank_account":{}}`, 400,
			validation + `{"field":"bvn","message":"must be exactly 11 digits (tier 1 only)"},{"field":"redirect_url","message":"must be an http(s) URL"},{"field":"bank_account.bank_code","message":"is required"},{"field":"bank_account.account_number","message":"is required"}]}`},
		{"initiate tier 2 body", "POST", id + "/tier2-kyc/initiate", `{"bvn":"12345678901","middle_name":"A"}`, 400,
			validation + `{"field":"bvn","message":"must be exactly 11 digits (tier 1 only)"},{"field":"middle_name","message":"is for tier 1 only"}]}`},
		{"wallet id", "POST", "/v1/customers/nope/crypto-wallet", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"wallet empty", "POST", id + "/crypto-wallet", `{}`, 400,
			validation + `{"field":"chain","message":"is required"},{"field":"asset","message":"is required"},{"field":"address","message":"is required"}]}`},
		{"wallet body", "POST", id + "/crypto-wallet", `{"chain":"BASE","asset":"DAI","address":"0x12","label":""}`, 400,
			validation + `{"field":"asset","message":"must be one of [USDC USDT]"},{"field":"address","message":"must be a BASE address: 0x followed by 40 hex digits"},{"field":"label","message":"is required"}]}`},
		{"wallet not json", "POST", id + "/crypto-wallet", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`},
		{"wallets id", "GET", "/v1/customers/nope/crypto-wallets", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"wallets page", "GET", id + "/crypto-wallets?page=0", "", 400,
			validation + `{"field":"page","message":"must be an integer of at least 1"}]}`},
		{"wallets limit", "GET", id + "/crypto-wallets?limit=101", "", 400,
			validation + `{"field":"limit","message":"must be an integer from 1 to 100"}]}`},
		{"funding id", "POST", "/v1/customers/nope/crypto-funding", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"funding empty", "POST", id + "/crypto-funding", `{}`, 400,
			validation + `{"field":"chain","message":"is required"},{"field":"asset","message":"is required"}]}`},
		{"funding body", "POST", id + "/crypto-funding", `{"chain":"BITCOIN","asset":"USDT","amount":"0"}`, 400,
			validation + `{"field":"chain","message":"must be one of [APTOS BASE CELO ETHEREUM POLYGON SOLANA TRON]"},{"field":"amount","message":"must be greater than 0"}]}`},
		{"balance id", "GET", "/v1/customers/nope/balance", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"ledger id", "GET", "/v1/customers/nope/ledger", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"verifications id", "GET", "/v1/customers/nope/verifications", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"verification customer id", "GET", "/v1/customers/nope/verifications/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`},
		{"verification id", "GET", id + "/verifications/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"verification not found"}`},
		{"ledger page", "GET", id + "/ledger?page=x", "", 400,
			validation + `{"field":"page","message":"must be an integer of at least 1"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			r := srv.Do(t, c.method, c.path, m.SandboxKey, body)
			if r.Status != c.status || string(r.Body) != c.want || r.Header["Content-Type"] != "application/json" {
				t.Fatalf("answered %s (%s)\nwant %d %s", r, r.Header["Content-Type"], c.status, c.want)
			}
		})
	}
}
