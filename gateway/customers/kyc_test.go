package customers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/providers"
	"svc/persistence/postgres/pgtest"
)

// kycStatus is GET /v1/customers/{id}/verifications/{verification_id}.
type kycStatus struct {
	ID              string    `json:"id"`
	Kind            string    `json:"kind"`
	Tier            string    `json:"tier"`
	Status          string    `json:"status"`
	Reason          *string   `json:"reason"`
	KYCTier         string    `json:"kyc_tier"`
	Customer        *customer `json:"customer"`
	VerificationURL string    `json:"verification_url"`
	ExpiresAt       string    `json:"expires_at"`
}

// A hosted KYC flow completes: initiate answers a URL under the public base URL that the
// server serves (the sandbox provider's page), the page's approve or reject is the
// provider's callback, which updates the verification and the customer's tier and records
// the spec's events once (a repeated callback changes nothing), and GET shows the status.
// Another merchant's or environment's verification is 404, a live session is not served by
// the sandbox page, an expired session refuses the outcome.
func TestHostedKYCCompletes(t *testing.T) {
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(client)
	const base = "https://sandbox.svc.test"
	envs := providers.Environments{
		Sandbox: providers.NewSandbox(providers.SandboxConfig{KYCURL: base + gwcustomers.SandboxKYCPath}),
		// live with a KYC provider too, to show a live session is not the sandbox page's
		Live: providers.NewSandbox(providers.SandboxConfig{KYCURL: "https://kyc.partner.test/flow/"}),
	}
	svc := customers.NewService(pool, rec, envs, nil)
	idem := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
	srv := gatewaytest.New(t, pool, gwcustomers.New(svc, idem), gwcustomers.NewKYC(svc, nil))
	e := &env{srv: srv, pool: pool, m: authtest.New(t, pool), other: authtest.New(t, pool)}
	c := e.create(t, e.m.SandboxKey, "hosted@example.com")
	status := func(t *testing.T, vid string) kycStatus {
		t.Helper()
		var s kycStatus
		srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/verifications/"+vid, e.m.SandboxKey, nil).Decode(t, &s)
		return s
	}
	initiate := func(t *testing.T, tier string) (id, page string) {
		t.Helper()
		path := "/v1/customers/" + c.ID + "/kyc/initiate"
		if tier == "2" {
			path = "/v1/customers/" + c.ID + "/tier2-kyc/initiate"
		}
		var v kycStatus
		srv.Must(t, 201, "POST", path, e.m.SandboxKey, nil).Decode(t, &v)
		u, err := url.Parse(v.VerificationURL)
		if err != nil || !strings.HasPrefix(v.VerificationURL, base+"/sandbox/kyc/sbx_kyc"+tier+"_") || v.Status != "PENDING" {
			t.Fatalf("initiate: %+v %v", v, err)
		}
		return v.ID, u.Path
	}
	decide := func(t *testing.T, page, form string) gatewaytest.Response {
		t.Helper()
		return srv.Do(t, "POST", page, "", form, "Content-Type", "application/x-www-form-urlencoded")
	}

	vid, page := initiate(t, "1")
	t.Run("the verification URL is served", func(t *testing.T) {
		r := srv.Must(t, 200, "GET", page, "", nil)
		body := string(r.Body)
		if !strings.Contains(body, "Tier 1 verification") || !strings.Contains(body, "Ada") || !strings.Contains(body, `value="approve"`) ||
			!strings.HasPrefix(r.Header["Content-Type"], "text/html") || r.Header["Cache-Control"] != "no-store" {
			t.Fatalf("page: %v %s", r.Header, body)
		}
		if s := status(t, vid); s.Status != "PENDING" || s.Kind != "hosted" || s.KYCTier != "TIER_0" || s.Tier != "TIER_1" {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("tenancy", func(t *testing.T) {
		srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/verifications/"+vid, e.other.SandboxKey, nil)
		srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/verifications/"+vid, e.m.LiveKey, nil)
		srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/verifications", e.other.SandboxKey, nil)
		srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/verifications/not-a-uuid", e.m.SandboxKey, nil)
		srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/verifications/"+c.ID, e.m.SandboxKey, nil)
		srv.Must(t, 404, "GET", "/sandbox/kyc/sbx_kyc1_0000000000000000", "", nil)
		if r := decide(t, "/sandbox/kyc/sbx_kyc1_0000000000000000", "decision=approve"); r.Status != 404 {
			t.Fatalf("unknown session: %s", r)
		}
		// A live session (another environment's provider) is not the sandbox page's.
		lc := e.create(t, e.m.LiveKey, "live-hosted@example.com")
		var lv kycStatus
		srv.Must(t, 201, "POST", "/v1/customers/"+lc.ID+"/kyc/initiate", e.m.LiveKey, nil).Decode(t, &lv)
		ref := strings.TrimPrefix(lv.VerificationURL, "https://kyc.partner.test/flow/")
		srv.Must(t, 404, "GET", "/sandbox/kyc/"+ref, "", nil)
		if r := decide(t, "/sandbox/kyc/"+ref, "decision=approve"); r.Status != 404 {
			t.Fatalf("live session through the sandbox page: %s", r)
		}
		var lc2 customer
		srv.Must(t, 200, "GET", "/v1/customers/"+lc.ID, e.m.LiveKey, nil).Decode(t, &lc2)
		if lc2.KYCTier != "TIER_0" {
			t.Fatalf("live customer moved: %+v", lc2)
		}
	})
	t.Run("a bad form changes nothing", func(t *testing.T) {
		if r := decide(t, page, "decision=maybe"); r.Status != 400 {
			t.Fatalf("%s", r)
		}
		if s := status(t, vid); s.Status != "PENDING" {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("approve: TIER_1 and customer.tier1_verified, once", func(t *testing.T) {
		if r := decide(t, page, "decision=approve"); r.Status != 303 || r.Header["Location"] == "" {
			t.Fatalf("approve: %s %v", r, r.Header)
		}
		s := status(t, vid)
		if s.Status != "VERIFIED" || s.KYCTier != "TIER_1" || s.Customer == nil || s.Customer.KYCTier != "TIER_1" {
			t.Fatalf("%+v", s)
		}
		// The provider calls back again, even with another outcome: nothing changes.
		if r := decide(t, page, "decision=reject&reason=late"); r.Status != 303 {
			t.Fatalf("repeat: %s", r)
		}
		if s := status(t, vid); s.Status != "VERIFIED" || e.events(t, e.m, events.CustomerTier1Verified) != 1 {
			t.Fatalf("after the repeat: %+v, %d events", s, e.events(t, e.m, events.CustomerTier1Verified))
		}
		if body := string(srv.Must(t, 200, "GET", page, "", nil).Body); !strings.Contains(body, "VERIFIED") || strings.Contains(body, `value="approve"`) {
			t.Fatalf("completed page: %s", body)
		}
	})
	t.Run("tier 2 rejected, then approved", func(t *testing.T) {
		v2, p2 := initiate(t, "2")
		if r := decide(t, p2, "decision=reject&reason=document+unreadable"); r.Status != 303 {
			t.Fatalf("reject: %s", r)
		}
		s := status(t, v2)
		if s.Status != "REJECTED" || s.Reason == nil || *s.Reason != "document unreadable" || s.KYCTier != "TIER_1" ||
			e.events(t, e.m, events.CustomerTier2Rejected) != 1 {
			t.Fatalf("%+v", s)
		}
		v3, p3 := initiate(t, "2")
		decide(t, p3, "decision=approve")
		if s := status(t, v3); s.Status != "VERIFIED" || s.KYCTier != "TIER_2" || e.events(t, e.m, events.CustomerTier2Verified) != 1 {
			t.Fatalf("%+v", s)
		}
		// No redirect_url: the completed page has no way back.
		if body := string(srv.Must(t, 200, "GET", p3, "", nil).Body); strings.Contains(body, `id="return"`) {
			t.Fatalf("return link without a redirect_url: %s", body)
		}
	})
	t.Run("the page sends the customer back to redirect_url once completed", func(t *testing.T) {
		var v kycStatus
		srv.Must(t, 201, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", e.m.SandboxKey,
			map[string]string{"redirect_url": "https://shop.example/kyc-done?c=1"}).Decode(t, &v)
		u, _ := url.Parse(v.VerificationURL)
		if body := string(srv.Must(t, 200, "GET", u.Path, "", nil).Body); strings.Contains(body, `id="return"`) {
			t.Fatalf("return link before the outcome: %s", body)
		}
		decide(t, u.Path, "decision=approve")
		if body := string(srv.Must(t, 200, "GET", u.Path, "", nil).Body); !strings.Contains(body, `href="https://shop.example/kyc-done?c=1"`) {
			t.Fatalf("no return link: %s", body)
		}
	})
	t.Run("an expired session refuses the outcome", func(t *testing.T) {
		v4, p4 := initiate(t, "1")
		if _, err := pool.Exec(context.Background(), `update kyc_verifications set expires_at = now() - interval '1 second' where id = $1`, v4); err != nil {
			t.Fatal(err)
		}
		if r := decide(t, p4, "decision=approve"); r.Status != 422 {
			t.Fatalf("expired: %s", r)
		}
		if s := status(t, v4); s.Status != "EXPIRED" {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("list, newest first", func(t *testing.T) {
		var vs []kycStatus
		srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/verifications", e.m.SandboxKey, nil).Decode(t, &vs)
		got := make([]string, len(vs))
		for i, v := range vs {
			got[i] = v.Tier + ":" + v.Status
		}
		if strings.Join(got, ",") != "TIER_1:EXPIRED,TIER_1:VERIFIED,TIER_2:VERIFIED,TIER_2:REJECTED,TIER_1:VERIFIED" {
			t.Fatalf("%v", got)
		}
	})
}
