package auth_test

import (
	"context"
	"strings"
	"testing"
)

func TestRegisterVerifyLoginCreateKeyCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, pw := "ada@example.test", "a long enough password"
	reg := map[string]string{"email": email, "password": pw, "business_name": "Acme", "first_name": "Ada", "last_name": "Lovelace"}
	r := e.do("POST", "/v1/auth/register", reg)
	e.want(r, 201, "")
	if r.data()["email_verified"] != false {
		t.Fatalf("register answer %s", r.Raw)
	}
	reg["email"] = "ADA@example.test"
	e.want(e.do("POST", "/v1/auth/register", reg), 409, "EMAIL_IN_USE")

	e.want(e.do("POST", "/v1/auth/login", map[string]string{"email": email, "password": pw}), 403, "EMAIL_NOT_VERIFIED")
	code := e.lastCode(email)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": wrong}), 400, "INVALID_OTP")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": code}), 200, "")
	// An email already verified is 422 ALREADY_VERIFIED, as the spec says, whatever the code
	// (registration already tells whether an email is in use).
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": code}), 422, "ALREADY_VERIFIED")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": strings.ToUpper(email), "otp": wrong}), 422, "ALREADY_VERIFIED")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email}), 422, "ALREADY_VERIFIED")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": "12"}), 422, "ALREADY_VERIFIED")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": "nobody@example.test", "otp": code}), 400, "INVALID_OTP")
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")

	access, _ := e.login(email, pw)
	me := e.do("GET", "/v1/auth/me", nil, bearer(access))
	e.want(me, 200, "")
	if me.str("kyc_status") != "NOT_SUBMITTED" || me.str("environment") != "sandbox" || me.str("email") != email {
		t.Fatalf("profile %s", me.Raw)
	}
	if _, ok := me.data()["password_hash"]; ok {
		t.Fatal("profile shows the password hash")
	}
	kyc := e.do("POST", "/v1/merchant/kyc", map[string]any{"business_type": "limited_company", "registration_number": "RC123",
		"country": "nga", "address": "1 Marina, Lagos", "director": map[string]string{"first_name": "Ada", "last_name": "L"}}, bearer(access))
	e.want(kyc, 200, "")
	if kyc.str("kyc_status") != "APPROVED" {
		t.Fatalf("sandbox KYC %s", kyc.Raw)
	}
	live := e.do("GET", "/v1/auth/me", nil, bearer(access), "X-Svc-Environment: live")
	if live.str("kyc_status") != "NOT_SUBMITTED" || live.str("environment") != "live" {
		t.Fatalf("live profile %s", live.Raw)
	}
	p := e.do("PATCH", "/v1/merchant/profile", map[string]any{"business_name": "Acme Ltd", "country": "NGA"}, bearer(access))
	e.want(p, 200, "")
	if p.str("business_name") != "Acme Ltd" || p.str("first_name") != "Ada" {
		t.Fatalf("patched %s", p.Raw)
	}
	e.want(e.do("PATCH", "/v1/merchant/profile", map[string]any{"country": "Nigeria"}, bearer(access)), 400, "VALIDATION_ERROR")

	ck := e.do("POST", "/v1/api-keys", map[string]string{"name": "server"}, bearer(access))
	e.want(ck, 201, "")
	key := ck.str("key")
	if !strings.HasPrefix(key, "svc_sk_test_") || len(key) != 44 || ck.str("key_prefix") != key[:20] || ck.str("environment") != "sandbox" {
		t.Fatalf("created key %s", ck.Raw)
	}
	ping := e.do("GET", "/v1/test/ping", nil, apiKey(key))
	e.want(ping, 200, "")
	if ping.str("environment") != "sandbox" || ping.str("method") != "api_key" {
		t.Fatalf("ping %s", ping.Raw)
	}
	list := e.do("GET", "/v1/api-keys", nil, apiKey(key))
	e.want(list, 200, "")
	arr, _ := list.Body["data"].([]any)
	if len(arr) != 1 || strings.Contains(list.Raw, key) || list.Body["meta"] == nil {
		t.Fatalf("list %s", list.Raw)
	}
	if err := e.id.Cache().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	list = e.do("GET", "/v1/api-keys", nil, bearer(access))
	if k0 := list.Body["data"].([]any)[0].(map[string]any); k0["last_used_at"] == nil || k0["is_active"] != true {
		t.Fatalf("last_used_at after flush: %s", list.Raw)
	}
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/auth/register", map[string]string{"email": "nope", "password": "short", "business_name": "", "first_name": "A", "last_name": "B"})
	e.want(r, 400, "VALIDATION_ERROR")
	for _, want := range []string{`"field":"password","message":"must be at least 8 characters"`, `"field":"email"`, `"field":"business_name"`} {
		if !strings.Contains(r.Raw, want) {
			t.Errorf("missing %s in %s", want, r.Raw)
		}
	}
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": strings.Repeat("x", 101)}), 401, "UNAUTHORIZED")
	_, sk := mkKeyMerchant(t, e)
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": strings.Repeat("x", 101)}, apiKey(sk)), 400, "VALIDATION_ERROR")
	e.want(e.do("POST", "/v1/api-keys", map[string]string{"name": "k", "environment": "prod"}, apiKey(sk)), 400, "VALIDATION_ERROR")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": "a@b.c", "otp": "12ab56"}), 400, "VALIDATION_ERROR")
}

