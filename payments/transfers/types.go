// Package transfers pays NGN or USD from the merchant's USDT balance to a bank account
// (spec "Transfer", DESIGN.md section 6 "transfers' source of funds"): a domestic NGN
// account, a US account (ACH or wire) or a SWIFT account, named inline (destination) or by a
// saved recipient (recipient_id), optionally on behalf of one of the merchant's customers.
//
//	PROCESSING --bank settles--> SETTLED (transfer.completed; NGN also payout.completed)
//	PROCESSING --bank refuses--> FAILED (funds returned)
//	SETTLED --bank reverses--> FAILED (funds credited back; transfer.failed)
//
// Source of funds: USD is debited at 1:1 in USDT; NGN at the current sell price of USDT
// (payments/rates MarketFor: the bids' VWAP for the amount, within the band, minus the spread), rounded up to the micro-USDT
// so the merchant never pays less than the amount sent. The price and the USDT debited are
// stored on the transfer and returned with it (the quote).
//
// Create holds the USDT (merchant available -> pending, "transfer:<id>:hold") in the same
// transaction as the transfer and its job; the job asks the bank partner for the payout
// (reference "transfer:<id>", so a retry never pays twice) and ends the transfer SETTLED
// (pending -> system external) or FAILED (pending -> available). The merchant's reference is
// unique per merchant and environment (REFERENCE_IN_USE).
package transfers

import (
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/recipients"
)

// Statuses.
const (
	Processing = "PROCESSING"
	Settled    = "SETTLED"
	Failed     = "FAILED"
)

// Statuses lists every status.
var Statuses = []string{Processing, Settled, Failed}

// Machine is the transfer's state machine; every status change goes through it (move,
// ReverseTx). SETTLED -> FAILED is only the bank's reversal of a settled payout (ReverseTx):
// the spec has no REVERSED transfer status, and FAILED (funds returned) is the closest.
var Machine = payments.Machine{Name: "transfer", Moves: map[string][]string{
	Processing: {Settled, Failed},
	Settled:    {Failed},
}}

// CanMove reports whether the state machine allows from -> to.
func CanMove(from, to string) bool { return Machine.Can(from, to) }

// Currencies transfers pay in.
var Currencies = []string{string(money.NGN), string(money.USD)}

// MaxReference is the longest merchant reference.
const MaxReference = 128

// Destination is where a transfer pays: a bank destination type and its object.
type Destination struct {
	Type    string // BANK_ACCOUNT, US_BANK_ACCOUNT or SWIFT_BANK_ACCOUNT
	Details recipients.Details
}

// DestinationTypes are the types a transfer pays to.
var DestinationTypes = []string{recipients.BankAccount, recipients.USBankAccount, recipients.SWIFTBankAccount}

// Transfer is one payout to a bank account.
type Transfer struct {
	ID                uuid.UUID
	Tenant            payments.Tenant
	Amount            money.Amount // NGN or USD
	Reference         string
	Rail              string // providers.RailNGN, RailUSACH, RailUSWire, RailSWIFT
	RecipientID       *uuid.UUID
	Destination       Destination // copied from the recipient when sent by recipient_id
	CustomerID        *uuid.UUID  // on_behalf_of
	SourceAmount      money.Amount
	Price             int64 // minor units of Amount's currency per one USDT
	Status            string
	ProviderReference string
	FailureReason     string
	Metadata          metadata.Metadata // the merchant's own keys, given at creation (issue 30)
	CreatedAt         time.Time
	UpdatedAt         time.Time
	SettledAt         *time.Time
}

// Rate is the price as a decimal: units of the transfer's currency per USDT ("1592.00").
func (t Transfer) Rate() string { return money.Format(t.Amount.Asset, t.Price) }

// Request is a validated transfer (the gateway checks each field; the service checks the
// rules between records).
type Request struct {
	Amount      money.Amount // NGN or USD, > 0
	Reference   string
	RecipientID *uuid.UUID        // exactly one of RecipientID and Destination
	Destination *Destination      // validated with recipients.Details.Validate
	CustomerID  *uuid.UUID        // on_behalf_of.customer_id
	Metadata    metadata.Metadata // checked by payments/metadata
}

// Filter selects a page of transfers, newest first.
type Filter struct {
	Status   string          // "" for all
	Currency string          // "" for all
	Metadata metadata.Filter // nil for any
	Page     int
	Limit    int
}
