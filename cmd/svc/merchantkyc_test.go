package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/gateway/openapi"
	"svc/identity"
	"svc/persistence/postgres/pgtest"
)

// pingRoutes is one protected route that is not an account route (live needs approval).
type pingRoutes struct{}

func (pingRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/test/ping", protect(func(ctx *fasthttp.RequestCtx) { api.OK(ctx, map[string]any{"pong": true}) }))
}
func (pingRoutes) Docs() []openapi.Op {
	return []openapi.Op{{Method: "GET", Path: "/v1/test/ping", Summary: "test"}}
}

// A merchant whose live KYC is not approved gets 403 MERCHANT_KYC_REQUIRED on live routes
// and on creating a live key, while its account routes and sandbox keep working; the
// operator's `svc merchant kyc approve --why` opens live at once (NOTIFY) and `reject`
// closes it again; both are audited and need --why.
func TestMerchantKYCApproveAndReject(t *testing.T) {
	pool, url := pgtest.New(t)
	gw := gatewaytest.New(t, pool, pingRoutes{})
	select {
	case <-gw.Identity.Cache().Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("auth cache listener not ready")
	}
	ctx := context.Background()
	m, err := identity.SeedMerchant(ctx, pool, identity.SeedOptions{Email: "kyc-review@example.test", PasswordHash: "x", KYCApproved: true})
	if err != nil {
		t.Fatal(err)
	}
	_, sk, err := identity.CreateKey(ctx, pool, m.ID, identity.Sandbox, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	_, lk, err := identity.CreateKey(ctx, pool, m.ID, identity.Live, "live, made before the review")
	if err != nil {
		t.Fatal(err)
	}
	approved := authtest.New(t, pool) // the fixture merchant: live approved

	want := func(status int, code, method, path, key string, body any) {
		t.Helper()
		r := gw.Do(t, method, path, key, body)
		if r.Status != status || (code != "" && r.Message != code) {
			t.Fatalf("%s %s: %d %s %s, want %d %s", method, path, r.Status, r.Message, r.Detail, status, code)
		}
	}
	want(403, api.CodeMerchantKYCRequired, "GET", "/v1/test/ping", lk, nil)
	want(403, api.CodeMerchantKYCRequired, "POST", "/v1/api-keys", lk, map[string]string{"name": "more", "environment": "live"})
	want(200, "", "GET", "/v1/auth/me", lk, nil)
	want(200, "", "POST", "/v1/merchant/kyc", lk, map[string]any{"business_type": "limited_company",
		"registration_number": "RC123", "country": "NGA", "address": "1 Marina, Lagos", "director": map[string]string{"first_name": "Ada", "last_name": "Obi"}})
	want(200, "", "GET", "/v1/test/ping", sk, nil)
	want(200, "", "GET", "/v1/test/ping", approved.LiveKey, nil)

	env := databaseEnv(url)
	sh := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, args, env, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	if _, err := sh("merchant", "kyc", "approve", m.Email); err == nil || !strings.Contains(err.Error(), "--why") {
		t.Fatalf("approve without --why: %v", err)
	}
	if _, err := sh("merchant", "kyc", "bless", "--why", "x", m.Email); err == nil {
		t.Fatal("unknown kyc action accepted")
	}
	if _, err := sh("merchant", "kyc", "approve", "--why", "x", "nobody@example.test"); err == nil {
		t.Fatal("unknown merchant accepted")
	}
	want(403, api.CodeMerchantKYCRequired, "GET", "/v1/test/ping", lk, nil) // nothing changed
	waitFor := func(status int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for gw.Do(t, "GET", "/v1/test/ping", lk, nil).Status != status {
			if time.Now().After(deadline) {
				t.Fatalf("live ping not %d 5 s after the review", status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	out, err := sh("merchant", "kyc", "approve", "--why", "documents checked, ticket 7", m.Email)
	if err != nil || !strings.Contains(out, "APPROVED (was PENDING)") {
		t.Fatalf("approve: %v %s", err, out)
	}
	waitFor(200)
	if out, err := sh("merchant", "show", m.Email); err != nil || !strings.Contains(out, "kyc:             sandbox=APPROVED live=APPROVED") {
		t.Fatalf("show: %v %s", err, out)
	}
	want(201, "", "POST", "/v1/api-keys", lk, map[string]string{"name": "more", "environment": "live"})
	if r := gw.Must(t, 200, "GET", "/v1/auth/me", lk, nil); !strings.Contains(string(r.Data), `"kyc_status":"APPROVED"`) {
		t.Fatalf("profile after approval: %s", r.Data)
	}
	if out, err := sh("merchant", "kyc", "reject", "--why", "sanctions hit, ticket 8", m.ID.String()); err != nil || !strings.Contains(out, "REJECTED (was APPROVED)") {
		t.Fatalf("reject: %v %s", err, out)
	}
	waitFor(403)
	want(403, api.CodeMerchantKYCRequired, "GET", "/v1/test/ping", lk, nil)
	want(200, "", "GET", "/v1/test/ping", sk, nil)

	rows, err := pool.Query(ctx, `select action, reason, detail::text from audit_log where subject = $1 order by created_at`, "merchant:"+m.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	var audit []string
	for rows.Next() {
		var action, reason, detail string
		if err := rows.Scan(&action, &reason, &detail); err != nil {
			t.Fatal(err)
		}
		audit = append(audit, action+" | "+reason+" | "+detail)
	}
	if len(audit) != 2 || !strings.HasPrefix(audit[0], "merchant.kyc.approve | documents checked, ticket 7") ||
		!strings.HasPrefix(audit[1], "merchant.kyc.reject | sanctions hit, ticket 8") || !strings.Contains(audit[1], `"before": "APPROVED"`) {
		t.Fatalf("audit rows:\n%s", strings.Join(audit, "\n"))
	}
}
