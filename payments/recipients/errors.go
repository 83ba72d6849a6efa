package recipients

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

// Errors.
var (
	// ErrNotFound: no such recipient for this merchant and environment, or deleted (404).
	ErrNotFound error = &Error{"NOT_FOUND", "recipient not found"}
	// ErrCustomerNotFound: customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &Error{"NOT_FOUND", "customer not found"}
)
