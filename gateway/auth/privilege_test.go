package auth_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/gateway/auth/authtest"
	"svc/identity"
)

// A sandbox key cannot change what live shares: password, profile, merchant KYC, IP
// whitelist (nor mint live keys). A live key or a bearer token can; nothing changes on a
// refusal.
func TestSandboxKeyCannotChangeMerchantWideSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	access, _ := e.login(m.Email, authtest.Password)
	sk := apiKey(m.SandboxKey)
	kyc := map[string]any{"business_type": "limited_company", "registration_number": "RC1", "country": "NGA", "address": "1 Road",
		"director": map[string]string{"first_name": "A", "last_name": "B"}}
	refused := []struct {
		method, path string
		body         any
	}{
		{"PUT", "/v1/merchant/ip-whitelist", map[string]any{"enabled": true, "ips": []string{"10.0.0.1"}}},
		{"PATCH", "/v1/merchant/profile", map[string]any{"business_name": "Renamed by a sandbox key"}},
		{"PATCH", "/v1/auth/me/password", map[string]any{"current_password": authtest.Password, "new_password": "another long password"}},
		{"POST", "/v1/merchant/kyc", kyc},
	}
	for _, c := range refused {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			e.want(e.do(c.method, c.path, c.body, sk), 403, api.CodeLiveCredRequired)
		})
	}
	e.want(e.do("POST", "/v1/api-keys", map[string]any{"name": "x", "environment": "live"}, sk), 403, api.CodeForbidden)

	// Nothing changed.
	me := e.do("GET", "/v1/auth/me", nil, sk)
	e.want(me, 200, "")
	if me.str("business_name") != "Test Merchant" || me.str("kyc_status") != "APPROVED" {
		t.Fatalf("changed by refused calls: %s", me.Raw)
	}
	w := e.do("GET", "/v1/merchant/ip-whitelist", nil, sk) // reading stays allowed
	e.want(w, 200, "")
	if w.data()["enabled"] != false {
		t.Fatalf("whitelist changed: %s", w.Raw)
	}
	e.login(m.Email, authtest.Password) // the password did not change

	// A live key and a bearer token may.
	e.want(e.do("PATCH", "/v1/merchant/profile", map[string]any{"business_name": "By live key"}, apiKey(m.LiveKey)), 200, "")
	e.want(e.do("PATCH", "/v1/merchant/profile", map[string]any{"business_name": "By bearer"}, bearer(access)), 200, "")
	e.want(e.do("POST", "/v1/merchant/kyc", kyc, bearer(access)), 200, "")
	// Sandbox keys still manage sandbox keys.
	e.want(e.do("POST", "/v1/api-keys", map[string]any{"name": "sandbox child"}, sk), 201, "")
}

