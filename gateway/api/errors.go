package api

import (
	"errors"
	"fmt"
	"net/http"

	"svc/payments"
)

// Error codes of the API (spec "Error codes" and DESIGN.md sections 5 and 6). The status of
// each is in codeStatus; handlers never pick a status themselves.
const (
	CodeValidation           = "VALIDATION_ERROR"
	CodeInvalidJSON          = "INVALID_JSON"
	CodeUnsupportedMedia     = "UNSUPPORTED_MEDIA_TYPE"
	CodeBodyTooLarge         = "PAYLOAD_TOO_LARGE"
	CodeNotFound             = "NOT_FOUND"
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeInternal             = "INTERNAL_ERROR"
	CodeUnauthorized         = "UNAUTHORIZED"
	CodeInvalidCredentials   = "INVALID_CREDENTIALS"
	CodeInvalidRefreshToken  = "INVALID_REFRESH_TOKEN"
	CodeTokenRevoked         = "TOKEN_REVOKED"
	CodeEmailNotVerified     = "EMAIL_NOT_VERIFIED"
	CodeForbidden            = "FORBIDDEN"
	CodeIPWhitelistRequired  = "IP_WHITELIST_REQUIRED"
	CodeIPNotWhitelisted     = "IP_NOT_WHITELISTED"
	CodeSandboxOnly          = "SANDBOX_ONLY"
	CodeMerchantSuspended    = "MERCHANT_SUSPENDED"
	CodeMerchantKYCRequired  = "MERCHANT_KYC_REQUIRED" // live keys and live routes before the merchant's live KYC is approved
	CodeInsufficientScope    = "INSUFFICIENT_SCOPE"
	CodeLiveCredRequired     = "LIVE_CREDENTIAL_REQUIRED"
	CodeEmailInUse           = "EMAIL_IN_USE"
	CodeSlugTaken            = "SLUG_TAKEN"
	CodeCustomerExists       = "CUSTOMER_EXISTS"
	CodeReferenceInUse       = "REFERENCE_IN_USE"
	CodeIdempotencyInUse     = "IDEMPOTENCY_KEY_IN_USE"
	CodeClientOrderIDInUse   = "CLIENT_ORDER_ID_IN_USE" // a retried order whose body differs from the order holding its client_order_id
	CodeConflict             = "CONFLICT"
	CodeInvalidOTP           = "INVALID_OTP"
	CodeWrongPassword        = "WRONG_PASSWORD"
	CodeAlreadyVerified      = "ALREADY_VERIFIED"
	CodeInsufficientBalance  = "INSUFFICIENT_BALANCE"
	CodeRateExpired          = "RATE_EXPIRED"
	CodeRateAlreadyUsed      = "RATE_ALREADY_USED"
	CodeInvalidState         = "INVALID_STATE"
	CodeInvoicePaid          = "INVOICE_PAID"
	CodeOrderNotCancellable  = "ORDER_NOT_CANCELLABLE"
	CodeKYCTierRequired      = "KYC_TIER_REQUIRED"
	CodeOnrampNotActive      = "ONRAMP_NOT_ACTIVE"
	CodeProductInactive      = "PRODUCT_INACTIVE"
	CodeOutOfStock           = "OUT_OF_STOCK"
	CodeIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	CodeOTPCooldown          = "OTP_COOLDOWN"
	CodeRateLimited          = "RATE_LIMITED"
	CodeEngineBusy           = "ENGINE_BUSY"
	CodeEngineUnavailable    = "ENGINE_UNAVAILABLE"
	CodeProviderUnavailable  = "PROVIDER_UNAVAILABLE"
	CodeNotSupported         = "NOT_SUPPORTED" // the environment's partner cannot pay that rail, asset or chain (providers.UnsupportedError)
	CodeNotReady             = "NOT_READY"
	CodeRateUnavailable      = "RATE_UNAVAILABLE" // the book cannot price a quote within the band (payments/rates)
	CodeDatabaseUnavailable  = "DATABASE_UNAVAILABLE"
	CodeServiceUnavailable   = "SERVICE_UNAVAILABLE"
)

