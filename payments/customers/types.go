// Package customers is a merchant's end users: records, KYC tiers (tier 1: BVN and selfie;
// tier 2: the full identity profile, through the KYC provider), hosted verification flows,
// crypto wallets, crypto funding requests, and their balances and ledger (read from
// payments/ledger, where the customer's accounts are OwnerCustomer accounts).
//
// Every query is scoped by merchant and environment (Tenant); another tenant's customer is
// ErrNotFound. Each state change commits with its event (customer.created,
// customer.tier1_verified, customer.tier2_verified, customer.tier2_rejected) in one
// transaction, written through idempotency.InTx so a keyed request takes part in its scope.
// KYC and custody providers are asked BEFORE anything is written: in live without a
// configured provider the call fails with *providers.UnavailableError and nothing changes.
package customers

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"svc/payments/metadata"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
)

// KYC tiers.
const (
	Tier0 = "TIER_0"
	Tier1 = "TIER_1"
	Tier2 = "TIER_2"
)

// TierMachine is the KYC tier's state machine: a tier only rises, one step at a time;
// every tier change goes through it (setTier).
var TierMachine = payments.Machine{Name: "kyc tier", Moves: map[string][]string{
	Tier0: {Tier1},
	Tier1: {Tier2},
}}

// TierRank orders tiers: TIER_0 0, TIER_1 1, TIER_2 2.
func TierRank(tier string) int {
	switch tier {
	case Tier1:
		return 1
	case Tier2:
		return 2
	}
	return 0
}

// Customer is one end user of a merchant.
type Customer struct {
	ID        uuid.UUID
	Email     string
	FirstName string
	LastName  string
	KYCTier   string
	Metadata  metadata.Metadata // the merchant's own keys (issue 30)
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Name is "first last".
func (c Customer) Name() string { return c.FirstName + " " + c.LastName }

// CreateInput is a new customer (validated by the caller: email, names 1 to 100).
type CreateInput struct {
	Email     string
	FirstName string
	LastName  string
	Metadata  metadata.Metadata // checked by payments/metadata
}

// UpdateInput changes the names given (nil: unchanged).
type UpdateInput struct {
	FirstName *string
	LastName  *string
	Metadata  metadata.Metadata // keys to set or ("") remove (metadata.Merge); nil: unchanged
}

// ListFilter selects a page of customers, newest first.
type ListFilter struct {
	Email    string          // exact match (case-insensitive); "" for all
	KYCTier  string          // "" for all
	After    uuid.UUID       // cursor: customers older than this id; uuid.Nil for the first page
	Metadata metadata.Filter // nil for any
	Limit    int
}

// Verification statuses.
const (
	Pending  = "PENDING"
	Verified = "VERIFIED"
	Rejected = "REJECTED"
)

// Verification is one KYC submission or hosted flow.
type Verification struct {
	ID                uuid.UUID
	CustomerID        uuid.UUID
	Tier              int
	Status            string
	Reason            string
	ProviderReference string
	VerificationURL   string
	RedirectURL       string // hosted flows: where the customer goes back to (optional)
	ExpiresAt         *time.Time
	CreatedAt         time.Time
	Kind              string // KindSubmission or KindHosted
	// The bank account a hosted flow was started with (identity evidence), masked: the bank
	// code and the account number's last 4 digits; "" when none was given.
	BankCode     string
	AccountLast4 string
}

// Verification kinds.
const (
	KindSubmission = "submission" // tier1-verification, tier2-verification: the outcome at once
	KindHosted     = "hosted"     // kyc/initiate, tier2-kyc/initiate: PENDING until the provider's outcome
)

// Tier1Input is a BVN submission (validated by the caller: 11 digits, http(s) URL).
type Tier1Input struct {
	BVN      string
	ImageURL string
}

// Tier2Input is the tier 2 profile (validated by the caller field by field).
// MostRecentOccupation may be empty (the provider decides: the sandbox rejects).
type Tier2Input struct {
	MostRecentOccupation string
	ActingAsIntermediary bool
	Profile              json.RawMessage // the whole validated body, kept as the KYC record
}

// InitiateInput starts a hosted flow (validated by the caller: formats). The identity
// evidence (BVN, bank account, middle name) is optional unless the environment's KYC
// provider needs it (providers.EvidenceRequirer); Initiate refuses its absence as a
// *payments.ValidationError. The BVN and account number go to the provider in clear and are
// stored masked only.
type InitiateInput struct {
	BVN           string
	RedirectURL   string
	MiddleName    string
	BankCode      string
	AccountNumber string // 10 digits
}

// Wallet is a registered crypto destination of a customer.
type Wallet struct {
	ID         uuid.UUID
	CustomerID uuid.UUID
	Chain      string
	Asset      string
	Address    string
	Label      *string
	CreatedAt  time.Time
}

// WalletInput registers a wallet (validated by the caller: chain, asset, address format).
type WalletInput struct {
	Chain   string
	Asset   string
	Address string
	Label   *string
}

// FundingRequest is where a customer sends crypto to fund their balance.
type FundingRequest struct {
	ID             uuid.UUID
	CustomerID     uuid.UUID
	Chain          string
	Asset          string
	Amount         *money.Amount
	DepositAddress string
	Status         string
	ExpiresAt      time.Time
	CreatedAt      time.Time
}

// FundingInput asks for a funding request.
type FundingInput struct {
	Chain  string
	Asset  string
	Amount *money.Amount
}

// FundingLifetime is how long a funding request stays PENDING.
const FundingLifetime = 24 * time.Hour

// Balance is a customer's balance: NGN, the USD equivalent of USD, USDT and USDC at par,
// and every account behind them.
type Balance struct {
	NGN       money.Amount
	USD       money.Amount // 2 places, rounded down from the 6-place sum
	Accounts  []ledger.Balance
	UpdatedAt time.Time
}