// Keys carry scopes: chosen at creation (all four by default), listed, and enforced on
// every route; key management needs all of them, so a narrow key cannot mint a wide one.
func TestAPIKeyScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	access, _ := e.login(m.Email, authtest.Password)
	create := func(scopes any) resp {
		body := map[string]any{"name": "scoped", "environment": "sandbox"}
		if scopes != nil {
			body["scopes"] = scopes
		}
		return e.do("POST", "/v1/api-keys", body, bearer(access))
	}
	keyOf := func(scopes ...string) string {
		t.Helper()
		r := create(scopes)
		e.want(r, 201, "")
		if got := fmt.Sprint(r.data()["scopes"]); got != fmt.Sprint(scopes) {
			t.Fatalf("created with %v, answered %s", scopes, got)
		}
		return r.str("key")
	}
	def := create(nil)
	e.want(def, 201, "")
	if got := fmt.Sprint(def.data()["scopes"]); got != "[read trade payments withdraw]" {
		t.Fatalf("default scopes %s", got)
	}
	for _, bad := range []any{[]string{"admin"}, []string{}, "read"} {
		r := create(bad)
		if r.Status != 400 {
			t.Fatalf("scopes %v: %s", bad, r.Raw)
		}
	}
	readTrade := keyOf("read", "trade")
	withdrawOnly := keyOf("withdraw")
	payments := keyOf("payments")

	cases := []struct {
		key          string
		method, path string
		status       int
	}{
		{readTrade, "GET", "/v1/trading/orders", 200},
		{readTrade, "POST", "/v1/trading/orders", 200},
		{readTrade, "POST", "/v1/payments/withdrawals", 403},
		{readTrade, "POST", "/v1/customers", 403},
		{readTrade, "GET", "/v1/auth/me", 200},
		{withdrawOnly, "POST", "/v1/payments/withdrawals", 200},
		{withdrawOnly, "GET", "/v1/trading/orders", 403},
		{withdrawOnly, "POST", "/v1/trading/orders", 403},
		{payments, "POST", "/v1/customers", 200},
		{payments, "POST", "/v1/payments/withdrawals", 403},
		// key management and unknown routes need every scope
		{readTrade, "POST", "/v1/api-keys", 403},
		{payments, "GET", "/v1/test/ping", 403},
		{m.SandboxKey, "GET", "/v1/test/ping", 200},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, map[string]any{"name": "x"}, apiKey(c.key))
		if r.Status != c.status || (c.status == 403 && r.code() != api.CodeInsufficientScope) {
			t.Errorf("%s %s with %s: %d %s, want %d", c.method, c.path, c.key[:16], r.Status, r.code(), c.status)
		}
	}

	// The listing shows every key's scopes.
	l := e.do("GET", "/v1/api-keys?environment=sandbox&limit=100", nil, bearer(access))
	e.want(l, 200, "")
	seen := map[string]bool{}
	for _, k := range l.Body["data"].([]any) {
		seen[fmt.Sprint(k.(map[string]any)["scopes"])] = true
	}
	for _, want := range []string{"[read trade]", "[withdraw]", "[payments]", "[read trade payments withdraw]"} {
		if !seen[want] {
			t.Errorf("listing lacks a key with scopes %s: %s", want, l.Raw)
		}
	}
}

// A refused request (whitelist, suspension) spends no token of the merchant's bucket, and
// sandbox and live have a bucket each.
func TestRefusalsSpendNoRateLimitToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	st := identity.NewStore(e.pool)
	three := 3
	ctx := context.Background()
	if err := st.SetRateLimit(ctx, m.ID, &three, "test", "limit"); err != nil {
		t.Fatal(err)
	}
	ping := func() resp { return e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey)) }
	e.want(e.do("PUT", "/v1/merchant/ip-whitelist", map[string]any{"enabled": true, "ips": []string{"10.0.0.0/8"}}, apiKey(m.LiveKey)), 200, "")
	for i := 0; i < 5; i++ {
		e.want(ping(), 403, api.CodeIPNotWhitelisted)
	}
	if _, err := e.id.SetWhitelist(ctx, m.ID, identity.Whitelist{}); err != nil { // the operator's way back in
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		e.want(ping(), 200, "")
	}
	e.want(ping(), 429, api.CodeRateLimited)

	// Suspended: refused without spending either.
	o := authtest.New(t, e.pool)
	if err := st.SetRateLimit(ctx, o.ID, &three, "test", "limit"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSuspended(ctx, o.ID, true, "test", "test"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey(o.SandboxKey)), 403, api.CodeMerchantSuspended)
	}
	if err := st.SetSuspended(ctx, o.ID, false, "test", "test"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.do("GET", "/v1/test/ping", nil, apiKey(o.SandboxKey)).Status == 200 })
	for i := 0; i < 2; i++ {
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey(o.SandboxKey)), 200, "")
	}
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(o.SandboxKey)), 429, api.CodeRateLimited)
}

