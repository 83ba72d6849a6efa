package partners

import (
	"context"
	"errors"
	"fmt"
	"time"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/providers"
)

// Providers this package knows, as the route's {provider} names them.
const (
	Paystack       = "paystack"        // live NGN bank partner (payments/providers/paystack)
	SandboxBank    = "sandbox-bank"    // the sandbox bank simulator's notifications
	SandboxCustody = "sandbox-custody" // the sandbox custodian's notifications
)

// Statuses of a stored notification.
const (
	Received  = "RECEIVED"  // stored; its job has not finished
	Processed = "PROCESSED" // value given (or the outcome applied)
	Ignored   = "IGNORED"   // nothing to do (a card payment, an event type we do not act on)
	Rejected  = "REJECTED"  // could not be applied (no such account, refused by the API's record): for the operator
	Malformed = "MALFORMED" // correctly signed but unreadable: for the operator
)

// Errors.
var (
	// ErrBadSignature: the signature is missing or does not match the body (401).
	ErrBadSignature error = &payments.Error{Code: "UNAUTHORIZED", Message: "the notification's signature is missing or wrong"}
	// ErrUnknownProvider: no partner of that name is configured (404).
	ErrUnknownProvider error = &payments.Error{Code: "NOT_FOUND", Message: "no partner of that name is configured"}
	// ErrMalformed is a signed body that cannot be read (wrapped with the reason).
	ErrMalformed = errors.New("partners: malformed notification")
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Notification is one verified notification, parsed into partner-neutral values.
type Notification struct {
	EventID string // the partner's id: the idempotency key
	Type    string // the partner's event type
	// Inbound is money into one of our NGN virtual accounts.
	Inbound *providers.InboundTransfer
	// Payout is the outcome of a payout we asked for (or not: Reference "").
	Payout *providers.PayoutOutcome
	// Crypto is an asset confirmed at one of our deposit addresses.
	Crypto *CryptoDeposit
	// Identity is a KYC partner's answer to a customer identification.
	Identity *providers.IdentityOutcome
	// Refund says a refund we asked for changed state (a hint: the refund job asks again).
	Refund *providers.RefundNotice
	// Flag holds the deposit for compliance review (sandbox notifications only:
	// should_flag of the simulation).
	Flag bool
}

// CryptoDeposit is an asset confirmed on-chain at a deposit address the custodian gave us.
type CryptoDeposit struct {
	Reference   string // the AddressRequest.Reference the address was issued under
	Chain       providers.Chain
	Address     string
	Amount      money.Amount // exact, in the asset's minor units; positive
	TxHash      string
	ConfirmedAt time.Time
}

// Verifier checks one partner's signature over the raw body and parses the notification.
// header returns a request header by name ("" when absent).
//
// Errors: ErrBadSignature (401, nothing stored), ErrMalformed (signed, unreadable: stored
// for the operator).
type Verifier interface {
	Verify(header func(name string) string, body []byte) (Notification, error)
}

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(header func(string) string, body []byte) (Notification, error)

// Verify calls f.
func (f VerifierFunc) Verify(header func(string) string, body []byte) (Notification, error) {
	return f(header, body)
}

// InboundConfirmer is a bank partner whose API confirms an inbound transfer before value is
// given (a notification is a claim, the API is the record); *paystack.Client is one.
type InboundConfirmer interface {
	VerifyInbound(ctx context.Context, reference string) (providers.InboundTransfer, error)
}

// PayoutConfirmer is a bank partner whose API answers a payout's state by our reference; a
// reversal of a settled payout is credited back only once it confirms it (*paystack.Client
// is one). A partner without one (the sandbox bank) is trusted on its signed notification.
type PayoutConfirmer interface {
	VerifyPayout(ctx context.Context, reference string) (providers.PayoutOutcome, error)
}

// Partner is one configured partner: where its notifications come from.
type Partner struct {
	Name        string // the route's {provider}
	Environment string // payments.Sandbox or payments.Live: whose records it may touch
	Verifier    Verifier
	// Confirmer, when set, confirms every inbound transfer before it is credited.
	Confirmer InboundConfirmer
	// PayoutConfirmer, when set, confirms a reversal of a settled payout before the funds
	// are credited back.
	PayoutConfirmer PayoutConfirmer
	// Refunder returns money that arrived for no active account to its sender (nil: such
	// money is only recorded for the operator).
	Refunder Refunder
	// Headers lists the request headers kept for audit besides Content-Type and User-Agent
	// (the signature's, e.g. X-Paystack-Signature).
	Headers []string
}
