// Package payments owns the vocabulary every payments domain shares: the tenant (merchant +
// environment) every query is scoped by, and the refusal and field-error types that carry
// the API codes the gateway answers with. It holds values only: no I/O, no rules of a domain.
//
// The domains (payments/customers, payments/onramps, payments/checkout, ...) declare their
// sentinel errors as *Error values of their own (var ErrNotFound = &payments.Error{...}),
// return *FieldError or *ValidationError for a bad request field, and take a Tenant first
// after the context.
package payments

import "github.com/google/uuid"

// Environments a tenant works in.
const (
	Sandbox = "sandbox"
	Live    = "live"
)

// Tenant is the merchant and environment every query is scoped by: a record of another
// merchant or environment does not exist for the caller (404).
type Tenant struct {
	MerchantID  uuid.UUID
	Environment string // Sandbox or Live
}
