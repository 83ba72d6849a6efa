package providers

import "svc/payments/money"

// Refunds (issue 19): money that arrived at a virtual account we cannot credit (no such
// account, or its onramp is no longer ACTIVE) goes back to its sender through the partner
// that received it. An optional capability of a bank partner, asked by the partner-events
// refund job; the Paystack adapter implements it with its Refund API.

// RefundRequest returns an inbound transfer, in full, to its sender.
type RefundRequest struct {
	Reference         string       // ours ("refund:<id>"), stable across retries
	ProviderReference string       // the partner's reference of the inbound payment (InboundTransfer.ProviderReference)
	Amount            money.Amount // the whole amount received
	Reason            string       // why it is returned, for the sender's and the partner's records
}

// Refund outcomes.
const (
	RefundPending   = "PENDING"   // accepted by the partner, not yet paid back: ask again later
	RefundProcessed = "PROCESSED" // paid back to the sender
	RefundFailed    = "FAILED"    // the partner refused or could not pay it back (FailureReason): for the operator
)

// RefundResult is the partner's answer. Asking again with the same request answers the same
// refund's state, never a second refund.
type RefundResult struct {
	Status            string // RefundPending, RefundProcessed or RefundFailed
	ProviderReference string // the partner's id of the refund
	FailureReason     string // RefundFailed only
}

// RefundNotice is a partner's notification that a refund changed state. It is a hint, not
// the record: the refund job asks the partner again (RefundResult) before recording anything.
type RefundNotice struct {
	EventID           string // the partner's id of this notification: the idempotency key
	ProviderReference string // the refunded inbound payment's reference (RefundRequest.ProviderReference)
	Status            string // as the partner names it, e.g. "processed"
}
