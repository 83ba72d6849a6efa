package checkout

import (
	"svc/payments"
	"svc/payments/products"
)

// Errors carry their API code.
var (
	// ErrNotFound: no link with that id (or slug) for this tenant, or deleted.
	ErrNotFound = &payments.Error{Code: "NOT_FOUND", Message: "checkout link not found", Family: products.Commerce}
	// ErrSlugTaken: another link already has the slug (slugs are never reused).
	ErrSlugTaken = &payments.Error{Code: "SLUG_TAKEN", Message: "this slug is already taken", Family: products.Commerce}
	// ErrLinkInactive: an inactive link takes no payments.
	ErrLinkInactive = &payments.Error{Code: "INVALID_STATE", Message: "this payment link is not accepting payments", Family: products.Commerce}
	// ErrAlreadyPaid: a one_time link that took its payment takes no other and cannot be
	// made active again (issue 32: reactivating it let it be paid twice).
	ErrAlreadyPaid = &payments.Error{Code: "INVALID_STATE", Message: "this one-time link was already paid", Family: products.Commerce}
	// ErrNotPayable: the linked invoice is not open for payment (draft, paid or canceled).
	ErrNotPayable = &payments.Error{Code: "INVALID_STATE", Message: "this invoice is not open for payment", Family: products.Commerce}
	// ErrPaymentNotFound: no such payment on this link.
	ErrPaymentNotFound = &payments.Error{Code: "NOT_FOUND", Message: "payment not found", Family: products.Commerce}
	// ErrPaymentClosed: the payment is not awaiting a transfer (completed, failed or expired).
	ErrPaymentClosed = &payments.Error{Code: "INVALID_STATE", Message: "this payment is no longer awaiting a transfer", Family: products.Commerce}
	// ErrSandboxOnly: simulating a transfer works only on sandbox links.
	ErrSandboxOnly = &payments.Error{Code: "SANDBOX_ONLY", Message: "transfers can only be simulated in sandbox", Family: products.Commerce}
	// ErrTooManyAttempts: too many open payment attempts on one link.
	ErrTooManyAttempts = &payments.Error{Code: "RATE_LIMITED", Message: "too many payment attempts are open on this link; try again later", Family: products.Commerce}
	// ErrUnavailable: no onramp machinery is configured.
	ErrUnavailable = &payments.Error{Code: "PROVIDER_UNAVAILABLE", Message: "bank transfer payments are not available", Family: products.Commerce}
)

// ErrLinkDeleted: the link was deleted (its hosted page answers 410 Gone; the API 404).
var ErrLinkDeleted error = deletedError{}

type deletedError struct{}

func (deletedError) Error() string   { return "this payment link has been removed" }
func (deletedError) APICode() string { return "NOT_FOUND" }
