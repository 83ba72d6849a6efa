package customers_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres/pgtest"
)

// TestInitiateEvidence: POST /v1/customers/{id}/kyc/initiate takes the identity evidence a
// live KYC provider needs (bank_account, middle_name beside bvn). Malformed evidence is 400 in
// either environment; in live with Paystack the BVN and bank account are required (400 naming
// each missing field) and a bank Paystack refuses is 400 on bank_account; the sandbox needs
// none. Every refusal changes nothing (no verification, nothing sent to Paystack). A started
// identification keeps the bank code and the last 4 digits only: the clear BVN and account
// number reach Paystack and are stored nowhere.
func TestInitiateEvidence(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ps := paystacktest.New("sk_test_evidence")
	t.Cleanup(ps.Close)
	pc, err := paystack.New(paystack.Config{SecretKey: ps.Secret, BaseURL: ps.URL, CustomerEmailDomain: "kyc.example.com",
		Phone: "+2348000000000", Timeout: 2 * time.Second, MaxAttempts: 2, Backoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	envs := providers.Environments{Sandbox: providers.NewSandbox(providers.SandboxConfig{}),
		Live: providers.Set{KYC: pc.KYC()}.Complete()}
	svc := customers.NewService(pool, events.NewRecorder(client), envs, nil)
	srv := gatewaytest.New(t, pool, gwcustomers.New(svc, gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))), gwcustomers.NewKYC(svc, nil))
	e := &env{srv: srv, pool: pool, m: authtest.New(t, pool)}
	sc := e.create(t, e.m.SandboxKey, "evidence@example.com")
	lc := e.create(t, e.m.LiveKey, "evidence@example.com")

	verifications := func() int {
		var n int
		if err := pool.QueryRow(ctx, `select count(*) from kyc_verifications where merchant_id = $1`, e.m.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	good := map[string]any{"bank_code": "058", "account_number": "0123456789"}
	initiate := func(id string, tier int) string {
		if tier == 2 {
			return "/v1/customers/" + id + "/tier2-kyc/initiate"
		}
		return "/v1/customers/" + id + "/kyc/initiate"
	}

	for _, tc := range []struct {
		name   string
		live   bool
		tier   int
		body   map[string]any
		fields []string
	}{
		{"bvn short", false, 1, map[string]any{"bvn": "1234"}, []string{"bvn"}},
		{"bank code letters", false, 1, map[string]any{"bank_account": map[string]any{"bank_code": "GTB", "account_number": "0123456789"}}, []string{"bank_account.bank_code"}},
		{"bank code too long", false, 1, map[string]any{"bank_account": map[string]any{"bank_code": "1234567", "account_number": "0123456789"}}, []string{"bank_account.bank_code"}},
		{"account 9 digits", false, 1, map[string]any{"bank_account": map[string]any{"bank_code": "058", "account_number": "012345678"}}, []string{"bank_account.account_number"}},
		{"account letters", false, 1, map[string]any{"bank_account": map[string]any{"bank_code": "058", "account_number": "01234567ab"}}, []string{"bank_account.account_number"}},
		{"bank account empty", false, 1, map[string]any{"bank_account": map[string]any{}}, []string{"bank_account.bank_code", "bank_account.account_number"}},
		{"bank account on tier 2", false, 2, map[string]any{"bank_account": good}, []string{"bank_account"}},
		{"middle name on tier 2", false, 2, map[string]any{"middle_name": "King"}, []string{"middle_name"}},
		{"middle name too long", false, 1, map[string]any{"middle_name": strings.Repeat("k", 101)}, []string{"middle_name"}},
		{"live: nothing", true, 1, nil, []string{"bvn", "bank_account.bank_code", "bank_account.account_number"}},
		{"live: no bank account", true, 1, map[string]any{"bvn": "22222222222"}, []string{"bank_account.bank_code", "bank_account.account_number"}},
		{"live: no bvn", true, 1, map[string]any{"bank_account": good}, []string{"bvn"}},
		{"live: malformed and missing", true, 1, map[string]any{"bank_account": map[string]any{"bank_code": "058", "account_number": "1"}}, []string{"bank_account.account_number"}},
		{"live: unknown bank (Paystack refuses)", true, 1, map[string]any{"bvn": "22222222222", "bank_account": map[string]any{"bank_code": "999", "account_number": "0123456789"}}, []string{"bank_account"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, id := e.m.SandboxKey, sc.ID
			if tc.live {
				key, id = e.m.LiveKey, lc.ID
			}
			before, sent := verifications(), ps.Requests(paystacktest.RouteIdentify)
			var body any
			if tc.body != nil {
				body = tc.body
			}
			r := srv.Do(t, "POST", initiate(id, tc.tier), key, body)
			got := r.Fields()
			slices.Sort(got)
			want := slices.Clone(tc.fields)
			slices.Sort(want)
			if r.Status != 400 || r.Message != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Fatalf("%s: want 400 on %v", r, want)
			}
			for _, f := range r.Errors {
				if strings.TrimSpace(f.Message) == "" {
					t.Fatalf("field %s without a message", f.Field)
				}
			}
			if verifications() != before {
				t.Fatal("a refused initiate wrote a verification")
			}
			if tc.name != "live: unknown bank (Paystack refuses)" && ps.Requests(paystacktest.RouteIdentify) != sent {
				t.Fatal("a refused initiate reached Paystack")
			}
		})
	}

	// The sandbox needs no evidence (unchanged) and accepts it, kept masked.
	srv.Must(t, 201, "POST", initiate(sc.ID, 1), e.m.SandboxKey, nil)
	var sv struct {
		ID              string `json:"id"`
		VerificationURL string `json:"verification_url"`
		BankAccount     *struct {
			BankCode           string `json:"bank_code"`
			AccountNumberLast4 string `json:"account_number_last4"`
		} `json:"bank_account"`
	}
	srv.Must(t, 201, "POST", initiate(sc.ID, 1), e.m.SandboxKey,
		map[string]any{"bvn": "12345678901", "middle_name": "King", "bank_account": good}).Decode(t, &sv)
	if sv.VerificationURL == "" || sv.BankAccount == nil || sv.BankAccount.BankCode != "058" || sv.BankAccount.AccountNumberLast4 != "6789" {
		t.Fatalf("sandbox initiate with evidence: %+v", sv)
	}

	// Paystack down: 503 with Retry-After, nothing written.
	before := verifications()
	ps.Inject(paystacktest.Fault{Route: paystacktest.RouteIdentify, Status: 502, Times: 2})
	live := map[string]any{"bvn": "22222222222", "middle_name": "King", "bank_account": good}
	if r := srv.Do(t, "POST", initiate(lc.ID, 1), e.m.LiveKey, live); r.Status != 503 || r.Message != "PROVIDER_UNAVAILABLE" || r.Header["Retry-After"] == "" {
		t.Fatalf("Paystack down: %s %v", r, r.Header)
	}
	if verifications() != before {
		t.Fatal("a failed initiate wrote a verification")
	}

	// Live with the evidence: Paystack identification started, PENDING without a page.
	var lv struct {
		ID              string  `json:"id"`
		Status          string  `json:"status"`
		Kind            string  `json:"kind"`
		VerificationURL *string `json:"verification_url"`
		BankAccount     *struct {
			BankCode           string `json:"bank_code"`
			AccountNumberLast4 string `json:"account_number_last4"`
		} `json:"bank_account"`
	}
	srv.Must(t, 201, "POST", initiate(lc.ID, 1), e.m.LiveKey, live).Decode(t, &lv)
	if lv.Status != "PENDING" || lv.VerificationURL != nil || lv.BankAccount == nil || lv.BankAccount.AccountNumberLast4 != "6789" {
		t.Fatalf("live initiate: %+v", lv)
	}
	var pending []paystacktest.Identification
	for _, id := range ps.Identifications() {
		if id.Status == "pending" {
			pending = append(pending, id)
		}
	}
	if len(pending) != 1 || pending[0].BVN != "22222222222" || pending[0].AccountNumber != "0123456789" || pending[0].BankCode != "058" ||
		pending[0].FirstName != "Ada" || pending[0].MiddleName != "King" || pending[0].LastName != "Obi" {
		t.Fatalf("Paystack holds %+v", pending)
	}
	srv.Must(t, 200, "GET", "/v1/customers/"+lc.ID+"/verifications/"+lv.ID, e.m.LiveKey, nil).Decode(t, &lv)
	if lv.Kind != "hosted" || lv.Status != "PENDING" || lv.BankAccount == nil || lv.BankAccount.BankCode != "058" {
		t.Fatalf("live verification: %+v", lv)
	}
	// Nothing in clear: no row of kyc_verifications holds the BVN or the account number.
	var clear int
	if err := pool.QueryRow(ctx, `select count(*) from kyc_verifications k
		where position('0123456789' in row_to_json(k)::text) > 0 or position('22222222222' in row_to_json(k)::text) > 0
		   or position('12345678901' in row_to_json(k)::text) > 0`).Scan(&clear); err != nil || clear != 0 {
		t.Fatalf("%d verifications hold a BVN or account number in clear (%v)", clear, err)
	}

	// Tier 2 in live: Paystack has none: 503 as an unconfigured provider (after TIER_1).
	if _, err := pool.Exec(ctx, `update customers set kyc_tier = 'TIER_1' where id = $1`, lc.ID); err != nil {
		t.Fatal(err)
	}
	if r := srv.Do(t, "POST", initiate(lc.ID, 2), e.m.LiveKey, nil); r.Status != 503 || r.Message != "PROVIDER_UNAVAILABLE" {
		t.Fatalf("live tier 2: %s", r)
	}
}