func TestResendCooldown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email := "cool@example.test"
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": "password123", "business_name": "B", "first_name": "A", "last_name": "B"}), 201, "")
	first := e.lastCode(email)
	// Within the cooldown: the same answer as ever, and no new code.
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")
	if n := e.mails(email); n != 1 {
		t.Fatalf("%d mails within the cooldown, want 1", n)
	}
	e.clk.advance(61 * 1e9)
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": email}), 200, "")
	// The old code is retired by the new one.
	second := e.lastCode(email)
	if first != second {
		e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": first}), 400, "INVALID_OTP")
	}
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": second}), 200, "")
	// Unknown emails answer like known ones.
	e.want(e.do("POST", "/v1/auth/resend-otp", map[string]string{"email": "nobody@example.test"}), 200, "")
}

func TestForgotAndResetPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, pw := e.registered()
	_, refresh := e.login(email, pw)
	e.want(e.do("POST", "/v1/auth/forgot-password", map[string]string{"email": email}), 200, "")
	e.want(e.do("POST", "/v1/auth/forgot-password", map[string]string{"email": "ghost@example.test"}), 200, "")
	code := e.lastCode(email)
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": email, "otp": code, "new_password": "short"}), 400, "VALIDATION_ERROR")
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": email, "otp": code, "new_password": "brand new password"}), 200, "")
	e.want(e.do("POST", "/v1/auth/reset-password", map[string]string{"email": email, "otp": code, "new_password": "another password"}), 400, "INVALID_OTP")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh}), 401, "TOKEN_REVOKED")
	e.want(e.do("POST", "/v1/auth/login", map[string]string{"email": email, "password": pw}), 401, "INVALID_CREDENTIALS")
	e.login(email, "brand new password")
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	email, pw := e.registered()
	access, refresh := e.login(email, pw)
	e.want(e.do("PATCH", "/v1/auth/me/password", map[string]string{"current_password": "wrong password", "new_password": "new password 1"}, bearer(access)), 400, "WRONG_PASSWORD")
	e.want(e.do("PATCH", "/v1/auth/me/password", map[string]string{"new_password": "new password 1"}, bearer(access)), 400, "VALIDATION_ERROR")
	e.want(e.do("PATCH", "/v1/auth/me/password", map[string]string{"current_password": pw, "new_password": "new password 1"}, bearer(access)), 200, "")
	e.want(e.do("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh}), 401, "TOKEN_REVOKED")
	e.login(email, "new password 1")
}
