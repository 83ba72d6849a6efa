package onramps

// Error is a refusal with an API code.
type Error struct {
	Code   string
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// APICode is the gateway's error code.
func (e *Error) APICode() string { return e.Code }

// Is matches errors of the same code and reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Reason == "" || t.Reason == e.Reason)
}

// FieldError is a rule between request fields that one field breaks (400 VALIDATION_ERROR).
type FieldError struct{ Name, Message string }

func (e *FieldError) Error() string { return e.Message }

// APIField names the field.
func (e *FieldError) APIField() string { return e.Name }

// Errors.
var (
	// ErrNotFound: no such onramp for this merchant and environment (404).
	ErrNotFound error = &Error{"NOT_FOUND", "onramp not found"}
	// ErrCustomerNotFound: customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &Error{"NOT_FOUND", "customer not found"}
	// ErrKYCTierRequired: a PERMANENT onramp needs a customer of TIER_1 or above (422).
	ErrKYCTierRequired error = &Error{"KYC_TIER_REQUIRED", "a PERMANENT onramp requires a customer verified to TIER_1"}
	// ErrNotActive: the onramp does not take deposits (expired, inactive) (422).
	ErrNotActive error = &Error{"ONRAMP_NOT_ACTIVE", "the onramp is not ACTIVE"}
	// ErrPermanentExists: the customer already has an active PERMANENT onramp (409).
	ErrPermanentExists error = &Error{"CONFLICT", "the customer already has an active PERMANENT onramp"}
	// ErrCustomersUnavailable: no customer directory is wired (503).
	ErrCustomersUnavailable error = &Error{"PROVIDER_UNAVAILABLE", "customer records are not available"}
)
