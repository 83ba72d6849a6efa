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
	const id = "/v1/customers/0b6e2a56-8d8f-4a4e-9c49-4d1f2f8a9e01"
	r, invalid := gatewaytest.Refused, gatewaytest.Validation
	srv.Refusals(t, m.SandboxKey, []gatewaytest.Refusal{
		r("create empty", "POST", "/v1/customers", `{}`, 400,
			invalid+`{"field":"email","message":"is required"},{"field":"first_name","message":"is required"},{"field":"last_name","message":"is required"}]}`),
		r("create body", "POST", "/v1/customers", `{"email":"nope","first_name":"","last_name":"x"}`, 400,
			invalid+`{"field":"email","message":"must be a valid email address"},{"field":"first_name","message":"is required"}]}`),
		r("create not json", "POST", "/v1/customers", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("create email as a number", "POST", "/v1/customers", `{"email":1}`, 400,
			invalid+`{"field":"email","message":"must be a string"}]}`),
		r("list kyc tier", "GET", "/v1/customers?kyc_tier=TIER_9", "", 400,
			invalid+`{"field":"kyc_tier","message":"must be one of [TIER_0 TIER_1 TIER_2]"}]}`),
		r("list cursor", "GET", "/v1/customers?cursor=bm9wZQ", "", 400,
			invalid+`{"field":"cursor","message":"is not a cursor returned by this API"}]}`),
		r("list limit", "GET", "/v1/customers?limit=201", "", 400,
			invalid+`{"field":"limit","message":"must be an integer from 1 to 200"}]}`),
		r("get id", "GET", "/v1/customers/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("patch id before body", "PATCH", "/v1/customers/nope", `{not json`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("patch empty", "PATCH", id, `{}`, 400,
			invalid+`{"field":"first_name","message":"at least one of first_name, last_name and metadata is required"}]}`),
		r("patch body", "PATCH", id, `{"first_name":""}`, 400,
			invalid+`{"field":"first_name","message":"is required"}]}`),
		r("patch not json", "PATCH", id, `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("tier1 id", "POST", "/v1/customers/nope/tier1-verification", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("tier1 empty", "POST", id+"/tier1-verification", `{}`, 400,
			invalid+`{"field":"bvn","message":"is required"},{"field":"image_url","message":"is required"}]}`),
		r("tier1 body", "POST", id+"/tier1-verification", `{"bvn":"123","image_url":"ftp://x"}`, 400,
			invalid+`{"field":"bvn","message":"must be exactly 11 digits"},{"field":"image_url","message":"must be an http(s) URL"}]}`),
		r("tier2 id", "POST", "/v1/customers/nope/tier2-verification", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("tier2 empty", "POST", id+"/tier2-verification", `{}`, 400,
			invalid+`{"field":"residential_address","message":"is required"},{"field":"nationality","message":"is required"},{"field":"birth_date","message":"is required"},{"field":"identifying_information","message":"must list at least one identity document"},{"field":"source_of_funds","message":"is required"},{"field":"account_purpose","message":"is required"},{"field":"expected_monthly_payments_usd","message":"is required"},{"field":"acting_as_intermediary","message":"is required"},{"field":"employment_status","message":"is required"}]}`),
		r("tier2 not json", "POST", id+"/tier2-verification", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("initiate id", "POST", "/v1/customers/nope/kyc/initiate", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("initiate body", "POST", id+"/kyc/initiate", `{"bvn":"1","redirect_url":"x","bank_account":{}}`, 400,
			invalid+`{"field":"bvn","message":"must be exactly 11 digits (tier 1 only)"},{"field":"redirect_url","message":"must be an http(s) URL"},{"field":"bank_account.bank_code","message":"is required"},{"field":"bank_account.account_number","message":"is required"}]}`),
		r("initiate tier 2 body", "POST", id+"/tier2-kyc/initiate", `{"bvn":"12345678901","middle_name":"A"}`, 400,
			invalid+`{"field":"bvn","message":"must be exactly 11 digits (tier 1 only)"},{"field":"middle_name","message":"is for tier 1 only"}]}`),
		r("wallet id", "POST", "/v1/customers/nope/crypto-wallet", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("wallet empty", "POST", id+"/crypto-wallet", `{}`, 400,
			invalid+`{"field":"chain","message":"is required"},{"field":"asset","message":"is required"},{"field":"address","message":"is required"}]}`),
		r("wallet body", "POST", id+"/crypto-wallet", `{"chain":"BASE","asset":"DAI","address":"0x12","label":""}`, 400,
			invalid+`{"field":"asset","message":"must be one of [USDC USDT]"},{"field":"address","message":"must be a BASE address: 0x followed by 40 hex digits"},{"field":"label","message":"is required"}]}`),
		r("wallet not json", "POST", id+"/crypto-wallet", `{not json`, 400, `{"success":false,"message":"INVALID_JSON","detail":"malformed JSON at byte 2: invalid character 'n' looking for beginning of object key string"}`),
		r("wallets id", "GET", "/v1/customers/nope/crypto-wallets", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("wallets page", "GET", id+"/crypto-wallets?page=0", "", 400,
			invalid+`{"field":"page","message":"must be an integer of at least 1"}]}`),
		r("wallets limit", "GET", id+"/crypto-wallets?limit=101", "", 400,
			invalid+`{"field":"limit","message":"must be an integer from 1 to 100"}]}`),
		r("funding id", "POST", "/v1/customers/nope/crypto-funding", `{}`, 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("funding empty", "POST", id+"/crypto-funding", `{}`, 400,
			invalid+`{"field":"chain","message":"is required"},{"field":"asset","message":"is required"}]}`),
		r("funding body", "POST", id+"/crypto-funding", `{"chain":"BITCOIN","asset":"USDT","amount":"0"}`, 400,
			invalid+`{"field":"chain","message":"must be one of [APTOS BASE CELO ETHEREUM POLYGON SOLANA TRON]"},{"field":"amount","message":"must be greater than 0"}]}`),
		r("balance id", "GET", "/v1/customers/nope/balance", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("ledger id", "GET", "/v1/customers/nope/ledger", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("verifications id", "GET", "/v1/customers/nope/verifications", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("verification customer id", "GET", "/v1/customers/nope/verifications/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"customer not found"}`),
		r("verification id", "GET", id+"/verifications/nope", "", 404, `{"success":false,"message":"NOT_FOUND","detail":"verification not found"}`),
		r("ledger page", "GET", id+"/ledger?page=x", "", 400,
			invalid+`{"field":"page","message":"must be an integer of at least 1"}]}`),
	})
}
