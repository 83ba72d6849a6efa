package auth

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
	"svc/identity"
)

// Routes is the RouteSet of identity and access (gateway.Deps.Routes).
type Routes struct {
	s    *Service
	idem api.Middleware
}

// Routes returns the route set to register on the gateway.
func (s *Service) Routes() *Routes { return &Routes{s: s, idem: api.OrNone(nil)} }

// Idempotent honours X-Idempotency-Key on key creation and revocation (issue 30): m is
// gateway/idempotency's middleware; nil changes nothing.
func (r *Routes) Idempotent(m api.Middleware) *Routes { r.idem = api.OrNone(m); return r }

// Register adds every /v1/auth, /v1/merchant and /v1/api-keys route. The public /v1/auth
// routes are limited per client address; the rest go through protect.
func (r *Routes) Register(rt *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	s := r.s
	pub := s.limitByIP
	rt.POST("/v1/auth/register", pub(s.handleRegister))
	rt.POST("/v1/auth/verify-email", pub(s.handleVerifyEmail))
	rt.POST("/v1/auth/resend-otp", pub(s.handleResendOTP))
	rt.POST("/v1/auth/login", pub(s.handleLogin))
	rt.POST("/v1/auth/refresh", pub(s.handleRefresh))
	rt.POST("/v1/auth/logout", pub(s.handleLogout))
	rt.POST("/v1/auth/forgot-password", pub(s.handleForgotPassword))
	rt.POST("/v1/auth/reset-password", pub(s.handleResetPassword))

	rt.GET("/v1/auth/me", protect(s.handleMe))
	rt.PATCH("/v1/auth/me/password", protect(s.handleChangePassword))
	rt.PATCH("/v1/merchant/profile", protect(s.handleUpdateProfile))
	rt.POST("/v1/merchant/kyc", protect(s.handleKYC))
	rt.GET(whitelistPath, protect(s.handleGetWhitelist))
	rt.PUT(whitelistPath, protect(s.handlePutWhitelist))

	rt.POST("/v1/api-keys", protect(r.idem(s.handleCreateKey)))
	rt.GET("/v1/api-keys", protect(s.handleListKeys))
	rt.PATCH("/v1/api-keys/{id}/revoke", protect(r.idem(s.handleRevokeKey)))
	rt.DELETE("/v1/api-keys/{id}", protect(s.handleDeleteKey))
}

