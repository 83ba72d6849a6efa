package offramps

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
	// ErrNotFound: no such offramp for this merchant and environment (404).
	ErrNotFound error = &Error{"NOT_FOUND", "offramp not found"}
	// ErrCustomerNotFound: customer.customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &Error{"NOT_FOUND", "customer not found"}
	// ErrNotActive: the offramp takes no deposits (INACTIVE or EXPIRED) (422).
	ErrNotActive error = &Error{"INVALID_STATE", "the offramp is not ACTIVE"}
	// ErrSandboxOnly: deposits are simulated only in the sandbox (403).
	ErrSandboxOnly error = &Error{"SANDBOX_ONLY", "simulated deposits need a test key"}
	// ErrNoPrice: the asset cannot be priced in NGN right now (503).
	ErrNoPrice error = &Error{"PROVIDER_UNAVAILABLE", "no NGN price is available for this asset right now"}
	// ErrCustomersUnavailable: no customer directory is wired (503).
	ErrCustomersUnavailable error = &Error{"PROVIDER_UNAVAILABLE", "customer records are not available"}
)
