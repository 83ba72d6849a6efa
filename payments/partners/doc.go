// Package partners owns the one inbound path for money (issue 19): the notifications banks
// and custodians post to POST /v1/partners/{provider}/events. A notification is checked
// against its partner's signature over the raw body (a forged or missing one is refused and
// nothing is stored), stored raw for audit in partner_events keyed by the partner's event id
// (a repeat finds its row and changes nothing), and processed by a durable river job that
// gives value through the domain services:
//
//   - money into an NGN virtual account (an onramp; a customer's NGN account is one):
//     confirmed with the partner's API where it has one (Paystack: VerifyInbound), then
//     deposits.Service.Receive in the same transaction that marks the notification done;
//   - a payout's outcome (reference payout:<id> or transfer:<id>): the offramp payout or
//     transfer is advanced, which asks the bank for the payout's state by our reference
//     (the API is the record) and settles or fails it;
//   - crypto confirmed at one of our deposit addresses (sandbox-custody format): a merchant
//     funding address credits the merchant's balance (merchant.balance.credited), a
//     customer's funding address credits the customer and completes the open funding
//     request it matches, an offramp's deposit address settles the offramp
//     (offramps.Service.ReceiveCrypto: converted and paid out in NGN, or credited);
//   - money that comes back: a payout the bank reverses after it settled is confirmed with
//     the partner's API (PayoutConfirmer) and credited back by its reverser
//     (Config.Reversals); money for an unknown or inactive account is recorded in
//     partner_refunds and returned to its sender by the refund job (Refunder,
//     AdvanceRefund), which a partner's refund notification prompts.
//
// The sandbox's simulate operations emit the same notifications (a sandbox bank and a
// sandbox custody signing with the sandbox secret) and go through the same intake and
// processing: SandboxDeposits (NGN into an onramp), SandboxOfframps (crypto at an
// offramp's address) and CustodySimulator (crypto at any of the merchant's addresses).
package partners
