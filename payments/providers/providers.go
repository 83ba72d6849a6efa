package providers

import (
	"context"
	"encoding/json"
	"time"

	"svc/payments/money"
)

// Bank is the bank partner: NGN virtual accounts and payouts to bank accounts.
//
// Concurrency: implementations are safe for concurrent use. Every method is idempotent by
// the request's Reference: calling again with the same reference returns the same result
// and does not act twice (callers retry from durable jobs).
type Bank interface {
	// CreateVirtualAccount provisions an account that receives NGN bank transfers. The same
	// Reference and Attempt give the same account; a caller whose number collided with one
	// already issued (unique per bank) asks again with Attempt+1.
	// Errors: *UnavailableError, or the partner's.
	CreateVirtualAccount(ctx context.Context, req VirtualAccountRequest) (VirtualAccount, error)
	// Payout sends money to a bank account. A FAILED result is a business outcome (the
	// bank refused), not a Go error; a Go error means the outcome is unknown and the call
	// must be retried with the same Reference.
	// Errors: *UnavailableError, or the partner's.
	Payout(ctx context.Context, req PayoutRequest) (PayoutResult, error)
}

// VirtualAccountRequest asks for one NGN virtual account.
type VirtualAccountRequest struct {
	Reference   string // our id of the account (stable across retries)
	Attempt     int    // 0 first; +1 after a number collision
	AccountName string // shown to the payer, e.g. the customer's or merchant's name
	Type        string // PERMANENT or TEMPORARY
	Amount      *money.Amount
	ExpiresAt   *time.Time
}

// VirtualAccount is an issued account.
type VirtualAccount struct {
	BankCode          string // 3-digit code of the partner bank
	BankName          string
	AccountNumber     string // 10-digit NUBAN
	AccountName       string
	ProviderReference string
}

// Payout rails.
const (
	RailNGN    = "NGN"     // domestic NGN transfer (NIP)
	RailUSACH  = "US_ACH"  // US ACH
	RailUSWire = "US_WIRE" // US wire
	RailSWIFT  = "SWIFT"   // international wire
)

// PayoutRequest sends Amount to a bank account.
type PayoutRequest struct {
	Reference     string
	Rail          string
	Amount        money.Amount
	BankCode      string
	AccountNumber string
	AccountName   string
	Details       map[string]string // rail-specific (routing number, SWIFT/BIC, IBAN, address...)
}

// Payout outcomes.
const (
	PayoutSubmitted = "SUBMITTED" // accepted; poll or wait for the partner's callback
	PayoutSettled   = "SETTLED"
	PayoutFailed    = "FAILED"
)

// PayoutResult is the bank's answer.
type PayoutResult struct {
	Status            string // PayoutSubmitted, PayoutSettled or PayoutFailed
	ProviderReference string
	FailureReason     string // PayoutFailed only
}

// Custody is the chain custodian: deposit addresses and on-chain sends.
//
// Concurrency and idempotency as for Bank.
type Custody interface {
	// DepositAddress returns the address at which req.Reference receives req.Asset on
	// req.Chain; the same reference and chain always give the same address.
	DepositAddress(ctx context.Context, req AddressRequest) (Address, error)
	// Send transfers Amount to To. A FAILED result is a business outcome (the chain refused);
	// a Go error means the outcome is unknown: retry with the same Reference.
	Send(ctx context.Context, req SendRequest) (SendResult, error)
}

// AddressRequest asks for a deposit address.
type AddressRequest struct {
	Reference string // e.g. "merchant:<id>" or "offramp:<id>"
	Chain     Chain
	Asset     money.Asset
}

// Address is a deposit address.
type Address struct {
	Chain   Chain
	Asset   money.Asset
	Address string
}

// SendRequest sends an asset on a chain.
type SendRequest struct {
	Reference string
	Chain     Chain
	Asset     money.Asset
	To        string
	Amount    money.Amount
}

// Send outcomes.
const (
	SendSubmitted = "SUBMITTED" // broadcast; TxHash set
	SendConfirmed = "CONFIRMED"
	SendFailed    = "FAILED"
)

// SendResult is the custodian's answer.
type SendResult struct {
	Status        string
	TxHash        string
	FailureReason string
}

// KYC verifies customers' identities.
//
// Concurrency and idempotency as for Bank.
type KYC interface {
	// VerifyTier1 checks a BVN and a selfie. A rejection is Decision{Approved: false}.
	VerifyTier1(ctx context.Context, req Tier1Request) (Decision, error)
	// VerifyTier2 checks the full identity profile.
	VerifyTier2(ctx context.Context, req Tier2Request) (Decision, error)
	// Initiate starts a hosted verification flow and returns where to send the customer.
	Initiate(ctx context.Context, req InitiateRequest) (Session, error)
}

// Tier1Request is a BVN check.
type Tier1Request struct {
	Reference string
	FirstName string
	LastName  string
	BVN       string // 11 digits
	ImageURL  string // selfie
}

// Tier2Request is a full identity profile (the spec's tier 2 body).
type Tier2Request struct {
	Reference            string
	FirstName            string
	LastName             string
	MostRecentOccupation string // "" when not given
	ActingAsIntermediary bool
	Profile              json.RawMessage // the whole validated body
}

// Decision is a verification outcome.
type Decision struct {
	Approved          bool
	Reason            string // when rejected
	ProviderReference string
}

// InitiateRequest starts a hosted flow.
type InitiateRequest struct {
	Reference   string
	Tier        int // 1 or 2
	Email       string
	BVN         string // tier 1, optional
	RedirectURL string // optional
	// Identity evidence for a provider that checks the customer against bank records
	// (identity.go, Evidence): the customer's names and a bank account in that name.
	// Optional in the API; a provider with EvidenceRequirer says which it needs.
	FirstName     string
	MiddleName    string // optional
	LastName      string
	BankCode      string
	AccountNumber string // 10-digit NUBAN
}

// Session is a started hosted flow.
type Session struct {
	Reference       string
	Status          string // PENDING
	VerificationURL string
	ExpiresAt       time.Time
}

// FX is the reference exchange rate source (used when the exchange's book is empty).
type FX interface {
	// Rate is units of to per one unit of from.
	Rate(ctx context.Context, from, to money.Asset) (Quote, error)
}

// Quote is a reference rate.
type Quote struct {
	From, To money.Asset
	Rate     money.Rate
	At       time.Time
	Source   string
}

// Set is the providers of one environment.
type Set struct {
	Bank    Bank
	Custody Custody
	KYC     KYC
	FX      FX
}

// Complete fills every nil provider with the unconfigured one, which answers
// *UnavailableError.
func (s Set) Complete() Set {
	u := Unconfigured()
	if s.Bank == nil {
		s.Bank = u.Bank
	}
	if s.Custody == nil {
		s.Custody = u.Custody
	}
	if s.KYC == nil {
		s.KYC = u.KYC
	}
	if s.FX == nil {
		s.FX = u.FX
	}
	return s
}

// Environments holds the providers of sandbox and live.
type Environments struct {
	Sandbox Set
	Live    Set
}

// For returns the set of "sandbox" or "live" (completed: never a nil provider).
func (e Environments) For(environment string) Set {
	if environment == "sandbox" {
		return e.Sandbox.Complete()
	}
	return e.Live.Complete()
}

// Default is the simulators in sandbox and nothing configured in live: what svcd runs
// until the operator configures real adapters.
func Default(cfg SandboxConfig) Environments {
	return Environments{Sandbox: NewSandbox(cfg), Live: Unconfigured()}
}
