package recipients_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
)

type recipient struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	CustomerID       *string         `json:"customer_id"`
	BankAccount      map[string]any  `json:"bank_account"`
	CryptoAddress    map[string]any  `json:"crypto_address"`
	USBankAccount    map[string]any  `json:"us_bank_account"`
	SWIFTBankAccount *map[string]any `json:"swift_bank_account"`
	CreatedAt        string          `json:"created_at"`
}

func addr(country string) map[string]any {
	return map[string]any{"line1": "1 Main St", "city": "Lagos", "country": country}
}

// USBank is a valid US bank account destination.
func usBank() map[string]any {
	return map[string]any{"account_owner_name": "Ada Obi", "account_number": "123456789", "routing_number": "021000021",
		"bank_name": "Chase", "account_type": "checking", "payout_scheme": "ach", "address": addr("USA")}
}

func swift() map[string]any {
	return map[string]any{"account_owner_name": "Acme GmbH", "account_owner_type": "business", "account_country": "DEU",
		"iban": "DE89370400440532013000", "bic": "DEUTDEFF", "bank_name": "Deutsche Bank", "category": "supplier",
		"purpose_of_funds": []string{"invoice_for_goods_and_services"}, "short_business_description": "Parts supplier",
		"address": addr("DEU"), "bank_address": addr("DEU")}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for a, b := range m {
		out[a] = b
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func TestRecipientsOfEveryType(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()
	bodies := []map[string]any{
		{"type": "BANK_ACCOUNT", "bank_account": map[string]any{"account_number": "0123456789", "bank_code": "058", "account_name": "Ada Obi"}},
		{"type": "CRYPTO_ADDRESS", "crypto_address": map[string]any{"asset": "USDC", "chain": "ARBITRUM", "address": "0x52908400098527886e0f7030069857d2e4169ee7"}},
		{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": usBank()},
		{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": swift()},
	}
	var ids []string
	for _, b := range bodies {
		var rc recipient
		r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, b).Decode(t, &rc)
		if rc.Type != b["type"] || rc.ID == "" || rc.CreatedAt == "" {
			t.Fatalf("%+v", rc)
		}
		var got recipient
		r.Srv.Must(t, 200, "GET", "/v1/recipients/"+rc.ID, r.M.SandboxKey, nil).Decode(t, &got)
		if got.ID != rc.ID || got.Type != rc.Type {
			t.Fatalf("get %+v", got)
		}
		ids = append(ids, rc.ID)
	}
	var one recipient
	r.Srv.Must(t, 200, "GET", "/v1/recipients/"+ids[3], r.M.SandboxKey, nil).Decode(t, &one)
	if one.SWIFTBankAccount == nil || (*one.SWIFTBankAccount)["iban"] != "DE89370400440532013000" || one.BankAccount != nil || *one.CustomerID != cust {
		t.Fatalf("swift %+v", one)
	}
	var p struct {
		Items []recipient `json:"items"`
		Meta  struct {
			Total int `json:"total"`
		} `json:"meta"`
	}
	r.Srv.Must(t, 200, "GET", "/v1/recipients", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 4 || len(p.Items) != 4 || p.Items[0].ID != ids[3] {
		t.Fatalf("list %+v", p)
	}
	r.Srv.Must(t, 200, "GET", "/v1/recipients?type=CRYPTO_ADDRESS", r.M.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 1 || p.Items[0].ID != ids[1] {
		t.Fatalf("type filter %+v", p)
	}
	r.Srv.Must(t, 200, "GET", "/v1/recipients?customer_id="+cust, r.M.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 2 {
		t.Fatalf("customer filter %+v", p)
	}
	r.Srv.Must(t, 400, "GET", "/v1/recipients?type=WALLET", r.M.SandboxKey, nil)
	r.Srv.Must(t, 400, "GET", "/v1/recipients?customer_id=x", r.M.SandboxKey, nil)

	// Tenancy and environments.
	r.Srv.Must(t, 404, "GET", "/v1/recipients/"+ids[0], r.Other.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/recipients/"+ids[0], r.M.LiveKey, nil)
	r.Srv.Must(t, 404, "DELETE", "/v1/recipients/"+ids[0], r.Other.SandboxKey, nil)
	r.Srv.Must(t, 404, "DELETE", "/v1/recipients/"+ids[0], r.M.LiveKey, nil)
	r.Srv.Must(t, 200, "GET", "/v1/recipients", r.M.LiveKey, nil).Decode(t, &p)
	if len(p.Items) != 0 {
		t.Fatalf("live sees %+v", p)
	}
	// Delete: gone from reads; a second delete is 404.
	r.Srv.Must(t, 200, "DELETE", "/v1/recipients/"+ids[0], r.M.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/recipients/"+ids[0], r.M.SandboxKey, nil)
	r.Srv.Must(t, 404, "DELETE", "/v1/recipients/"+ids[0], r.M.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/recipients/nope", r.M.SandboxKey, nil)
	r.Srv.Must(t, 200, "GET", "/v1/recipients", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 3 {
		t.Fatalf("after delete %+v", p)
	}
}

func TestRecipientCustomerMustBeTheMerchants(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	others := r.Customer(t, r.Other.ID, "sandbox", "x@example.com").String()
	live := r.Customer(t, r.M.ID, "live", "y@example.com").String()
	for _, c := range []string{others, live, uuid.NewString()} {
		res := r.Srv.Must(t, 404, "POST", "/v1/recipients", r.M.SandboxKey, map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": c, "us_bank_account": usBank()})
		if res.Message != "NOT_FOUND" {
			t.Fatalf("%s", res)
		}
	}
}

func TestRecipientValidation(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()
	bank := map[string]any{"account_number": "0123456789", "bank_code": "058"}
	crypto := map[string]any{"asset": "USDT", "chain": "BASE", "address": "0x52908400098527886e0f7030069857d2e4169ee7"}
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"no type", map[string]any{}, []string{"type"}},
		{"unknown type", map[string]any{"type": "PAYPAL"}, []string{"type"}},
		{"bank without object", map[string]any{"type": "BANK_ACCOUNT"}, []string{"bank_account"}},
		{"bank empty object", map[string]any{"type": "BANK_ACCOUNT", "bank_account": map[string]any{}}, []string{"bank_account.account_number", "bank_account.bank_code"}},
		{"bank bad number and code", map[string]any{"type": "BANK_ACCOUNT", "bank_account": map[string]any{"account_number": "12ab", "bank_code": "0"}}, []string{"bank_account.account_number", "bank_account.bank_code"}},
		{"bank with another object", map[string]any{"type": "BANK_ACCOUNT", "bank_account": bank, "crypto_address": crypto}, []string{"crypto_address"}},
		{"crypto on a wallet-only chain", map[string]any{"type": "CRYPTO_ADDRESS", "crypto_address": with(crypto, "chain", "SOLANA")}, []string{"crypto_address.chain"}},
		{"crypto bad asset and address", map[string]any{"type": "CRYPTO_ADDRESS", "crypto_address": map[string]any{"asset": "BTC", "chain": "OPTIMISM", "address": "0x12"}}, []string{"crypto_address.asset", "crypto_address.address"}},
		{"crypto missing", map[string]any{"type": "CRYPTO_ADDRESS", "crypto_address": map[string]any{}}, []string{"crypto_address.asset", "crypto_address.chain", "crypto_address.address"}},
		{"us without customer", map[string]any{"type": "US_BANK_ACCOUNT", "us_bank_account": usBank()}, []string{"customer_id"}},
		{"customer not a uuid", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": "abc", "us_bank_account": usBank()}, []string{"customer_id"}},
		{"us bad routing", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(usBank(), "routing_number", "021000022")}, []string{"us_bank_account.routing_number"}},
		{"us enums", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(with(usBank(), "account_type", "current"), "payout_scheme", "rtp")}, []string{"us_bank_account.account_type", "us_bank_account.payout_scheme"}},
		{"us two-letter country", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(usBank(), "address", addr("US"))}, []string{"us_bank_account.address.country"}},
		{"us no address", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(usBank(), "address", nil)}, []string{"us_bank_account.address"}},
		{"us long owner name", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(usBank(), "account_owner_name", string(make([]byte, 257)))}, []string{"us_bank_account.account_owner_name"}},
		{"us letters in account", map[string]any{"type": "US_BANK_ACCOUNT", "customer_id": cust, "us_bank_account": with(usBank(), "account_number", "12AB5678")}, []string{"us_bank_account.account_number"}},
		{"swift without customer", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "swift_bank_account": swift()}, []string{"customer_id"}},
		{"swift bad iban checksum", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "iban", "DE89370400440532013001")}, []string{"swift_bank_account.iban"}},
		{"swift iban with spaces", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "iban", "DE89 3704 0044 0532 0130 00")}, []string{"swift_bank_account.iban"}},
		{"swift unknown country", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "account_country", "XXX")}, []string{"swift_bank_account.account_country"}},
		{"swift bad bic", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "bic", "DEUT1EFF")}, []string{"swift_bank_account.bic"}},
		{"swift enums", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(with(swift(), "category", "friend"), "account_owner_type", "trust")}, []string{"swift_bank_account.category", "swift_bank_account.account_owner_type"}},
		{"swift no purpose", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "purpose_of_funds", []string{})}, []string{"swift_bank_account.purpose_of_funds"}},
		{"swift bad purpose", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "purpose_of_funds", []string{"gift"})}, []string{"swift_bank_account.purpose_of_funds"}},
		{"swift missing parts", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(with(swift(), "bank_address", nil), "short_business_description", nil)}, []string{"swift_bank_account.bank_address", "swift_bank_account.short_business_description"}},
		{"swift lower-case country", map[string]any{"type": "SWIFT_BANK_ACCOUNT", "customer_id": cust, "swift_bank_account": with(swift(), "address", addr("deu"))}, []string{"swift_bank_account.address.country"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := r.Srv.Must(t, 400, "POST", "/v1/recipients", r.M.SandboxKey, c.body)
			got := res.Fields()
			sort.Strings(got)
			want := slices.Clone(c.fields)
			sort.Strings(want)
			if res.Message != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Fatalf("%s", res)
			}
		})
	}
	r.Srv.Must(t, 400, "POST", "/v1/recipients", r.M.SandboxKey, map[string]any{"type": "BANK_ACCOUNT", "bank_account": "0123"})
}