// Docs describes every route of Register.
func (r *Routes) Docs() []openapi.Op {
	str, email := openapi.Str, openapi.Schema{"type": "string", "format": "email"}
	pw := openapi.Schema{"type": "string", "minLength": 8, "maxLength": maxPassword}
	otp := openapi.Schema{"type": "string", "pattern": "^[0-9]{6}$", "description": "6-digit one-time code from the email"}
	obj := openapi.Obj
	tokens := obj(map[string]openapi.Schema{
		"access_token":             str("JWT (HS256), send as Authorization: Bearer"),
		"token_type":               openapi.Enum("Bearer"),
		"expires_in":               openapi.Int("seconds the access token lives (900)"),
		"expires_at":               openapi.Time(""),
		"refresh_token":            str("opaque; single use: each refresh returns a new one"),
		"refresh_token_expires_at": openapi.Time(""),
	}, "access_token", "token_type", "expires_in", "refresh_token")
	login := obj(map[string]openapi.Schema{
		"access_token": str(""), "token_type": openapi.Enum("Bearer"), "expires_in": openapi.Int(""),
		"expires_at": openapi.Time(""), "refresh_token": str(""), "refresh_token_expires_at": openapi.Time(""),
		"merchant": obj(map[string]openapi.Schema{"id": openapi.UUID(""), "email": str(""), "business_name": str("")}),
	})
	refresh := obj(map[string]openapi.Schema{"refresh_token": str("")}, "refresh_token")
	profile := obj(map[string]openapi.Schema{
		"id": openapi.UUID(""), "email": str(""), "email_verified": openapi.Bool(""), "business_name": str(""),
		"first_name": str(""), "last_name": str(""), "phone": str(""), "website": str(""),
		"country": str("ISO 3166-1 alpha-3"), "address": str(""), "environment": openapi.Enum("sandbox", "live"),
		"kyc_status":       openapi.Enum("NOT_SUBMITTED", "PENDING", "APPROVED", "REJECTED"),
		"kyc_submitted_at": openapi.Nullable(openapi.Time("")), "kyc_reviewed_at": openapi.Nullable(openapi.Time("")),
		"rate_limit_per_minute": openapi.Int(""), "ip_whitelist_enabled": openapi.Bool(""),
		"created_at": openapi.Time(""), "updated_at": openapi.Time(""),
	})
	scopes := openapi.Arr(openapi.Enum(identity.ScopeNames()...))
	scopes["description"] = "read: every GET; trade: orders and sandbox trading funds; payments: customers, virtual accounts, onramps, " +
		"commerce, webhooks, sandbox payment simulation; withdraw: withdrawals, offramps, transfers, recipients. Key management and " +
		"merchant-wide settings need all four (x-required-scope on each operation)."
	key := obj(map[string]openapi.Schema{
		"id": openapi.UUID(""), "name": str(""), "key_prefix": str("first 20 characters"),
		"environment": openapi.Enum("sandbox", "live"), "is_active": openapi.Bool(""), "scopes": scopes,
		"last_used_at": openapi.Nullable(openapi.Time("the latest use, to the minute (written at most once a minute)")), "created_at": openapi.Time(""),
	})
	createdKey := obj(map[string]openapi.Schema{
		"id": openapi.UUID(""), "name": str(""), "key_prefix": str(""), "environment": openapi.Enum("sandbox", "live"),
		"is_active": openapi.Bool(""), "scopes": scopes, "created_at": openapi.Time(""),
		"key": str("the full key: shown only in this answer"),
	})
	profile = openapi.Named("Merchant", profile)
	key = openapi.Named("APIKey", key)
	createdKey = openapi.Named("APIKeyWithSecret", createdKey)
	whitelist := obj(map[string]openapi.Schema{
		"enabled":  openapi.Bool("refuse addresses not in ips"),
		"required": openapi.Bool("the whitelist is mandatory: with no ips every route but this one answers IP_WHITELIST_REQUIRED"),
		"ips":      openapi.Arr(str("IPv4 or IPv6 address or CIDR")),
	}, "enabled")
	message := func(d string) map[int]openapi.Response { return map[int]openapi.Response{200: {Description: d}} }
	authErr := []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeRateLimited}
	with := func(codes ...string) []string { return append(append([]string{}, authErr...), codes...) }
	const tag, mtag, ktag = "auth", "merchant", "api-keys"
	pubDesc := "Public; limited per client address (default 10 requests a minute across /v1/auth), with X-RateLimit-* headers."

	return []openapi.Op{
		{Method: "POST", Path: "/v1/auth/register", Tag: tag, Public: true, Summary: "Create a merchant account and email a verification code", Description: pubDesc,
			Body: obj(map[string]openapi.Schema{"email": email, "password": pw, "business_name": str(""), "first_name": str(""), "last_name": str("")},
				"email", "password", "business_name", "first_name", "last_name"),
			Responses: map[int]openapi.Response{201: {Description: "created, unverified", Data: obj(map[string]openapi.Schema{
				"id": openapi.UUID(""), "email": str(""), "business_name": str(""), "first_name": str(""), "last_name": str(""),
				"email_verified": openapi.Bool(""), "created_at": openapi.Time("")})}},
			Errors: with(api.CodeEmailInUse)},
		{Method: "POST", Path: "/v1/auth/verify-email", Tag: tag, Public: true, Summary: "Verify the email with its one-time code", Description: pubDesc + " A code dies after 5 wrong tries or 10 minutes.",
			Body:      obj(map[string]openapi.Schema{"email": email, "otp": otp}, "email", "otp"),
			Responses: message("verified"), Errors: with(api.CodeInvalidOTP, api.CodeAlreadyVerified)},
		{Method: "POST", Path: "/v1/auth/resend-otp", Tag: tag, Public: true, Summary: "Send a new one-time code (at most one a minute)",
			Description: pubDesc + " The answer is the same whether or not the account exists, is verified, or had a code within the minute.",
			Body:        obj(map[string]openapi.Schema{"email": email, "purpose": openapi.Enum(identity.PurposeVerifyEmail, identity.PurposeResetPassword)}, "email"),
			Responses:   message("sent if the account exists and needs one"), Errors: authErr},
		{Method: "POST", Path: "/v1/auth/login", Tag: tag, Public: true, Summary: "Log in: an access token (15 min) and a refresh token", Description: pubDesc,
			Body:      obj(map[string]openapi.Schema{"email": email, "password": str("")}, "email", "password"),
			Responses: map[int]openapi.Response{200: {Description: "tokens", Data: login}},
			Errors:    with(api.CodeInvalidCredentials, api.CodeEmailNotVerified, api.CodeMerchantSuspended)},
		{Method: "POST", Path: "/v1/auth/refresh", Tag: tag, Public: true, Summary: "Rotate a refresh token: new access and refresh tokens", Description: pubDesc + " Reusing a rotated token revokes its whole family.",
			Body: refresh, Responses: map[int]openapi.Response{200: {Description: "tokens", Data: tokens}},
			Errors: with(api.CodeInvalidRefreshToken, api.CodeTokenRevoked, api.CodeMerchantSuspended)},
		{Method: "POST", Path: "/v1/auth/logout", Tag: tag, Public: true, Summary: "Revoke the refresh token's family", Description: pubDesc,
			Body: refresh, Responses: message("logged out"), Errors: with(api.CodeInvalidRefreshToken)},
		{Method: "POST", Path: "/v1/auth/forgot-password", Tag: tag, Public: true, Summary: "Email a password-reset code", Description: pubDesc,
			Body: obj(map[string]openapi.Schema{"email": email}, "email"), Responses: message("sent if the account exists"), Errors: authErr},
		{Method: "POST", Path: "/v1/auth/reset-password", Tag: tag, Public: true, Summary: "Set a new password with a reset code; logs out every session", Description: pubDesc,
			Body:      obj(map[string]openapi.Schema{"email": email, "otp": otp, "new_password": pw}, "email", "otp", "new_password"),
			Responses: message("password reset"), Errors: with(api.CodeInvalidOTP)},
		{Method: "GET", Path: "/v1/auth/me", Tag: tag, Summary: "The merchant profile with its KYC status in the caller's environment",
			Responses: map[int]openapi.Response{200: {Description: "profile", Data: profile}}, Errors: []string{api.CodeIPNotWhitelisted, api.CodeIPWhitelistRequired, api.CodeMerchantSuspended}},
		{Method: "PATCH", Path: "/v1/auth/me/password", Tag: tag, Summary: "Change the password; logs out every session",
			Body:      obj(map[string]openapi.Schema{"current_password": str(""), "new_password": pw}, "current_password", "new_password"),
			Responses: message("changed"), Errors: []string{api.CodeValidation, api.CodeWrongPassword, api.CodeLiveCredRequired, api.CodeInsufficientScope}},
		{Method: "PATCH", Path: "/v1/merchant/profile", Tag: mtag, Summary: "Change profile fields; only sent fields change",
			Body: obj(map[string]openapi.Schema{"business_name": str(""), "first_name": str(""), "last_name": str(""), "phone": str(""),
				"website": str("http(s) URL"), "country": str("ISO 3166-1 alpha-3"), "address": str("")}),
			Responses: map[int]openapi.Response{200: {Description: "profile", Data: profile}}, Errors: []string{api.CodeValidation, api.CodeLiveCredRequired, api.CodeInsufficientScope}},
		{Method: "POST", Path: "/v1/merchant/kyc", Tag: mtag, Summary: "Submit the merchant's KYC: approved at once in sandbox, PENDING review in live",
			Body: obj(map[string]openapi.Schema{
				"business_type":       openapi.Enum("sole_proprietorship", "partnership", "limited_company", "non_profit"),
				"registration_number": str(""), "country": str("ISO 3166-1 alpha-3"), "address": str(""),
				"director": obj(map[string]openapi.Schema{"first_name": str(""), "last_name": str("")}, "first_name", "last_name"),
			}, "business_type", "registration_number", "country", "address", "director"),
			Responses: map[int]openapi.Response{200: {Description: "KYC status", Data: obj(map[string]openapi.Schema{
				"environment": openapi.Enum("sandbox", "live"), "kyc_status": openapi.Enum("PENDING", "APPROVED", "REJECTED"),
				"submitted_at": openapi.Time(""), "reviewed_at": openapi.Nullable(openapi.Time(""))})}},
			Errors: []string{api.CodeValidation, api.CodeLiveCredRequired, api.CodeInsufficientScope}},
		{Method: "GET", Path: whitelistPath, Tag: mtag, Summary: "The IP whitelist",
			Responses: map[int]openapi.Response{200: {Description: "whitelist", Data: whitelist}}, Errors: []string{api.CodeIPNotWhitelisted}},
		{Method: "PUT", Path: whitelistPath, Tag: mtag, Summary: "Replace the IP whitelist (applies from the next request, in every process)",
			Body: whitelist, Responses: map[int]openapi.Response{200: {Description: "whitelist", Data: whitelist}},
			Errors: []string{api.CodeValidation, api.CodeIPNotWhitelisted, api.CodeLiveCredRequired, api.CodeInsufficientScope}},
		{Method: "POST", Path: "/v1/api-keys", Idempotent: true, Tag: ktag, Summary: "Create an API key; the full key is in this answer only",
			Description: "Either auth method. An API key may only create keys of its own environment (403 FORBIDDEN) and needs every scope. scopes defaults to all four.",
			Body: obj(map[string]openapi.Schema{"name": openapi.Schema{"type": "string", "maxLength": 100}, "environment": openapi.Enum("sandbox", "live"),
				"scopes": scopes}, "name"),
			Responses: map[int]openapi.Response{201: {Description: "created", Data: createdKey}}, Errors: []string{api.CodeValidation, api.CodeForbidden, api.CodeInsufficientScope}},
		{Method: "GET", Path: "/v1/api-keys", Tag: ktag, Summary: "List API keys (an API key sees its own environment's; a bearer token both, or ?environment=)",
			Query: []openapi.Param{
				{Name: "environment", Schema: openapi.Enum("sandbox", "live")},
				{Name: "page", Schema: openapi.Int("1-indexed, default 1")},
				{Name: "limit", Schema: openapi.Int("default 20, at most 100")},
			},
			Responses: map[int]openapi.Response{200: {Description: "data is the array; paging in top-level meta", Data: openapi.Arr(key)}},
			Errors:    []string{api.CodeValidation, api.CodeForbidden}},
		{Method: "PATCH", Path: "/v1/api-keys/{id}/revoke", Idempotent: true, Tag: ktag, Summary: "Revoke a key: refused from the very next request; stays in the list",
			Responses: map[int]openapi.Response{200: {Description: "revoked", Data: key}}, Errors: []string{api.CodeNotFound, api.CodeInsufficientScope}},
		{Method: "DELETE", Path: "/v1/api-keys/{id}", Tag: ktag, Summary: "Delete a key for good",
			Responses: map[int]openapi.Response{200: {Description: "deleted", Data: obj(map[string]openapi.Schema{"id": openapi.UUID(""), "deleted": openapi.Bool("")})}},
			Errors:    []string{api.CodeNotFound, api.CodeInsufficientScope}},
	}
}
