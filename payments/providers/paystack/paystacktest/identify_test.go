package paystacktest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"svc/payments/providers/paystack/paystacktest"
)

// TestIdentificationChecksFields: POST /customer/{code}/identification refuses what Paystack
// documents as invalid, accepts a valid request with 202, and the outcome is a signed
// notification with the BVN and account masked.
func TestIdentificationChecksFields(t *testing.T) {
	srv := paystacktest.New("sk_test_ident")
	defer srv.Close()
	post := func(path string, body map[string]any) int {
		t.Helper()
		b, _ := json.Marshal(body)
		status, _ := send(t, srv, "POST", path, srv.Secret, "application/json", string(b))
		return status
	}
	if got := post("/customer", map[string]any{"email": "ada@example.com"}); got != 200 {
		t.Fatalf("create customer: %d", got)
	}
	code := "CUS_0000000001001"
	valid := func() map[string]any {
		return map[string]any{"country": "NG", "type": "bank_account", "bvn": "22222222222", "bank_code": "058",
			"account_number": "0123456789", "first_name": "Ada", "last_name": "Lovelace"}
	}
	for name, tc := range map[string]struct {
		key   string
		value any
	}{
		"country": {"country", "GH"}, "type": {"type", "bvn"}, "short bvn": {"bvn", "2222"}, "account": {"account_number", "12345"},
		"bank": {"bank_code", "999"}, "first name": {"first_name", ""}, "last name": {"last_name", nil},
	} {
		b := valid()
		b[tc.key] = tc.value
		if got := post("/customer/"+code+"/identification", b); got != 400 {
			t.Errorf("%s: %d, want 400", name, got)
		}
	}
	if got := post("/customer/CUS_unknown/identification", valid()); got != 404 {
		t.Fatalf("unknown customer: %d", got)
	}
	if got := post("/customer/"+code+"/identification", valid()); got != 202 {
		t.Fatalf("valid: %d", got)
	}
	n, err := srv.FinishIdentification(code, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != "customeridentification.success" || strings.Contains(string(n.Body), "22222222222") ||
		strings.Contains(string(n.Body), "0123456789") || n.Signature == "" {
		t.Fatalf("notification %s %s", n.Type, n.Body)
	}
	if _, err := srv.FinishIdentification(code, false, ""); err == nil {
		t.Fatal("finished twice")
	}
	if got := post("/customer/"+code+"/identification", valid()); got != 400 {
		t.Fatalf("already identified: %d", got)
	}
}
