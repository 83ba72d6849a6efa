package auth_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"svc/gateway/auth/authtest"
	"svc/identity"
)

func mkKeyMerchant(t *testing.T, e *env) (authtest.Merchant, string) {
	t.Helper()
	m := authtest.New(t, e.pool)
	return m, m.SandboxKey
}

func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBadJWTsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m, _ := mkKeyMerchant(t, e)
	now := time.Now()
	good := jwt.MapClaims{"iss": "svc", "aud": "svc-api", "sub": m.ID.String(), "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range good {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	// The control: a well-made token works, so each refusal below is about its one flaw.
	e.want(e.do("GET", "/v1/test/ping", nil, bearer(sign(t, jwt.SigningMethodHS256, []byte(testSecret), good))), 200, "")

	noneTok := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good)
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	parts := strings.Split(sign(t, jwt.SigningMethodHS256, []byte(testSecret), good), ".")
	cases := map[string]string{
		"expired":           sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("exp", now.Add(-time.Second).Unix())),
		"no expiry":         sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("exp", nil)),
		"wrong secret":      sign(t, jwt.SigningMethodHS256, []byte(testSecret+"x"), good),
		"alg none":          noneTok,
		"alg none, HS body": hdr + "." + parts[1] + ".",
		"HS512":             sign(t, jwt.SigningMethodHS512, []byte(testSecret), good),
		"other issuer":      sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("iss", "evil")),
		"other audience":    sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("aud", "other")),
		"not a uuid":        sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("sub", "admin")),
		"future iat":        sign(t, jwt.SigningMethodHS256, []byte(testSecret), with("iat", now.Add(time.Hour).Unix())),
		"malformed":         "not.a.jwt",
		"garbage":           "abc",
		"tampered payload":  parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"`+uuid.NewString()+`","exp":9999999999,"iss":"svc","aud":"svc-api"}`)) + "." + parts[2],
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			e.want(e.do("GET", "/v1/test/ping", nil, bearer(cases[n])), 401, "UNAUTHORIZED")
		})
	}
	t.Run("issued token expires after 15 minutes", func(t *testing.T) {
		email, pw := e.registered()
		access, _ := e.login(email, pw)
		e.want(e.do("GET", "/v1/auth/me", nil, bearer(access)), 200, "")
		e.clk.advance(15*time.Minute + time.Second)
		defer e.clk.advance(-(15*time.Minute + time.Second))
		e.want(e.do("GET", "/v1/auth/me", nil, bearer(access)), 401, "UNAUTHORIZED")
	})
	t.Run("no credentials", func(t *testing.T) {
		e.want(e.do("GET", "/v1/test/ping", nil), 401, "UNAUTHORIZED")
		e.want(e.do("GET", "/v1/test/ping", nil, "Authorization: Basic YTpi"), 401, "UNAUTHORIZED")
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey("svc_sk_test_"+strings.Repeat("a", 32))), 401, "UNAUTHORIZED")
		e.want(e.do("GET", "/v1/test/ping", nil, apiKey("sk_live_nope")), 401, "UNAUTHORIZED")
	})
}

func TestRefreshRotationAndReuseRevokesFamily(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, pw := e.registered()
	_, r1 := e.login(email, pw)
	_, other := e.login(email, pw) // a second session (family)

	a := e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": r1})
	e.want(a, 200, "")
	r2 := a.str("refresh_token")
	if r2 == "" || r2 == r1 || a.str("access_token") == "" || a.data()["expires_in"] != float64(900) {
		t.Fatalf("refresh answer %s", a.Raw)
	}
	e.want(e.do("GET", "/v1/auth/me", nil, bearer(a.str("access_token"))), 200, "")
	// r1 was rotated: using it again is reuse and kills the family, r2 included.
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": r1}), 401, "TOKEN_REVOKED")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": r2}), 401, "TOKEN_REVOKED")
	// The other session is untouched.
	b := e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": other})
	e.want(b, 200, "")

	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": "svc_rt_nope"}), 401, "INVALID_REFRESH_TOKEN")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{}), 401, "INVALID_REFRESH_TOKEN")
	e.want(e.do("POST", "/v1/auth/refresh", nil), 401, "INVALID_REFRESH_TOKEN")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": "svc_rt_" + strings.Repeat("A", 43)}), 401, "INVALID_REFRESH_TOKEN")

	// Logout revokes the family.
	r3 := b.str("refresh_token")
	e.want(e.do("POST", "/v1/auth/logout", map[string]string{"refresh_token": r3}), 200, "")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": r3}), 401, "TOKEN_REVOKED")

	// Expired refresh token.
	_, r4 := e.login(email, pw)
	e.clk.advance(31 * 24 * time.Hour)
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": r4}), 401, "INVALID_REFRESH_TOKEN")
}

func TestRevokedAndDeletedKeysRefusedOnNextRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m, sk := mkKeyMerchant(t, e)
	c := e.do("POST", "/v1/api-keys", map[string]string{"name": "second"}, apiKey(sk))
	e.want(c, 201, "")
	k2, id2 := c.str("key"), c.str("id")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(k2)), 200, "") // now cached
	r := e.do("PATCH", "/v1/api-keys/"+id2+"/revoke", nil, apiKey(sk))
	e.want(r, 200, "")
	if r.data()["is_active"] != false {
		t.Fatalf("revoke answer %s", r.Raw)
	}
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(k2)), 401, "UNAUTHORIZED")
	// Still listed, inactive.
	l := e.do("GET", "/v1/api-keys", nil, apiKey(sk))
	if !strings.Contains(l.Raw, id2) {
		t.Fatalf("revoked key not listed: %s", l.Raw)
	}

	c = e.do("POST", "/v1/api-keys", map[string]string{"name": "third"}, apiKey(sk))
	k3, id3 := c.str("key"), c.str("id")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(k3)), 200, "")
	e.want(e.do("DELETE", "/v1/api-keys/"+id3, nil, apiKey(sk)), 200, "")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(k3)), 401, "UNAUTHORIZED")
	e.want(e.do("DELETE", "/v1/api-keys/"+id3, nil, apiKey(sk)), 404, "NOT_FOUND")
	// A key can revoke itself; it dies at once.
	var selfID string
	for _, it := range e.do("GET", "/v1/api-keys", nil, apiKey(sk)).Body["data"].([]any) {
		if it.(map[string]any)["key_prefix"] == sk[:20] {
			selfID = it.(map[string]any)["id"].(string)
		}
	}
	e.want(e.do("PATCH", "/v1/api-keys/"+selfID+"/revoke", nil, apiKey(sk)), 200, "")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk)), 401, "UNAUTHORIZED")
	_ = m
}

// Another process (its own Service and cache, same database) learns of a revocation
// through LISTEN/NOTIFY.
func TestRevocationReachesOtherProcess(t *testing.T) {
	t.Parallel()
	e1 := newEnv(t)
	e2 := newEnvOn(t, e1.pool, e1.url)
	_, sk := mkKeyMerchant(t, e1)
	c := e1.do("POST", "/v1/api-keys", map[string]string{"name": "shared"}, apiKey(sk))
	k, id := c.str("key"), c.str("id")
	e2.want(e2.do("GET", "/v1/test/ping", nil, apiKey(k)), 200, "") // cached in process 2
	e1.want(e1.do("PATCH", "/v1/api-keys/"+id+"/revoke", nil, apiKey(sk)), 200, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := e2.do("GET", "/v1/test/ping", nil, apiKey(k))
		if r.Status == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process 2 still accepts the revoked key: %d", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLiveAndTestKeysSeeDifferentData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m, sk := mkKeyMerchant(t, e)
	lk := m.LiveKey
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": "sandbox extra"}, apiKey(sk)), 201, "")
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": "live extra", "environment": "live"}, apiKey(lk)), 201, "")
	// A sandbox key cannot mint a live key.
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": "escalate", "environment": "live"}, apiKey(sk)), 403, "FORBIDDEN")
	envs := func(r resp) map[string]int {
		out := map[string]int{}
		for _, it := range r.Body["data"].([]any) {
			out[it.(map[string]any)["environment"].(string)]++
		}
		return out
	}
	ls, ll := e.do("GET", "/v1/api-keys", nil, apiKey(sk)), e.do("GET", "/v1/api-keys", nil, apiKey(lk))
	if g := envs(ls); g["sandbox"] != 2 || g["live"] != 0 {
		t.Fatalf("test key sees %v", g)
	}
	if g := envs(ll); g["live"] != 2 || g["sandbox"] != 0 {
		t.Fatalf("live key sees %v", g)
	}
	if e.do("GET", "/v1/test/ping", nil, apiKey(lk)).str("environment") != "live" {
		t.Fatal("live key is not live")
	}
	// A live key cannot revoke a sandbox key: 404, as if absent.
	sid := ls.Body["data"].([]any)[0].(map[string]any)["id"].(string)
	e.want(e.do("PATCH", "/v1/api-keys/"+sid+"/revoke", nil, apiKey(lk)), 404, "NOT_FOUND")
}

func TestOtherMerchantsKeyGets404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, skA := mkKeyMerchant(t, e)
	_, skB := mkKeyMerchant(t, e)
	idA := e.do("GET", "/v1/api-keys", nil, apiKey(skA)).Body["data"].([]any)[0].(map[string]any)["id"].(string)
	e.want(e.do("PATCH", "/v1/api-keys/"+idA+"/revoke", nil, apiKey(skB)), 404, "NOT_FOUND")
	e.want(e.do("DELETE", "/v1/api-keys/"+idA, nil, apiKey(skB)), 404, "NOT_FOUND")
	e.want(e.do("DELETE", "/v1/api-keys/not-a-uuid", nil, apiKey(skB)), 404, "NOT_FOUND")
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(skA)), 200, "") // untouched
}

func TestOTPBruteForceStopsAfterFiveTries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email := "brute@example.test"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": "password123", "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	code := e.lastCode(email)
	tried := 0
	for i := 0; tried < 5; i++ {
		guess := strings.Repeat(string(rune('0'+i)), 6)
		if guess == code {
			continue
		}
		e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": guess}), 400, "INVALID_OTP")
		tried++
	}
	// The right code no longer works: the code is dead.
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": code}), 400, "INVALID_OTP")
	// A fresh code (after the cooldown) does.
	e.clk.advance(time.Minute + time.Second)
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": e.lastCode(email)}), 200, "")
}

func TestOTPExpiresAfterTenMinutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email := "late@example.test"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": "password123", "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	e.clk.advance(10*time.Minute + time.Second)
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": e.lastCode(email)}), 400, "INVALID_OTP")
}

func TestLoginTimingForUnknownEmail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, _ := e.registered()
	ghost := "ghost-" + uuid.NewString()[:6] + "@example.test"
	try := func(em string) time.Duration {
		start := time.Now()
		e.want(e.do("POST", "/v1/auth/login", map[string]string{"email": em, "password": "wrong password"}), 401, "INVALID_CREDENTIALS")
		return time.Since(start)
	}
	// Interleaved, so load from elsewhere on the machine falls on both alike.
	var ks, us []time.Duration
	for i := 0; i < 15; i++ {
		ks, us = append(ks, try(email)), append(us, try(ghost))
	}
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	known, unknown := med(ks), med(us)
	ratio := float64(unknown) / float64(known)
	t.Logf("median login: known email %v, unknown email %v (ratio %.2f)", known, unknown, ratio)
	// Without the dummy verification the ratio is about 0.03. The bound is wide because a
	// loaded 2-core machine (other test packages run beside this one) moves single samples
	// by tens of milliseconds; the side channel it guards against is a factor of 30.
	if ratio < 0.2 || ratio > 5 {
		t.Fatalf("unknown-email login takes %v vs %v for a known email: timing tells them apart", unknown, known)
	}
}

func TestSuspendedMerchantIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m, sk := mkKeyMerchant(t, e)
	e.want(e.do("GET", "/v1/test/ping", nil, apiKey(sk)), 200, "")
	if err := identity.NewStore(e.pool).SetSuspended(context.Background(), m.ID, true, "test", "fraud check"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.do("GET", "/v1/test/ping", nil, apiKey(sk)).code() == "MERCHANT_SUSPENDED" })
	e.want(e.do("POST", "/v1/auth/login", map[string]string{"email": m.Email, "password": authtest.Password}), 403, "MERCHANT_SUSPENDED")
	_ = identity.NewStore(e.pool).SetSuspended(context.Background(), m.ID, false, "test", "cleared")
	waitFor(t, func() bool { return e.do("GET", "/v1/test/ping", nil, apiKey(sk)).Status == 200 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// No secret (password, password hash, key, key hash, refresh token, access token, one-time
// code) appears in a response other than the one that hands it out, nor in any log line.
func TestNoSecretInResponsesOrLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, pw := "secret@example.test", "my very secret password"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": pw, "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	code := e.lastCode(email)
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": code}), 200, "")
	lr := e.do("POST", "/v1/auth/login", map[string]string{"email": email, "password": pw})
	access, refresh := lr.str("access_token"), lr.str("refresh_token")
	e.do("POST", "/v1/auth/login", map[string]string{"email": email, "password": pw + "x"})
	rr := e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh})
	access2, refresh2 := rr.str("access_token"), rr.str("refresh_token")
	e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh}) // reuse: logged as a warning
	kr := e.do("POST", "/v1/api-keys", map[string]string{"name": "k"}, bearer(access2))
	key := kr.str("key")
	e.do("GET", "/v1/test/ping", nil, apiKey(key))
	e.do("GET", "/v1/api-keys", nil, apiKey(key))
	e.do("GET", "/v1/auth/me", nil, apiKey(key))
	e.do("PATCH", "/v1/api-keys/"+kr.str("id")+"/revoke", nil, apiKey(key))
	e.do("GET", "/v1/test/ping", nil, apiKey(key))
	e.do("PATCH", "/v1/auth/me/password", map[string]string{"current_password": pw, "new_password": pw + "2"}, bearer(access2))
	e.do("POST", "/v1/auth/forgot-password", map[string]string{"email": email})

	var pwHash string
	if err := e.pool.QueryRow(context.Background(), `select password_hash from merchants where email = $1`, email).Scan(&pwHash); err != nil {
		t.Fatal(err)
	}
	keyHash := identity.HashSecret(key)
	secrets := map[string]string{
		"password": pw, "password hash": pwHash, "argon2 marker": "$argon2id$", "api key": key,
		"api key hash (hex)": hex.EncodeToString(keyHash), "api key hash (base64)": base64.StdEncoding.EncodeToString(keyHash),
		"access token": access, "access token 2": access2, "refresh token": refresh, "refresh token 2": refresh2,
		"one-time code": `"` + code + `"`,
	}
	issuedIn := map[string]int{}
	for i, b := range e.bodies {
		for name, s := range secrets {
			if strings.Contains(b, s) {
				issuedIn[name]++
				allowed := (name == "api key" && b == kr.Raw) ||
					((name == "access token" || name == "refresh token") && b == lr.Raw) ||
					((name == "access token 2" || name == "refresh token 2") && b == rr.Raw)
				if !allowed {
					t.Errorf("%s in response %d: %s", name, i, b)
				}
			}
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "api key created") {
		t.Fatalf("the log sink saw nothing: %q", logs)
	}
	for name, s := range secrets {
		if name == "one-time code" {
			if regexp.MustCompile(`(^|[^0-9A-Za-z.])` + code + `([^0-9A-Za-z]|$)`).MatchString(logs) {
				t.Errorf("one-time code in the log")
			}
			continue
		}
		if strings.Contains(logs, s) {
			t.Errorf("%s in the log", name)
		}
	}
}
