package customers

// Error is a refusal by the customers service, with its API code.
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
	return ok && t.Code == e.Code && t.Reason == e.Reason
}

// Errors of the service.
var (
	// ErrNotFound: no such customer for this merchant and environment (404).
	ErrNotFound error = &Error{"NOT_FOUND", "customer not found"}
	// ErrCustomerExists: the email is already a customer of this merchant and environment (409).
	ErrCustomerExists error = &Error{"CUSTOMER_EXISTS", "a customer with this email already exists"}
	// ErrTier1Required: tier 2 needs a customer verified to TIER_1 first (422).
	ErrTier1Required error = &Error{"KYC_TIER_REQUIRED", "the customer must be verified to TIER_1 first"}
	// ErrWalletExists: the same wallet is already registered (409).
	ErrWalletExists error = &Error{"CONFLICT", "this wallet is already registered for the customer"}
)
