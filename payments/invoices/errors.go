package invoices

import (
	"svc/payments"
	"svc/payments/products"
)

// Errors carry their API code (*payments.Error of the products.Commerce family).
var (
	// ErrNotFound: no invoice (or line item) with that id for this tenant.
	ErrNotFound = &payments.Error{Code: "NOT_FOUND", Message: "invoice not found", Family: products.Commerce}
	// ErrLineNotFound: no such line item on the invoice.
	ErrLineNotFound = &payments.Error{Code: "NOT_FOUND", Message: "line item not found", Family: products.Commerce}
	// ErrPaid: a paid invoice cannot be changed or deleted.
	ErrPaid = &payments.Error{Code: "INVOICE_PAID", Message: "the invoice is paid", Family: products.Commerce}
	// ErrInvalidState: the invoice's status does not allow the operation.
	ErrInvalidState = &payments.Error{Code: "INVALID_STATE", Message: "the invoice's status does not allow this", Family: products.Commerce}
)

func stateError(msg string) error {
	return &payments.Error{Code: ErrInvalidState.Code, Message: msg, Family: products.Commerce}
}
