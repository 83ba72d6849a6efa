// Package paystack owns the Paystack bank partner adapter: a providers.Bank for live NGN
// rails, written from Paystack's public API documentation, and the verifier and parser of
// Paystack's signed notifications.
//
// What it does, endpoint by endpoint (docs/providers.md has the full mapping):
//
//   - CreateVirtualAccount: a dedicated virtual account (DVA) per Reference and Attempt.
//     GET /customer/{email} finds the Paystack customer of the reference (its email is derived
//     from the reference, so a retry finds it); POST /customer creates it when missing; an
//     active dedicated account of that customer is reused, else POST /dedicated_account
//     creates one at Config.PreferredBank.
//   - Payout (NGN rail): GET /transfer/verify/{reference} first (a transfer made by an earlier
//     attempt is answered, never made twice); else GET /bank/resolve (the beneficiary's name),
//     POST /transferrecipient (type nuban) and POST /transfer (source balance, amount in
//     kobo, our reference). Polling again with the same Reference answers the transfer's state.
//   - ResolveAccount: GET /bank/resolve.
//   - VerifyInbound: GET /transaction/verify/{reference}, the charge behind an inbound
//     transfer as Paystack holds it now (confirm a notification before giving value).
//   - VerifyPayout: GET /transfer/verify/{reference}, a payout's state by our reference
//     (confirm a transfer.reversed before crediting a settled payout back).
//   - Refund: GET /transaction/verify/{reference} (the charge's id), GET /refund?transaction=
//     (a refund already made is the answer), else POST /refund: money for no active account
//     returned to its sender, never twice.
//   - ParseEvent: x-paystack-signature (hex HMAC-SHA512 of the raw body with the secret key,
//     compared in constant time) and the body of charge.success (an inbound transfer to a
//     dedicated account), transfer.success, transfer.failed, transfer.reversed and refund.*.
//
// Calls: every request carries the secret key as a Bearer token and runs under the caller's
// context and a per-attempt timeout (Config.Timeout). 5xx, 429, timeouts and network errors
// are retried with exponential backoff, at most Config.MaxAttempts attempts in all; a 4xx is
// the partner's answer and is not retried. A partner that stays down, or refuses our
// credentials, is *providers.UnavailableError (503 PROVIDER_UNAVAILABLE upstream). Amounts
// are int64 kobo end to end, decoded strictly (no floats anywhere).
//
// The secret key comes from the caller (svcd reads it from the environment); the package
// reads no files, flags or environment variables and never logs the key.
package paystack
