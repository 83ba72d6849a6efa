package offramps

import "svc/payments"

// Errors.
var (
	// ErrNotFound: no such offramp for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "offramp not found"}
	// ErrCustomerNotFound: customer.customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "customer not found"}
	// ErrNotActive: the offramp takes no deposits (INACTIVE or EXPIRED) (422).
	ErrNotActive error = &payments.Error{Code: "INVALID_STATE", Message: "the offramp is not ACTIVE"}
	// ErrSandboxOnly: deposits are simulated only in the sandbox (403).
	ErrSandboxOnly error = &payments.Error{Code: "SANDBOX_ONLY", Message: "simulated deposits need a test key"}
	// ErrNoPrice: the asset cannot be priced in NGN right now (503).
	ErrNoPrice error = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "no NGN price is available for this asset right now"}
	// ErrCustomersUnavailable: no customer directory is wired (503).
	ErrCustomersUnavailable error = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "customer records are not available"}
)
