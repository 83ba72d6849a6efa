package auth_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	"svc/identity"
)

func TestMerchantRateLimitHeadersAnd429(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	three := 3
	if err := identity.NewStore(e.pool).SetRateLimit(context.Background(), m.ID, &three, "test", "limit test"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey)).Header.Get("X-RateLimit-Limit") == "3"
	})
	e.clk.advance(time.Minute) // refill
	for i := 0; i < 3; i++ {
		r := e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey))
		e.want(r, 200, "")
		if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(2-i) || r.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d headers %v", i, r.Header)
		}
	}
	// The bucket is per (merchant, environment): live has its own; a bearer token for
	// sandbox shares the sandbox key's.
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(m.LiveKey)), 200, "")
	access, _ := e.login(m.Email, authtest.Password)
	e.want(e.do("GET", "/v1/test/ping", nil, bearer(access)), 429, "RATE_LIMITED")
	r := e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey))
	e.want(r, 429, "RATE_LIMITED")
	ra, _ := strconv.Atoi(r.Header.Get("Retry-After"))
	if ra < 1 || ra > 20 || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers %v", r.Header)
	}
	e.clk.advance(time.Duration(ra) * time.Second)
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey)), 200, "")

	// The default applies to other merchants.
	other := authtest.New(t, e.pool)
	if err := identity.NewStore(e.pool).SetRateLimit(context.Background(), other.ID, nil, "test", "default"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return e.do("GET", "/v1/test/ping", nil, apiKey(other.SandboxKey)).Header.Get("X-RateLimit-Limit") == "100"
	})
}

func TestAuthRoutesLimitedPerIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config) { c.AuthRateLimit = 4 })
	for i := 0; i < 4; i++ {
		r := e.do("POST", "/v1/auth/login", map[string]string{"email": "x@example.test", "password": "whatever1"})
		e.want(r, 401, "INVALID_CREDENTIALS")
		if r.Header.Get("X-RateLimit-Limit") != "4" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(3-i) {
			t.Fatalf("headers %v", r.Header)
		}
	}
	r := e.do("POST", "/v1/auth/forgot-password", map[string]string{"email": "x@example.test"})
	e.want(r, 429, "RATE_LIMITED")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Another address has its own bucket.
	e.want(e.doAt(e.base6, "POST", "/v1/auth/forgot-password", map[string]string{"email": "x@example.test"}), 200, "")
	// Failed authentication on protected routes is limited per address too.
	for i := 0; i < 4; i++ {
		e.want(e.doAt(e.base6, "GET", "/v1/test/ping", nil, apiKey("svc_sk_test_nope")), 401, "UNAUTHORIZED")
	}
	e.want(e.doAt(e.base6, "GET", "/v1/test/ping", nil, apiKey("svc_sk_test_nope")), 429, "RATE_LIMITED")
}
