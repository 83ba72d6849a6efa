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
	"svc/persistence/postgres/pgtest"
)

// TestKYCThroughSvcd runs svcd and completes a hosted KYC flow as a merchant and its
// customer would: initiate answers a verification_url under --public-base-url that svcd
// serves, approving on that page makes the customer TIER_1 and the verification VERIFIED;
// a merchant whose live KYC is not approved gets 403 MERCHANT_KYC_REQUIRED on live routes.
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
}
