// Package onramps is the NGN bank accounts a merchant's customers (or checkout payers) pay
// into by local transfer; the deposits that arrive are converted to USDT or USDC and settled
// to an internal balance or an on-chain address (payments/deposits).
//
// Two types (spec "Onramp"):
//
//   - TEMPORARY: a fixed NGN amount at a locked rate (a rate id of GET /payments/rates, or a
//     fresh quote), ACTIVE for 25 minutes, then EXPIRED: every read reports EXPIRED from
//     expires_at (StatusAt, and the same test in SQL filters), and a periodic sweep
//     (Service.ExpireDue, one purger of svcd's housekeeping job, every 10 minutes by
//     default) stores it, so a reader never sees the sweep's lag.
//     Once a deposit of its amount has arrived it is INACTIVE (it is paid).
//   - PERMANENT: for a customer of at least TIER_1 (ErrKYCTierRequired otherwise); no amount,
//     converted at the market rate when a deposit arrives; ACTIVE until deactivated.
//
// Settlement: INTERNAL_BALANCE credits the customer's balance when the onramp has a
// customer, else the merchant's; ONCHAIN sends the asset to destination_address on chain.
//
// Creating one records onramp.completed ("an onramp became active") in the same
// transaction, through idempotency.InTx, so an X-Idempotency-Key request creates at most one.
package onramps

import (
	"context"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/persistence/postgres"
)

// Types, statuses and settlement modes.
const (
	Temporary = "TEMPORARY"
	Permanent = "PERMANENT"

	Active   = "ACTIVE"
	Expired  = "EXPIRED"
	Inactive = "INACTIVE"

	ModeOnchain  = "ONCHAIN"
	ModeInternal = "INTERNAL_BALANCE"
)

// TemporaryLifetime is how long a TEMPORARY onramp takes deposits (spec "Limits").
const TemporaryLifetime = 25 * time.Minute

// Settlement says where converted funds go.
type Settlement struct {
	Mode               string      // ONCHAIN or INTERNAL_BALANCE
	Asset              money.Asset // USDT or USDC
	Chain              string      // ONCHAIN only
	DestinationAddress string      // ONCHAIN only
}

// Onramp is one NGN bank account taking deposits.
type Onramp struct {
	ID            uuid.UUID
	Tenant        payments.Tenant
	Type          string
	Status        string // as stored; see StatusAt
	CustomerID    *uuid.UUID
	BankCode      string
	AccountNumber string
	BankName      string
	AccountName   string
	Amount        *money.Amount // NGN, TEMPORARY only
	Price         int64         // locked kobo per unit of the settlement asset, TEMPORARY only
	RateID        *uuid.UUID
	Settlement    Settlement
	Reference     string // payment reference given at creation (e.g. a checkout payment id)
	ExpiresAt     *time.Time
	Metadata      metadata.Metadata // the merchant's own keys, given at creation (issue 30)
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// StatusAt is the status at now: an ACTIVE onramp past its expiry is EXPIRED even before
// the sweep (Service.ExpireDue) has stored it.
func (o Onramp) StatusAt(now time.Time) string {
	if o.Status == Active && o.ExpiresAt != nil && !now.Before(*o.ExpiresAt) {
		return Expired
	}
	return o.Status
}

// PaymentReference is what a deposit into the onramp carries as payment_reference: the
// reference given at creation, else the onramp's account number.
func (o Onramp) PaymentReference() string {
	if o.Reference != "" {
		return o.Reference
	}
	return o.AccountNumber
}

// CreateInput is a new onramp (POST /payments/onramps). The gateway has checked the shape
// of each field; Create checks the rules between them.
type CreateInput struct {
	Type       string
	CustomerID *uuid.UUID
	RateID     *uuid.UUID        // TEMPORARY only
	Amount     *money.Amount     // NGN; required for TEMPORARY, refused for PERMANENT
	Settlement *Settlement       // default INTERNAL_BALANCE in USDT
	Reference  string            // optional payment reference
	Metadata   metadata.Metadata // checked by payments/metadata
}

// Filter selects onramps of a list.
type Filter struct {
	Status   string          // ACTIVE, EXPIRED, INACTIVE or "" for all
	Metadata metadata.Filter // nil for any
	Page     int
	Limit    int
}

// Customer is what onramps and deposits need to know of a customer.
type Customer struct {
	ID        uuid.UUID
	Email     string
	FirstName string
	LastName  string
	KYCTier   string // TIER_0, TIER_1, TIER_2
}

// Name is "first last".
func (c Customer) Name() string { return c.FirstName + " " + c.LastName }

// AtLeastTier1 reports a customer of tier 1 or 2.
func (c Customer) AtLeastTier1() bool { return c.KYCTier == "TIER_1" || c.KYCTier == "TIER_2" }

// LookupFunc adapts a function to Customers.
type LookupFunc func(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Customer, error)

// Lookup calls f.
func (f LookupFunc) Lookup(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Customer, error) {
	return f(ctx, q, t, id)
}
