package transfers

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

// FieldError is a rule between a request field and stored records (400 VALIDATION_ERROR).
type FieldError struct{ Name, Message string }

func (e *FieldError) Error() string { return e.Message }

// APIField names the field.
func (e *FieldError) APIField() string { return e.Name }

// Errors.
var (
	// ErrNotFound: no such transfer for this merchant and environment (404).
	ErrNotFound error = &Error{"NOT_FOUND", "transfer not found"}
	// ErrReferenceInUse: the merchant already made a transfer with this reference (409).
	ErrReferenceInUse error = &Error{"REFERENCE_IN_USE", "a transfer with this reference already exists"}
	// ErrNoPrice: USDT cannot be priced in NGN right now (503).
	ErrNoPrice error = &Error{"PROVIDER_UNAVAILABLE", "no NGN price of USDT is available right now"}
)