var codeStatus = map[string]int{
	CodeValidation:           http.StatusBadRequest,
	CodeInvalidJSON:          http.StatusBadRequest,
	CodeInvalidOTP:           http.StatusBadRequest,
	CodeWrongPassword:        http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeInvalidCredentials:   http.StatusUnauthorized,
	CodeInvalidRefreshToken:  http.StatusUnauthorized,
	CodeTokenRevoked:         http.StatusUnauthorized,
	CodeEmailNotVerified:     http.StatusForbidden,
	CodeForbidden:            http.StatusForbidden,
	CodeIPWhitelistRequired:  http.StatusForbidden,
	CodeIPNotWhitelisted:     http.StatusForbidden,
	CodeSandboxOnly:          http.StatusForbidden,
	CodeMerchantSuspended:    http.StatusForbidden,
	CodeMerchantKYCRequired:  http.StatusForbidden,
	CodeInsufficientScope:    http.StatusForbidden,
	CodeLiveCredRequired:     http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	CodeEmailInUse:           http.StatusConflict,
	CodeSlugTaken:            http.StatusConflict,
	CodeCustomerExists:       http.StatusConflict,
	CodeReferenceInUse:       http.StatusConflict,
	CodeIdempotencyInUse:     http.StatusConflict,
	CodeClientOrderIDInUse:   http.StatusConflict,
	CodeConflict:             http.StatusConflict,
	CodeBodyTooLarge:         http.StatusRequestEntityTooLarge,
	CodeUnsupportedMedia:     http.StatusUnsupportedMediaType,
	CodeAlreadyVerified:      http.StatusUnprocessableEntity,
	CodeInsufficientBalance:  http.StatusUnprocessableEntity,
	CodeRateExpired:          http.StatusUnprocessableEntity,
	CodeRateAlreadyUsed:      http.StatusUnprocessableEntity,
	CodeInvalidState:         http.StatusUnprocessableEntity,
	CodeInvoicePaid:          http.StatusUnprocessableEntity,
	CodeOrderNotCancellable:  http.StatusUnprocessableEntity,
	CodeKYCTierRequired:      http.StatusUnprocessableEntity,
	CodeOnrampNotActive:      http.StatusUnprocessableEntity,
	CodeProductInactive:      http.StatusUnprocessableEntity,
	CodeOutOfStock:           http.StatusUnprocessableEntity,
	CodeNotSupported:         http.StatusUnprocessableEntity,
	CodeIdempotencyKeyReused: http.StatusUnprocessableEntity,
	CodeRateLimited:          http.StatusTooManyRequests,
	CodeOTPCooldown:          http.StatusTooManyRequests,
	CodeInternal:             http.StatusInternalServerError,
	CodeEngineBusy:           http.StatusServiceUnavailable,
	CodeEngineUnavailable:    http.StatusServiceUnavailable,
	CodeProviderUnavailable:  http.StatusServiceUnavailable,
	CodeNotReady:             http.StatusServiceUnavailable,
	CodeRateUnavailable:      http.StatusServiceUnavailable,
	CodeDatabaseUnavailable:  http.StatusServiceUnavailable,
	CodeServiceUnavailable:   http.StatusServiceUnavailable,
}

// Status returns the HTTP status of an error code; unknown codes are a server error.
func Status(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Codes lists every error code with its status (for the OpenAPI document and docs).
func Codes() map[string]int {
	out := make(map[string]int, len(codeStatus))
	for k, v := range codeStatus {
		out[k] = v
	}
	return out
}

// FieldError is one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an API failure: a code from the table, an optional sentence for people, and the
// invalid fields of a 400.
type Error struct {
	Code   string
	Detail string
	Fields []FieldError
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Code + ": " + e.Detail
	}
	return e.Code
}

// Status is the HTTP status of the error's code.
func (e *Error) Status() int { return Status(e.Code) }

// NewError returns an API error with a code and a human sentence.
func NewError(code, detail string) *Error { return &Error{Code: code, Detail: detail} }

// Errorf is NewError with formatting.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Invalid returns a 400 VALIDATION_ERROR for one field.
func Invalid(field, message string) *Error {
	return &Error{Code: CodeValidation, Detail: "request validation failed", Fields: []FieldError{{field, message}}}
}

// Coded is implemented by domain errors that carry an API code (e.g. INSUFFICIENT_BALANCE),
// so the gateway maps them without a handler inventing statuses.
type Coded interface {
	error
	APICode() string
}

// FieldCoded is implemented by domain validation errors that name a request field.
type FieldCoded interface {
	error
	APIField() string
}

// From turns any error into an API error: *Error as is, domain errors by their code, field
// errors into a 400 (listing every field of a *payments.ValidationError), a dependency that
// is down or did not answer within the request's deadline into a 503 (see Unavailable),
// anything else into a 500 whose detail never leaks the cause.
func From(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	if u := Unavailable(err); u != nil {
		return u
	}
	var ve *payments.ValidationError
	if errors.As(err, &ve) {
		return invalidFields(ve)
	}
	var fc FieldCoded
	if errors.As(err, &fc) {
		return Invalid(fc.APIField(), fc.Error())
	}
	var c Coded
	if errors.As(err, &c) {
		return &Error{Code: c.APICode(), Detail: c.Error()}
	}
	return &Error{Code: CodeInternal, Detail: "internal error"}
}
