package paystacktest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"svc/payments/providers/paystack/paystacktest"
)

// TestServerChecksRequests: the contract server refuses what Paystack documents as invalid,
// so an adapter that sends it fails its contract tests.
func TestServerChecksRequests(t *testing.T) {
	srv := paystacktest.New("sk_test_server")
	defer srv.Close()
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	const js = "application/json"
	_, rcp := send(t, srv, "POST", "/transferrecipient", srv.Secret, js, `{"type":"nuban","name":"ADA LOVELACE","account_number":"0123456789","bank_code":"058","currency":"NGN"}`)
	code := rcp["data"].(map[string]any)["recipient_code"].(string)
	transfer := func(amount, ref string) string {
		return `{"source":"balance","amount":` + amount + `,"recipient":"` + code + `","reference":"` + ref + `"}`
	}
	for _, tc := range []struct {
		name, method, path, key, ctype, body string
		want                                 int
	}{
		{"no key", "GET", "/transfer/verify/abcdefghijklmnop", "", "", "", 401},
		{"wrong key", "GET", "/transfer/verify/abcdefghijklmnop", "sk_test_wrong", "", "", 401},
		{"unknown transfer", "GET", "/transfer/verify/abcdefghijklmnop", srv.Secret, "", "", 404},
		{"unknown charge", "GET", "/transaction/verify/abcdefghijklmnop", srv.Secret, "", "", 404},
		{"unknown customer", "GET", "/customer/CUS_unknown", srv.Secret, "", "", 404},
		{"form body", "POST", "/transfer", srv.Secret, "application/x-www-form-urlencoded", "amount=100", 400},
		{"fractional kobo", "POST", "/transfer", srv.Secret, js, transfer("100.5", "payout__0000000000000001"), 400},
		{"amount in quotes", "POST", "/transfer", srv.Secret, js, transfer(`"100"`, "payout__0000000000000001"), 400},
		{"zero amount", "POST", "/transfer", srv.Secret, js, transfer("0", "payout__0000000000000001"), 400},
		{"upper-case reference", "POST", "/transfer", srv.Secret, js, transfer("100", "PAYOUT__0000000000000001"), 400},
		{"short reference", "POST", "/transfer", srv.Secret, js, transfer("100", "payout_1"), 400},
		{"unknown recipient", "POST", "/transfer", srv.Secret, js, `{"source":"balance","amount":100,"recipient":"RCP_x","reference":"payout__0000000000000001"}`, 400},
		{"a good transfer", "POST", "/transfer", srv.Secret, js, transfer("100", "payout__0000000000000001"), 200},
		{"the same reference again", "POST", "/transfer", srv.Secret, js, transfer("100", "payout__0000000000000001"), 400},
		{"recipient account of 9 digits", "POST", "/transferrecipient", srv.Secret, js, `{"type":"nuban","name":"A","account_number":"012345678","bank_code":"058"}`, 400},
		{"unresolvable account", "GET", "/bank/resolve?account_number=0000000000&bank_code=058", srv.Secret, "", "", 422},
		{"customer without email", "POST", "/customer", srv.Secret, js, `{"first_name":"A"}`, 400},
		{"dedicated account for no customer", "POST", "/dedicated_account", srv.Secret, js, `{"customer":"CUS_x","preferred_bank":"wema-bank"}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, env := send(t, srv, tc.method, tc.path, tc.key, tc.ctype, tc.body)
			if status != tc.want || (env["status"] == true) != (status == 200) || env["message"] == "" {
				t.Fatalf("%d %v, want %d", status, env, tc.want)
			}
		})
	}
	if n := len(srv.Transfers()); n != 1 {
		t.Fatalf("%d transfers", n)
	}
}

// send makes one request of srv (key and contentType left out when "") and decodes the
// answer's JSON envelope.
func send(t *testing.T, srv *paystacktest.Server, method, path, key, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, env
}