// A client that keeps failing costs no database query: unknown keys are remembered, and
// once its failure bucket is empty a key not in memory is refused before the lookup.
func TestThrottledClientCostsNoQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config) { c.AuthRateLimit = 3 })
	m := authtest.New(t, e.pool) // its keys are not cached: never used
	unknown, _, _ := identity.NewAPIKey(identity.Sandbox)
	acquires := func() int64 { return e.pool.Stat().AcquireCount() }
	before := acquires()
	for i := 0; i < 3; i++ {
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey(unknown)), 401, api.CodeUnauthorized)
	}
	if n := acquires() - before; n != 1 {
		t.Fatalf("3 tries of one unknown key cost %d queries, want 1", n)
	}
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(unknown)), 429, api.CodeRateLimited)
	other, _, _ := identity.NewAPIKey(identity.Sandbox)
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(other)), 429, api.CodeRateLimited)
	// Even a real key not yet in memory waits: looking it up is what the throttle saves.
	r := e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey))
	e.want(r, 429, api.CodeRateLimited)
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}
	if n := acquires() - before; n != 1 {
		t.Fatalf("throttled requests cost %d queries, want none after the first", n-1)
	}
	e.clk.advance(time.Minute)
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey)), 200, "")
}

// last_used_at is kept, at a resolution of one minute: a busy key is written at most once a
// minute (and never on the request path: only the flusher writes).
func TestLastUsedAtWrittenAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := authtest.New(t, e.pool)
	ctx := context.Background()
	lastUsed := func() time.Time {
		t.Helper()
		var at *time.Time
		if err := e.pool.QueryRow(ctx, `select last_used_at from api_keys where merchant_id = $1 and environment = 'sandbox'`, m.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		if at == nil {
			return time.Time{}
		}
		return *at
	}
	use := func() {
		t.Helper()
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey(m.SandboxKey)), 200, "")
	}
	use()
	if !lastUsed().IsZero() {
		t.Fatal("last_used_at written on the request path")
	}
	flush := func() {
		t.Helper()
		if err := e.id.Cache().Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	first := lastUsed()
	if first.IsZero() {
		t.Fatal("last_used_at not written by the flusher")
	}
	for i := 0; i < 5; i++ { // 50 s of steady use
		e.clk.advance(10 * time.Second)
		use()
		flush()
	}
	if got := lastUsed(); !got.Equal(first) {
		t.Fatalf("last_used_at rewritten within the minute: %v then %v", first, got)
	}
	e.clk.advance(11 * time.Second)
	use()
	flush()
	if got := lastUsed(); !got.After(first.Add(59 * time.Second)) {
		t.Fatalf("last_used_at %v not advanced a minute after %v", got, first)
	}
}

// Per-address limits take an IPv6 client by its /64: the addresses of one host share a
// bucket.
func TestIPv6ClientsLimitedPer64(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config) { c.AuthRateLimit = 3; c.TrustedProxies = []string{"127.0.0.1/32"} })
	logout := func(from string) resp {
		return e.do("POST", "/v1/auth/logout", map[string]string{"refresh_token": "x"}, "X-Forwarded-For: "+from)
	}
	for i := 1; i <= 3; i++ {
		e.want(logout("2001:db8:1:2::"+strconv.Itoa(i)), 401, api.CodeInvalidRefreshToken)
	}
	e.want(logout("2001:db8:1:2:ffff:ffff:ffff:ffff"), 429, api.CodeRateLimited)
	e.want(logout("2001:db8:1:3::1"), 401, api.CodeInvalidRefreshToken) // the next /64 is another client
	e.want(logout("203.0.113.9"), 401, api.CodeInvalidRefreshToken)
}

