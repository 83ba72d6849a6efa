package invoices

import "svc/payments/products"

// Errors carry their API code (products.Error).
var (
	// ErrNotFound: no invoice (or line item) with that id for this tenant.
	ErrNotFound = &products.Error{Code: "NOT_FOUND", Message: "invoice not found"}
	// ErrLineNotFound: no such line item on the invoice.
	ErrLineNotFound = &products.Error{Code: "NOT_FOUND", Message: "line item not found"}
	// ErrPaid: a paid invoice cannot be changed or deleted.
	ErrPaid = &products.Error{Code: "INVOICE_PAID", Message: "the invoice is paid"}
	// ErrInvalidState: the invoice's status does not allow the operation.
	ErrInvalidState = &products.Error{Code: "INVALID_STATE", Message: "the invoice's status does not allow this"}
)

func stateError(msg string) error {
	return &products.Error{Code: ErrInvalidState.Code, Message: msg}
}
