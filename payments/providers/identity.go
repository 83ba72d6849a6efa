package providers

import "time"

// Identification (issue 19): a bank partner that verifies a customer's identity against the
// bank records behind a BVN and an account number, answering later by notification (Paystack
// customer identification). The partner-events route hands the outcome to the customer's
// hosted verification whose provider reference is Reference.

// Country of an identification: Nigeria, the only one handled.
const CountryNG = "NG"

// IdentifyRequest starts one identification.
type IdentifyRequest struct {
	Reference     string // our id of the verification (stable across retries)
	FirstName     string
	MiddleName    string // optional
	LastName      string
	BVN           string // 11 digits
	BankCode      string // the customer's bank (a Paystack bank code)
	AccountNumber string // 10-digit NUBAN held in that name at that bank
}

// IdentityOutcome is the partner's answer to an identification, from its notification.
type IdentityOutcome struct {
	EventID           string // the partner's id of this notification: the idempotency key
	Reference         string // the Session.Reference Identify answered ("" when not ours)
	ProviderReference string // the partner's id of the customer
	Approved          bool
	Reason            string    // when not approved, as the partner says it
	At                time.Time // UTC; zero when the partner did not say
}
