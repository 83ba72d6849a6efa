// Package checkout is the merchant's hosted checkout links (spec "Checkout link") and the
// payments made through them: a payer opens /pay/{slug}, asks to pay by bank transfer, gets a
// TEMPORARY onramp (payments/onramps) for the amount, and when a deposit into that onramp
// settles the payment completes in the deposit's transaction: checkout.payment.completed, the
// linked invoice paid, stock taken, a one_time link made inactive.
package checkout

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/invoices"
	"svc/payments/metadata"
	"svc/payments/products"
)

// Link types and statuses.
const (
	TypeOneTime = "one_time"
	TypeInvoice = "invoice"

	StatusActive   = "active"
	StatusInactive = "inactive"
)

// Limits of the spec.
const (
	MaxTitleLen          = 255
	MaxDescriptionLen    = 2000
	MaxSuccessMessageLen = 500
	MinSlugLen           = 3
	MaxSlugLen           = 100
)

// Link is a checkout link. Amount is the link's own amount for one_time links and the
// linked invoice's current total for invoice links.
type Link struct {
	ID             uuid.UUID
	Tenant         payments.Tenant
	Slug           string
	Title          string
	Description    *string
	Type           string
	Amount         int64
	Currency       string
	Status         string
	RedirectURL    *string
	SuccessMessage *string
	InvoiceID      *uuid.UUID
	PaymentsCount  int
	Metadata       metadata.Metadata // the merchant's own keys (issue 30)
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeletedAt      *time.Time
	Lines          []invoices.Line // one_time links built from line items
}

// CreateInput is a new link; which fields are set picks the flavor (see Service.Create).
type CreateInput struct {
	Title          string
	Description    *string
	Type           string
	Slug           string
	Currency       string
	RedirectURL    *string
	SuccessMessage *string
	Amount         *string
	InvoiceID      *uuid.UUID
	CustomerName   string
	CustomerEmail  string
	Lines          []invoices.LineInput
	Metadata       json.RawMessage // the request's metadata field, checked by payments/metadata
}

// UpdateInput changes only the fields that are set; amount, currency and invoice are fixed.
type UpdateInput struct {
	Title          products.Patch[string]
	Description    products.Patch[string] // null clears
	RedirectURL    products.Patch[string] // null removes
	SuccessMessage products.Patch[string] // null clears
	Status         products.Patch[string]
	Metadata       json.RawMessage // keys to set or ("") remove (metadata.Merge)
}

// Filter selects links in a list.
type Filter struct {
	Status   string
	Metadata metadata.Filter // nil for any
	Page     int
	Limit    int
}

// Payment statuses: awaiting the transfer, completed, or failed (e.g. sold out meanwhile).
// An awaiting payment past its onramp's expiry is reported as expired.
const (
	PaymentAwaiting  = "awaiting"
	PaymentCompleted = "completed"
	PaymentFailed    = "failed"
	PaymentExpired   = "expired"
)

// PaymentMachine is the checkout payment's state machine: an awaiting payment ends completed
// or failed when the deposit into its onramp settles (expired is awaiting seen after the
// onramp's expiry, never stored).
var PaymentMachine = payments.Machine{Name: "checkout payment", Moves: map[string][]string{
	PaymentAwaiting: {PaymentCompleted, PaymentFailed},
}}

// Payment is one attempt to pay a link by bank transfer into a TEMPORARY onramp.
type Payment struct {
	ID            uuid.UUID
	LinkID        uuid.UUID
	Tenant        payments.Tenant
	InvoiceID     *uuid.UUID
	Amount        int64
	Currency      string
	OnrampID      string
	AmountNGN     int64
	Rate          string
	AccountNumber string
	BankName      string
	AccountName   string
	ExpiresAt     time.Time
	Status        string
	DepositID     *string
	FailureReason *string
	CompletedAt   *time.Time
	CreatedAt     time.Time
}

// StatusAt is the payment's status as the payer sees it at now (awaiting becomes expired).
func (p Payment) StatusAt(now time.Time) string {
	if p.Status == PaymentAwaiting && !now.Before(p.ExpiresAt) {
		return PaymentExpired
	}
	return p.Status
}

// OnrampRequest asks for a TEMPORARY onramp that takes exactly the payment's amount.
type OnrampRequest struct {
	Tenant    payments.Tenant
	Amount    int64  // minor units of Currency
	Currency  string // NGN, or USD converted to NGN at a locked rate
	Reference string // the checkout payment's id (payment reference)
}

// Onramp is the bank account the payer transfers to.
type Onramp struct {
	ID            string
	AccountNumber string
	BankName      string
	AccountName   string
	AmountNGN     int64     // kobo to transfer, exactly
	Rate          string    // NGN per unit of Currency for USD links ("" for NGN)
	ExpiresAt     time.Time // 25 minutes after creation
}

// Onramps is the money-in machinery a checkout is paid through (payments/onramps and
// payments/deposits, issue 8). A Completer must be told (OnDepositSettled) inside the
// transaction that settles a deposit into an onramp created here.
type Onramps interface {
	// CreateTemporary creates a TEMPORARY onramp in tx (settling to the merchant's internal
	// balance) for the amount, with the rate locked when the currency is not NGN.
	CreateTemporary(ctx context.Context, tx pgx.Tx, req OnrampRequest) (Onramp, error)
	// SimulateDeposit runs the sandbox deposit of the onramp's exact amount (sandbox only).
	SimulateDeposit(ctx context.Context, t payments.Tenant, onrampID string) error
}

// SettledDeposit is a deposit that has just settled into an onramp.
type SettledDeposit struct {
	ID        string
	OnrampID  string
	Tenant    payments.Tenant
	AmountNGN int64
	SettledAt time.Time
}

// Recorder records an event in the caller's transaction; *events.Recorder is one.
type Recorder interface {
	Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ events.Type, data any) (uuid.UUID, error)
}

var _ Recorder = (*events.Recorder)(nil)
