package checkout

import "svc/payments/products"

// Errors carry their API code.
var (
	// ErrNotFound: no link with that id (or slug) for this tenant, or deleted.
	ErrNotFound = &products.Error{Code: "NOT_FOUND", Message: "checkout link not found"}
	// ErrSlugTaken: another link already has the slug (slugs are never reused).
	ErrSlugTaken = &products.Error{Code: "SLUG_TAKEN", Message: "this slug is already taken"}
	// ErrLinkInactive: an inactive link takes no payments.
	ErrLinkInactive = &products.Error{Code: "INVALID_STATE", Message: "this payment link is not accepting payments"}
	// ErrNotPayable: the linked invoice is not open for payment (draft, paid or canceled).
	ErrNotPayable = &products.Error{Code: "INVALID_STATE", Message: "this invoice is not open for payment"}
	// ErrPaymentNotFound: no such payment on this link.
	ErrPaymentNotFound = &products.Error{Code: "NOT_FOUND", Message: "payment not found"}
	// ErrPaymentClosed: the payment is not awaiting a transfer (completed, failed or expired).
	ErrPaymentClosed = &products.Error{Code: "INVALID_STATE", Message: "this payment is no longer awaiting a transfer"}
	// ErrSandboxOnly: simulating a transfer works only on sandbox links.
	ErrSandboxOnly = &products.Error{Code: "SANDBOX_ONLY", Message: "transfers can only be simulated in sandbox"}
	// ErrTooManyAttempts: too many open payment attempts on one link.
	ErrTooManyAttempts = &products.Error{Code: "RATE_LIMITED", Message: "too many payment attempts are open on this link; try again later"}
	// ErrUnavailable: no onramp machinery is configured.
	ErrUnavailable = &products.Error{Code: "PROVIDER_UNAVAILABLE", Message: "bank transfer payments are not available"}
)

// ErrLinkDeleted: the link was deleted (its hosted page answers 410 Gone; the API 404).
var ErrLinkDeleted error = deletedError{}

type deletedError struct{}

func (deletedError) Error() string   { return "this payment link has been removed" }
func (deletedError) APICode() string { return "NOT_FOUND" }
