package partners

import (
	"errors"

	"svc/payments"
	"svc/payments/providers/paystack"
)

// PaystackPartner is the live Paystack bank partner: its notifications are checked with
// x-paystack-signature (HMAC-SHA512 under the secret key), and every inbound transfer is
// confirmed with VerifyInbound before it is credited.
func PaystackPartner(c *paystack.Client) Partner {
	return Partner{Name: Paystack, Environment: payments.Live, Confirmer: c, PayoutConfirmer: c, Refunder: c, Headers: []string{paystack.SignatureHeader},
		Verifier: VerifierFunc(func(header func(string) string, body []byte) (Notification, error) {
			ev, err := c.ParseEvent(header(paystack.SignatureHeader), body)
			switch {
			case errors.Is(err, paystack.ErrBadSignature):
				return Notification{}, ErrBadSignature
			case errors.Is(err, paystack.ErrMalformedEvent):
				return Notification{}, malformed("%v", err)
			case err != nil:
				return Notification{}, err
			}
			return Notification{EventID: ev.ID, Type: ev.Type, Inbound: ev.Inbound, Payout: ev.Payout, Identity: ev.Identity,
				Refund: ev.Refund}, nil
		})}
}

// SandboxBankPartner is the sandbox bank: its simulations post through the same route.
func SandboxBankPartner(secret string) Partner {
	return Partner{Name: SandboxBank, Environment: payments.Sandbox, Verifier: SandboxBankVerifier(secret),
		Refunder: SandboxRefunder{}, Headers: []string{SandboxSignatureHeader}}
}

// SandboxCustodyPartner is the sandbox custodian.
func SandboxCustodyPartner(secret string) Partner {
	return Partner{Name: SandboxCustody, Environment: payments.Sandbox, Verifier: SandboxCustodyVerifier(secret),
		Headers: []string{SandboxSignatureHeader}}
}
