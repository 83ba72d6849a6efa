package auth

import "svc/gateway/api"

// Error is a rule of identity and access refusing a request; its code maps to the HTTP
// status through the one table in gateway/api.
type Error struct {
	code   string
	detail string
}

func (e *Error) Error() string { return e.detail }

// APICode is the machine-readable code (gateway/api maps it to a status).
func (e *Error) APICode() string { return e.code }

// Is matches errors by code, so errors.Is(err, ErrInvalidOTP) works on wrapped errors.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.code == e.code
}

func newErr(code, detail string) *Error { return &Error{code: code, detail: detail} }

// The errors this package's services return.
var (
	ErrEmailInUse          = newErr(api.CodeEmailInUse, "an account with this email already exists")
	ErrInvalidCredentials  = newErr(api.CodeInvalidCredentials, "email or password is incorrect")
	ErrEmailNotVerified    = newErr(api.CodeEmailNotVerified, "verify your email before logging in")
	ErrInvalidOTP          = newErr(api.CodeInvalidOTP, "the code is incorrect or has expired")
	ErrAlreadyVerified     = newErr(api.CodeAlreadyVerified, "the email is already verified")
	ErrOTPCooldown         = newErr(api.CodeOTPCooldown, "a code was sent recently; wait before asking again")
	ErrInvalidRefreshToken = newErr(api.CodeInvalidRefreshToken, "the refresh token is missing, malformed or expired")
	ErrTokenRevoked        = newErr(api.CodeTokenRevoked, "the refresh token was already used or revoked; log in again")
	ErrWrongPassword       = newErr(api.CodeWrongPassword, "current_password is incorrect")
	ErrUnauthorized        = newErr(api.CodeUnauthorized, "a valid API key (X-Api-Key) or bearer token is required")
	ErrSuspended           = newErr(api.CodeMerchantSuspended, "the merchant account is suspended")
	ErrNotFound            = newErr(api.CodeNotFound, "not found")
	ErrIPNotWhitelisted    = newErr(api.CodeIPNotWhitelisted, "the request address is not on the merchant's IP whitelist")
	ErrWhitelistRequired   = newErr(api.CodeIPWhitelistRequired, "the merchant requires an IP whitelist but none is configured; set one with PUT /v1/merchant/ip-whitelist")
	ErrForbiddenEnv        = newErr(api.CodeForbidden, "an API key can only manage keys of its own environment")
	// ErrLiveCredentialRequired refuses a sandbox key on a route that changes what the live
	// environment shares (password, profile, merchant KYC, IP whitelist).
	ErrLiveCredentialRequired = newErr(api.CodeLiveCredRequired, "a sandbox key cannot change merchant-wide settings (password, profile, KYC, IP whitelist); use a bearer token or a live key")
	// ErrHashBusy: every password-hashing slot is taken and the queue is full (429 with
	// Retry-After), so a login flood cannot pile up memory or goroutines.
	ErrHashBusy = newErr(api.CodeRateLimited, "too many password checks in progress; retry in a second")
)
