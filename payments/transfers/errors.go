package transfers

import "svc/payments"

// Errors.
var (
	// ErrNotFound: no such transfer for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "transfer not found"}
	// ErrReferenceInUse: the merchant already made a transfer with this reference (409).
	ErrReferenceInUse error = &payments.Error{Code: "REFERENCE_IN_USE", Message: "a transfer with this reference already exists"}
	// ErrNoPrice: USDT cannot be priced in NGN right now (503).
	ErrNoPrice error = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "no NGN price of USDT is available right now"}
)
