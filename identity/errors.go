package identity

// Error is a rule of identity and access refusing a request. Its code is the API's error
// code (the gateway maps it to a status through its one table).
type Error struct {
	code   string
	detail string
}

func (e *Error) Error() string { return e.detail }

// APICode is the machine-readable code.
func (e *Error) APICode() string { return e.code }

// Is matches errors by code, so errors.Is(err, ErrInvalidOTP) works on wrapped errors.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.code == e.code
}

// NewError returns a refusal with an API code and a sentence for people.
func NewError(code, detail string) *Error { return &Error{code: code, detail: detail} }

// The API codes of this package's refusals.
const (
	CodeEmailInUse          = "EMAIL_IN_USE"
	CodeInvalidCredentials  = "INVALID_CREDENTIALS"
	CodeEmailNotVerified    = "EMAIL_NOT_VERIFIED"
	CodeInvalidOTP          = "INVALID_OTP"
	CodeAlreadyVerified     = "ALREADY_VERIFIED"
	CodeOTPCooldown         = "OTP_COOLDOWN"
	CodeInvalidRefreshToken = "INVALID_REFRESH_TOKEN"
	CodeTokenRevoked        = "TOKEN_REVOKED"
	CodeWrongPassword       = "WRONG_PASSWORD"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeMerchantSuspended   = "MERCHANT_SUSPENDED"
	CodeMerchantKYCRequired = "MERCHANT_KYC_REQUIRED"
	CodeNotFound            = "NOT_FOUND"
	CodeIPNotWhitelisted    = "IP_NOT_WHITELISTED"
	CodeIPWhitelistRequired = "IP_WHITELIST_REQUIRED"
	CodeForbidden           = "FORBIDDEN"
	CodeRateLimited         = "RATE_LIMITED"
)

// The errors this package's services return.
var (
	ErrEmailInUse          = NewError(CodeEmailInUse, "an account with this email already exists")
	ErrInvalidCredentials  = NewError(CodeInvalidCredentials, "email or password is incorrect")
	ErrEmailNotVerified    = NewError(CodeEmailNotVerified, "verify your email before logging in")
	ErrInvalidOTP          = NewError(CodeInvalidOTP, "the code is incorrect or has expired")
	ErrAlreadyVerified     = NewError(CodeAlreadyVerified, "the email is already verified")
	ErrOTPCooldown         = NewError(CodeOTPCooldown, "a code was sent recently; wait before asking again")
	ErrInvalidRefreshToken = NewError(CodeInvalidRefreshToken, "the refresh token is missing, malformed or expired")
	ErrTokenRevoked        = NewError(CodeTokenRevoked, "the refresh token was already used or revoked; log in again")
	ErrWrongPassword       = NewError(CodeWrongPassword, "current_password is incorrect")
	ErrUnauthorized        = NewError(CodeUnauthorized, "a valid API key (X-Api-Key) or bearer token is required")
	ErrSuspended           = NewError(CodeMerchantSuspended, "the merchant account is suspended")
	// ErrKYCRequired: live keys and live requests need the merchant's live KYC APPROVED.
	ErrKYCRequired       = NewError(CodeMerchantKYCRequired, "live access needs the merchant's KYC approved: submit it with POST /v1/merchant/kyc (X-Svc-Environment: live) and wait for the review")
	ErrNotFound          = NewError(CodeNotFound, "not found")
	ErrIPNotWhitelisted  = NewError(CodeIPNotWhitelisted, "the request address is not on the merchant's IP whitelist")
	ErrWhitelistRequired = NewError(CodeIPWhitelistRequired, "the merchant requires an IP whitelist but none is configured; set one with PUT /v1/merchant/ip-whitelist")
	ErrForbiddenEnv      = NewError(CodeForbidden, "an API key can only manage keys of its own environment")
	// ErrHashBusy: every password-hashing slot is taken and the queue is full (429 with
	// Retry-After), so a login flood cannot pile up memory or goroutines.
	ErrHashBusy = NewError(CodeRateLimited, "too many password checks in progress; retry in a second")
)
