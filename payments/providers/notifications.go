package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"svc/payments/money"
)

// Partner notifications (issue 19): what a bank partner tells us after the fact, in one
// shape whatever the partner, so the partner-events route and its durable job handle every
// partner alike. A partner adapter verifies the notification's signature and parses its body
// into these values (the Paystack adapter: paystack.ParseEvent); the route stores the raw body
// for audit and processes each notification once, keyed by EventID.

// InboundTransfer is money that arrived by bank transfer at one of our virtual accounts.
type InboundTransfer struct {
	EventID           string       // the partner's id of this notification: the idempotency key
	ProviderReference string       // the partner's reference of the incoming payment
	BankCode          string       // the virtual account's bank, as VirtualAccount.BankCode
	AccountNumber     string       // the virtual account that received the money
	Amount            money.Amount // exact, in minor units (kobo for NGN); always positive
	PaidAt            time.Time    // UTC
	SenderName        string       // as the sending bank reported it; may be empty
	SenderBank        string       // may be empty
	SenderAccount     string       // usually masked by the partner; may be empty
	Narration         string       // may be empty
}

// PayoutReversed is a payout the bank reported settled and later returned (the money is back
// in our partner balance). Only notifications carry it; Payout answers PayoutFailed for a
// payout that was reversed before it was seen settled.
const PayoutReversed = "REVERSED"

// PayoutOutcome is the final state of a payout, reported by the partner.
type PayoutOutcome struct {
	EventID           string       // the partner's id of this notification: the idempotency key
	Reference         string       // our PayoutRequest.Reference; "" for a payout we did not make
	ProviderReference string       // the partner's id of the payout
	Status            string       // PayoutSettled, PayoutFailed or PayoutReversed
	Amount            money.Amount // exact, in minor units
	FailureReason     string       // PayoutFailed and PayoutReversed
	At                time.Time    // UTC; when the partner reached the state (zero if it did not say)
}

// StrictJSON decodes a partner's notification (or a part of one) into v the way every
// adapter must: numbers as json.Number, never float64, so amounts stay exact, and trailing
// data after the JSON value refused.
func StrictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
