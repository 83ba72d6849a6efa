package customers

import "svc/payments"

// Errors of the service.
var (
	// ErrNotFound: no such customer for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "customer not found"}
	// ErrCustomerExists: the email is already a customer of this merchant and environment (409).
	ErrCustomerExists error = &payments.Error{Code: "CUSTOMER_EXISTS", Message: "a customer with this email already exists"}
	// ErrTier1Required: tier 2 needs a customer verified to TIER_1 first (422).
	ErrTier1Required error = &payments.Error{Code: "KYC_TIER_REQUIRED", Message: "the customer must be verified to TIER_1 first"}
	// ErrWalletExists: the same wallet is already registered (409).
	ErrWalletExists error = &payments.Error{Code: "CONFLICT", Message: "this wallet is already registered for the customer"}
)
