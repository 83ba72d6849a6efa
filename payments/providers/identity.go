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

// Evidence is the identity evidence a KYC provider needs to start a hosted flow of a tier,
// beyond what the customer record holds (names, email). The API makes these fields optional
// (the spec's initiate body carries none); a provider that needs them says so, and the
// request is refused as bad input before the provider is called.
type Evidence struct {
	BVN         bool // InitiateRequest.BVN
	BankAccount bool // InitiateRequest.BankCode and AccountNumber
}

// EvidenceRequirer is implemented by a KYC provider whose Initiate needs Evidence (Paystack
// customer identification: the BVN and a bank account in the customer's name, tier 1).
// A provider without it needs none.
type EvidenceRequirer interface {
	InitiateEvidence(tier int) Evidence
}

// EvidenceError: the provider refused the identity evidence itself (a bank it does not know,
// an account number it rejects), not the customer's identity. The request was bad input and
// is answered 400 on Field; nothing was written, and asking again with the same evidence
// gets the same answer.
type EvidenceError struct {
	Field  string // the evidence refused: "bvn" or "bank_account"
	Reason string // the provider's words
}

func (e *EvidenceError) Error() string {
	return "the KYC provider refused the identity evidence (" + e.Field + "): " + e.Reason
}
