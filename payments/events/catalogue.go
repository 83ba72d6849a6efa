package events

import "slices"

// Type is the name of an event, as sent in the delivery envelope's "event" field.
type Type string

// The event catalogue: every event name of the spec ("Events", "Event names").
const (
	DepositReceived          Type = "deposit.received"           // NGN transfer received; conversion beginning
	DepositPendingWithdrawal Type = "deposit.pending_withdrawal" // conversion done; asset on its way
	DepositSettled           Type = "deposit.settled"            // deposit fully settled
	DepositFailed            Type = "deposit.failed"             // deposit could not be completed
	DepositFlagged           Type = "deposit.flagged"            // deposit held for compliance review
	WithdrawalCompleted      Type = "withdrawal.completed"       // withdrawal confirmed on-chain
	OnrampCompleted          Type = "onramp.completed"           // an onramp (virtual account) became active
	OfframpCompleted         Type = "offramp.completed"          // an offramp was completed
	TransferCompleted        Type = "transfer.completed"         // a bank transfer was completed
	PayoutCompleted          Type = "payout.completed"           // an NGN payout was settled
	CustomerCreated          Type = "customer.created"           // customer created
	CustomerTier1Verified    Type = "customer.tier1_verified"    // Tier 1 (BVN) verification passed
	CustomerTier2Verified    Type = "customer.tier2_verified"    // Tier 2 verification passed
	CustomerTier2Rejected    Type = "customer.tier2_rejected"    // Tier 2 verification failed
	CustomerBalanceCredited  Type = "customer.balance.credited"  // customer's internal balance credited
	CustomerBalanceRefunded  Type = "customer.balance.refunded"  // customer's internal balance refunded
	CheckoutPaymentCompleted Type = "checkout.payment.completed" // payment made through a checkout link
	VirtualAccountCreated    Type = "virtual_account.created"    // a virtual bank account was provisioned
	TestWebhook              Type = "test.webhook"               // generic event of the test operation

	// Extensions (issue 11): the spec names no event for these failures; each flow's FAILED
	// state sends one, with the same data as its *.completed event (status FAILED,
	// failure_reason in the resource).
	WithdrawalFailed Type = "withdrawal.failed" // withdrawal refused by the chain; funds returned to available
	TransferFailed   Type = "transfer.failed"   // bank transfer refused by the bank; funds returned to available

	// Extension (issue 19): the spec names no event for crypto arriving at a merchant's own
	// funding address (GET /payments/merchant/funding); named after customer.balance.credited.
	MerchantBalanceCredited Type = "merchant.balance.credited" // merchant's payments balance credited by a deposit to its funding address

	// Extension (issue 32): money that arrives for a checkout payment its link can no longer
	// take (a one-time link already paid, a link deactivated or deleted meanwhile, an invoice
	// no longer payable, stock gone) is credited to the merchant as every deposit is, and the
	// payment ends failed with this event, so the merchant can refund the payer.
	CheckoutPaymentFailed Type = "checkout.payment.failed" // money arrived for a checkout payment its link refused: credited to the merchant, for it to refund
)

var catalogue = []Type{
	DepositReceived, DepositPendingWithdrawal, DepositSettled, DepositFailed, DepositFlagged,
	WithdrawalCompleted, OnrampCompleted, OfframpCompleted, TransferCompleted, PayoutCompleted,
	CustomerCreated, CustomerTier1Verified, CustomerTier2Verified, CustomerTier2Rejected,
	CustomerBalanceCredited, CustomerBalanceRefunded, CheckoutPaymentCompleted,
	VirtualAccountCreated, TestWebhook, WithdrawalFailed, TransferFailed, MerchantBalanceCredited, CheckoutPaymentFailed,
}

// All returns every event name of the catalogue, in the spec's order.
func All() []Type { return slices.Clone(catalogue) }

// Known reports whether name is in the catalogue.
func Known(name string) bool { return slices.Contains(catalogue, Type(name)) }
