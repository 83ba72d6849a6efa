package paystack_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"svc/payments/providers/paystack"
)

// A partner-events route verifies the raw body before anything else, answers 401 to a bad
// signature, and keys its processing by Event.ID.
func ExampleParseEvent() {
	secret := "sk_test_example"
	body := []byte(`{"event":"transfer.success","data":{"id":860703114,"amount":150075,"currency":"NGN",` +
		`"reference":"payout__0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88","status":"success",` +
		`"transfer_code":"TRF_v5tip3zx8nna9o78","updatedAt":"2026-11-24T10:32:40.000Z"}}`)
	signature := hex.EncodeToString(paystack.Sign(secret, body)) // what Paystack sends in x-paystack-signature

	ev, err := paystack.ParseEvent(secret, signature, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.ID, ev.Payout.Reference, ev.Payout.Status, ev.Payout.Amount)

	_, err = paystack.ParseEvent(secret, "", body)
	fmt.Println(errors.Is(err, paystack.ErrBadSignature))
	// Output:
	// transfer.success:860703114 payout:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88 SETTLED 1500.75
	// true
}