// Wrong one-time codes count per account across codes: after OTPDailyFailures in a day, a
// new code does not buy new tries, and even the right code is refused until the day passes.
func TestOTPFailuresCountAcrossCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config) { c.OTPDailyFailures = 7 })
	email := "daily@example.test"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": "password123", "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	wrongTries := func(n int) {
		t.Helper()
		code := e.lastCode(email)
		for i, tried := 0, 0; tried < n; i++ {
			guess := fmt.Sprintf("%06d", 100000+i)
			if guess == code {
				continue
			}
			e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": guess}), 400, api.CodeInvalidOTP)
			tried++
		}
	}
	wrongTries(5) // the first code is dead
	e.clk.advance(time.Minute + time.Second)
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")
	wrongTries(2) // 7 today
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": e.lastCode(email)}), 400, api.CodeInvalidOTP)
	// A day later the account may try again.
	e.clk.advance(24*time.Hour + time.Minute)
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": e.lastCode(email)}), 200, "")
}

// resend-otp answers alike for unknown, unverified, verified and cooling down accounts
// (status, code, detail and message); verify-email alike for unknown and unverified ones,
// while a verified email is 422 ALREADY_VERIFIED as the spec says (issue 32 item 6:
// registration already tells whether an email is in use).
func TestOTPAnswersTellNothingAboutTheAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	verified, _ := e.registered()
	cooling := "cool-" + uuid.NewString()[:8] + "@example.test"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": cooling, "password": "password123", "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	unknown := "nobody-" + uuid.NewString()[:8] + "@example.test"
	sig := func(r resp) string { return fmt.Sprintf("%d %s %v", r.Status, r.Raw, r.Header.Get("Retry-After")) }
	for _, purpose := range []string{identity.PurposeVerifyEmail, identity.PurposeResetPassword} {
		want := sig(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": unknown, "purpose": purpose}))
		for _, email := range []string{verified, cooling} {
			if got := sig(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email, "purpose": purpose})); got != want {
				t.Errorf("resend-otp %s for %s: %s, for an unknown email: %s", purpose, email, got, want)
			}
		}
	}
	want := sig(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": unknown, "otp": "123456"}))
	if got := sig(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": cooling, "otp": "123456"})); got != want {
		t.Errorf("verify-email for %s: %s, for an unknown email: %s", cooling, got, want)
	}
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": verified, "otp": "123456"}), 422, api.CodeAlreadyVerified)
}

// Password hashing is bounded: with every slot and queue place taken, a call answers 429
// with Retry-After at once; reset-password checks the code before hashing, so a wrong code
// is answered without a slot, and a right one survives a busy answer.
func TestPasswordHashingIsBounded(t *testing.T) {
	t.Parallel()
	// The service hashes under a limit of one slot and no queue, which the test takes as a
	// flood of logins would (the hasher has no test-only way in: issue 32 item 8).
	limit := identity.NewHashLimit(1, 1, 50*time.Millisecond)
	e := newEnv(t, func(c *config) { c.Config.HashLimit = limit })
	m := authtest.New(t, e.pool)
	e.want(e.do("POST", "/v1/auth/forgot-password", map[string]string{"email": m.Email}), 200, "")
	code := e.lastCode(m.Email)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	if err := limit.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	release := limit.Release
	defer func() {
		if release != nil {
			release()
		}
	}()
	start := time.Now()
	r := e.do("POST", "/v1/auth/login", map[string]string{"email": m.Email, "password": authtest.Password})
	e.want(r, 429, api.CodeRateLimited)
	if r.Header.Get("Retry-After") == "" || time.Since(start) > 2*time.Second {
		t.Fatalf("busy answer after %v, headers %v", time.Since(start), r.Header)
	}
	e.want(e.do("POST", "/v1/auth/login", map[string]string{"email": "nobody@example.test", "password": "whatever1"}), 429, api.CodeRateLimited)
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": m.Email, "otp": wrong, "new_password": "a new long password"}), 400, api.CodeInvalidOTP)
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": m.Email, "otp": code, "new_password": "a new long password"}), 429, api.CodeRateLimited)
	release()
	release = nil
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": m.Email, "otp": code, "new_password": "a new long password"}), 200, "")
	e.login(m.Email, "a new long password")
}
