package onramps

import "svc/payments"

// Errors.
var (
	// ErrNotFound: no such onramp for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "onramp not found"}
	// ErrCustomerNotFound: customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "customer not found"}
	// ErrKYCTierRequired: a PERMANENT onramp needs a customer of TIER_1 or above (422).
	ErrKYCTierRequired error = &payments.Error{Code: "KYC_TIER_REQUIRED", Message: "a PERMANENT onramp requires a customer verified to TIER_1"}
	// ErrNotActive: the onramp does not take deposits (expired, inactive) (422).
	ErrNotActive error = &payments.Error{Code: "ONRAMP_NOT_ACTIVE", Message: "the onramp is not ACTIVE"}
	// ErrPermanentExists: the customer already has an active PERMANENT onramp (409).
	ErrPermanentExists error = &payments.Error{Code: "CONFLICT", Message: "the customer already has an active PERMANENT onramp"}
	// ErrCustomersUnavailable: no customer directory is wired (503).
	ErrCustomersUnavailable error = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "customer records are not available"}
)
