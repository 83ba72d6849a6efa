package recipients

import "svc/payments"

// Errors.
var (
	// ErrNotFound: no such recipient for this merchant and environment, or deleted (404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "recipient not found"}
	// ErrCustomerNotFound: customer_id names no customer of this merchant and environment (404).
	ErrCustomerNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "customer not found"}
)
