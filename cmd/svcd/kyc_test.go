package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	"svc/identity"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres/pgtest"
)

// TestKYCThroughSvcd runs svcd and completes a hosted KYC flow as a merchant and its
// customer would: initiate answers a verification_url under --public-base-url that svcd
// serves, approving on that page makes the customer TIER_1 and the verification VERIFIED;
// a merchant whose live KYC is not approved gets 403 MERCHANT_KYC_REQUIRED on live routes;
// live KYC without a configured provider is 503 PROVIDER_UNAVAILABLE with Retry-After.
func TestKYCThroughSvcd(t *testing.T) {
	pool, dbURL := pgtest.New(t)
	addr := freeAddr(t)
	base := "http://" + addr
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out safeBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", addr, "--database-url", dbURL, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--public-base-url", base}, func(string) string { return "" }, &out, &out)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("svcd did not stop")
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd not ready:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, path, key string, body any, into any) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("X-Api-Key", key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var env struct {
			Data    json.RawMessage `json:"data"`
			Message string          `json:"message"`
		}
		_ = json.Unmarshal(raw, &env)
		if into != nil {
			_ = json.Unmarshal(env.Data, into)
		}
		return resp.StatusCode, env.Message
	}

	m := authtest.New(t, pool)
	var c struct{ ID string }
	if st, msg := call("POST", "/v1/customers", m.SandboxKey, map[string]string{"email": "svcd-kyc@example.com", "first_name": "Ada", "last_name": "Obi"}, &c); st != 201 {
		t.Fatalf("create customer: %d %s", st, msg)
	}
	var v struct {
		ID              string `json:"id"`
		VerificationURL string `json:"verification_url"`
	}
	if st, msg := call("POST", "/v1/customers/"+c.ID+"/kyc/initiate", m.SandboxKey, nil, &v); st != 201 || !strings.HasPrefix(v.VerificationURL, base+"/sandbox/kyc/") {
		t.Fatalf("initiate: %d %s %+v", st, msg, v)
	}
	resp, err := http.Get(v.VerificationURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `value="approve"`) {
		t.Fatalf("page: %d %s", resp.StatusCode, page)
	}
	resp, err = noRedirect.PostForm(v.VerificationURL, url.Values{"decision": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	var s struct {
		Status  string `json:"status"`
		KYCTier string `json:"kyc_tier"`
	}
	if st, msg := call("GET", "/v1/customers/"+c.ID+"/verifications/"+v.ID, m.SandboxKey, nil, &s); st != 200 || s.Status != "VERIFIED" || s.KYCTier != "TIER_1" {
		t.Fatalf("status: %d %s %+v", st, msg, s)
	}

	// Live needs an approved merchant.
	u, err := identity.SeedMerchant(context.Background(), pool, identity.SeedOptions{Email: "unreviewed@example.test", PasswordHash: "x", KYCApproved: true})
	if err != nil {
		t.Fatal(err)
	}
	_, lk, err := identity.CreateKey(context.Background(), pool, u.ID, identity.Live, "live")
	if err != nil {
		t.Fatal(err)
	}
	if st, msg := call("GET", "/v1/customers", lk, nil, nil); st != 403 || msg != "MERCHANT_KYC_REQUIRED" {
		t.Fatalf("unapproved live: %d %s", st, msg)
	}
	if st, msg := call("GET", "/v1/customers", m.LiveKey, nil, nil); st != 200 {
		t.Fatalf("approved live: %d %s", st, msg)
	}

	// Live KYC without a configured provider (no SVC_PAYSTACK_SECRET_KEY): 503
	// PROVIDER_UNAVAILABLE with Retry-After, nothing written, as every live rail.
	var lc struct{ ID string }
	if st, msg := call("POST", "/v1/customers", m.LiveKey, map[string]string{"email": "svcd-kyc@example.com", "first_name": "Ada", "last_name": "Obi"}, &lc); st != 201 {
		t.Fatalf("create live customer: %d %s", st, msg)
	}
	body, _ := json.Marshal(map[string]any{"bvn": "22222222222", "bank_account": map[string]string{"bank_code": "058", "account_number": "0123456789"}})
	req, _ := http.NewRequest("POST", base+"/v1/customers/"+lc.ID+"/kyc/initiate", bytes.NewReader(body))
	req.Header.Set("X-Api-Key", m.LiveKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "PROVIDER_UNAVAILABLE") {
		t.Fatalf("unconfigured live initiate: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	var rows int
	if err := pool.QueryRow(context.Background(), `select count(*) from kyc_verifications where customer_id = $1`, lc.ID).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("unconfigured live initiate wrote %d verifications (%v)", rows, err)
	}
}

// TestLiveKYCThroughPaystack runs svcd in live mode with Paystack configured (the same
// SVC_PAYSTACK_SECRET_KEY and --paystack-* flags as the bank) and verifies customers end to
// end through the API: POST .../kyc/initiate with the BVN and bank account makes the adapter
// start Paystack customer identification at the contract server; the contract server's
// signed customeridentification.success (first customer) or .failed (second) arrives at
// POST /v1/partners/paystack/events; the verification becomes VERIFIED (tier TIER_1,
// customer.tier1_verified delivered to the merchant's webhook) or REJECTED with Paystack's
// reason (tier unchanged, no event); GET shows it; a repeated notification changes nothing.
// Without the evidence live initiate is 400 naming the fields.
func TestLiveKYCThroughPaystack(t *testing.T) {
	sv := startLiveSvcd(t, "sk_test_kyc_e2e_0123456789", strings.Repeat("cd", 32))
	pool, ps, base, hooks := sv.pool, sv.ps, sv.base, sv.hooks
	ctx := context.Background()
	c := client{t: t, base: base}
	m := authtest.New(t, pool)
	c.must(201, "POST", "/v1/webhooks/endpoints", m.LiveKey, map[string]any{"url": sv.hookURL + "/hooks"}, nil)
	events := base + "/v1/partners/paystack/events"

	type verification struct {
		ID              string  `json:"id"`
		Kind            string  `json:"kind"`
		Status          string  `json:"status"`
		Reason          *string `json:"reason"`
		KYCTier         string  `json:"kyc_tier"`
		VerificationURL *string `json:"verification_url"`
		BankAccount     *struct {
			BankCode           string `json:"bank_code"`
			AccountNumberLast4 string `json:"account_number_last4"`
		} `json:"bank_account"`
	}
	tier1Events := func(customerID string) int {
		var n int
		if err := pool.QueryRow(ctx, `select count(*) from events where merchant_id = $1 and environment = 'live'
			and type = 'customer.tier1_verified' and data->>'id' = $2`, m.ID, customerID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, tc := range []struct {
		name     string
		success  bool
		reason   string
		status   string
		tier     string
		tierEvts int
	}{
		{"success", true, "", "VERIFIED", "TIER_1", 1},
		{"failed", false, "BVN does not match the account holder", "REJECTED", "TIER_0", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client{t: t, base: base}
			var cust struct {
				ID string `json:"id"`
			}
			c.must(201, "POST", "/v1/customers", m.LiveKey, map[string]any{"email": tc.name + "@example.test", "first_name": "Ada", "last_name": "Lovelace"}, &cust)
			path := "/v1/customers/" + cust.ID + "/kyc/initiate"

			// Live with Paystack needs the evidence: 400 naming each missing field.
			status, data := c.do("POST", path, m.LiveKey, map[string]any{"bvn": "22222222222"})
			if status != 400 || !strings.Contains(string(data), "bank_account.account_number") || !strings.Contains(string(data), "bank_account.bank_code") {
				t.Fatalf("initiate without a bank account: %d %s", status, data)
			}

			before := len(ps.Identifications())
			var v verification
			c.must(201, "POST", path, m.LiveKey, map[string]any{"bvn": "22222222222",
				"bank_account": map[string]any{"bank_code": "058", "account_number": "0123456789"}}, &v)
			if v.Status != "PENDING" || v.VerificationURL != nil || v.BankAccount == nil || v.BankAccount.AccountNumberLast4 != "6789" {
				t.Fatalf("initiate: %+v", v)
			}
			// The adapter called the contract server's identification route.
			var code string
			for _, id := range ps.Identifications() {
				if id.Status == "pending" && id.BVN == "22222222222" && id.AccountNumber == "0123456789" && id.BankCode == "058" &&
					id.FirstName == "Ada" && id.LastName == "Lovelace" {
					code = id.CustomerCode
				}
			}
			if code == "" || len(ps.Identifications()) != before+1 {
				t.Fatalf("Paystack holds no pending identification for the customer: %+v", ps.Identifications())
			}

			n, err := ps.FinishIdentification(code, tc.success, tc.reason)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // Paystack delivers at least once
				if st, err := paystacktest.Deliver(ctx, http.DefaultClient, events, n); err != nil || st != 200 {
					t.Fatalf("customeridentification notification: %d %v", st, err)
				}
			}
			eventually(t, "the verification completes", func() bool {
				c.must(200, "GET", "/v1/customers/"+cust.ID+"/verifications/"+v.ID, m.LiveKey, nil, &v)
				return v.Status != "PENDING"
			})
			if v.Status != tc.status || v.KYCTier != tc.tier || v.Kind != "hosted" || v.BankAccount == nil || v.BankAccount.BankCode != "058" {
				t.Fatalf("verification %+v", v)
			}
			if !tc.success && (v.Reason == nil || *v.Reason != tc.reason) {
				t.Fatalf("rejection reason %v, want %q", v.Reason, tc.reason)
			}
			var got struct {
				KYCTier string `json:"kyc_tier"`
			}
			c.must(200, "GET", "/v1/customers/"+cust.ID, m.LiveKey, nil, &got)
			if got.KYCTier != tc.tier {
				t.Fatalf("customer tier %s, want %s", got.KYCTier, tc.tier)
			}
			// Both deliveries stored once (one partner event), processed.
			eventually(t, "the notification is processed", func() bool {
				var st string
				var rows int
				_ = pool.QueryRow(ctx, `select count(*), min(status) from partner_events where provider = 'paystack' and body = $1`, n.Body).Scan(&rows, &st)
				return rows == 1 && st == "PROCESSED"
			})
			if n := tier1Events(cust.ID); n != tc.tierEvts {
				t.Fatalf("%d customer.tier1_verified events, want %d", n, tc.tierEvts)
			}
			if tc.success {
				eventually(t, "customer.tier1_verified reaches the merchant", func() bool { return hooks.has("customer.tier1_verified") })
			}
		})
	}
	// The clear BVN and account number went to Paystack only.
	var clear int
	if err := pool.QueryRow(ctx, `select count(*) from kyc_verifications k where position('0123456789' in row_to_json(k)::text) > 0
		or position('22222222222' in row_to_json(k)::text) > 0`).Scan(&clear); err != nil || clear != 0 {
		t.Fatalf("%d verifications hold the BVN or account number in clear (%v)", clear, err)
	}
}
