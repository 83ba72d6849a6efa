// Package offramps turns crypto into NGN (spec "Offramp", DESIGN.md section 6): an offramp
// is a deposit address (from the chain custodian, per chain and asset) that belongs to one
// of the merchant's customers; crypto arriving there is either credited to that customer's
// internal balance in the same asset (INTERNAL_BALANCE) or converted to NGN and paid out to
// a bank account (NGN_PAYOUT).
//
// Creation names the customer by customer_id, or by email (looked up, or created with the
// optional names); an NGN_PAYOUT offramp locks a sell rate (rate_id, once, unexpired) and
// needs the destination bank. A TEMPORARY offramp converts at its locked price, takes one
// deposit (then INACTIVE) and expires 25 minutes after creation (EXPIRED); a PERMANENT one
// stays ACTIVE and converts each deposit at the market sell price of the moment (its rate_id
// is checked and locked at creation, as the spec requires, like a PERMANENT onramp's market
// rate).
//
// A deposit (ReceiveCrypto: a custodian's deposit.confirmed notification through
// payments/partners; in the sandbox, POST /payments/sandbox/deposits with offramp_id emits
// the sandbox custodian's) is a CRYPTO_DEPOSIT row of the deposits table, in one transaction with its
// ledger postings:
//
//	INTERNAL_BALANCE: system external -> customer available (asset); deposit SETTLED;
//	                  customer.balance.credited, offramp.completed.
//	NGN_PAYOUT:       system external -> system fx (asset), system fx -> customer pending
//	                  (NGN, rounded down); deposit PENDING_WITHDRAWAL; a payout PROCESSING
//	                  and its job. The job asks the bank (reference "payout:<id>"):
//	                  settled -> customer pending -> system external, payout SETTLED, deposit
//	                  SETTLED, payout.completed and offramp.completed; refused -> the NGN is
//	                  returned to the customer's available balance, payout FAILED, deposit
//	                  FAILED (customer.balance.credited).
package offramps

import (
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/providers"
)

// Types, statuses, settlement modes.
const (
	Temporary = "TEMPORARY"
	Permanent = "PERMANENT"

	Active   = "ACTIVE"
	Inactive = "INACTIVE"
	Expired  = "EXPIRED"

	ModeInternal = "INTERNAL_BALANCE"
	ModePayout   = "NGN_PAYOUT"
)

// Enumerations for validation and filters.
var (
	Types    = []string{Temporary, Permanent}
	Statuses = []string{Active, Inactive, Expired}
	Modes    = []string{ModeInternal, ModePayout}
	Assets   = []string{string(money.USDC), string(money.USDT)}
)

// TemporaryLifetime is how long a TEMPORARY offramp takes deposits.
const TemporaryLifetime = 25 * time.Minute

// Bank is the destination bank account of NGN payouts.
type Bank struct {
	AccountName   string `json:"account_name"`
	AccountNumber string `json:"account_number"`
	BankCode      string `json:"bank_code"`
}

// Settlement is what happens to crypto arriving at an offramp.
type Settlement struct {
	Mode            string
	RateID          *uuid.UUID // NGN_PAYOUT
	Price           int64      // NGN_PAYOUT: the locked kobo per unit of the asset
	DestinationBank *Bank      // NGN_PAYOUT
}

// Offramp is a deposit address converting to NGN or crediting a customer.
type Offramp struct {
	ID             uuid.UUID
	Tenant         payments.Tenant
	Type           string
	Status         string // as of the service's clock (an ACTIVE TEMPORARY past expires_at is EXPIRED)
	CustomerID     uuid.UUID
	Chain          providers.Chain
	Asset          money.Asset
	DepositAddress string
	Settlement     Settlement
	ExpiresAt      *time.Time
	Metadata       metadata.Metadata // the merchant's own keys, given at creation (issue 30)
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// CustomerRef names the offramp's customer: exactly one of ID and Email.
type CustomerRef struct {
	ID        *uuid.UUID
	Email     string
	FirstName string // used when creating by email
	LastName  string
}

// CreateInput is POST /payments/offramps.
type CreateInput struct {
	Type       string
	Customer   *CustomerRef
	Chain      string
	Asset      string
	Settlement *SettlementInput
	Metadata   metadata.Metadata // checked by payments/metadata
}

// SettlementInput is the settlement object of the body.
type SettlementInput struct {
	Mode            string
	RateID          *uuid.UUID
	DestinationBank *Bank
}

// Filter selects a page of offramps, newest first; empty fields match everything.
type Filter struct {
	Type, Chain, Asset, Status, Mode string
	Metadata                         metadata.Filter // nil for any
	Page, Limit                      int
}

// Payout statuses.
const (
	PayoutProcessing = "PROCESSING"
	PayoutSettled    = "SETTLED"
	PayoutFailed     = "FAILED"
)

// PayoutMachine is the offramp payout's state machine; every status change goes through it
// (finishPayout, ReversePayoutTx). SETTLED -> FAILED is the bank's reversal after settlement.
var PayoutMachine = payments.Machine{Name: "payout", Moves: map[string][]string{
	PayoutProcessing: {PayoutSettled, PayoutFailed},
	PayoutSettled:    {PayoutFailed},
}}

// Payout is the NGN payout of one offramp deposit.
type Payout struct {
	ID                uuid.UUID
	Tenant            payments.Tenant
	OfframpID         uuid.UUID
	DepositID         uuid.UUID
	CustomerID        uuid.UUID
	Amount            money.Amount // NGN
	Status            string
	Bank              Bank
	ProviderReference string
	FailureReason     string
	CreatedAt         time.Time
	SettledAt         *time.Time
}

// CryptoDeposit is the outcome of a simulated crypto deposit.
type CryptoDeposit struct {
	ID         uuid.UUID
	OfframpID  uuid.UUID
	CustomerID uuid.UUID
	Type       string // CRYPTO_DEPOSIT
	Status     string // SETTLED (INTERNAL_BALANCE), PENDING_WITHDRAWAL (payout in flight), FAILED
	Amount     money.Amount
	Chain      providers.Chain
	Mode       string
	Price      int64         // NGN_PAYOUT: kobo per unit applied
	AmountNGN  *money.Amount // NGN_PAYOUT
	Payout     *Payout       // NGN_PAYOUT
	CreatedAt  time.Time
}
