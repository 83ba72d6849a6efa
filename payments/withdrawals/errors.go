package withdrawals

import "svc/payments"

// Errors.
var (
	// ErrNotFound: no such withdrawal for this merchant and environment (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "withdrawal not found"}
)
