package paystack

import (
	"context"
	"errors"
	"strings"
	"time"

	"svc/payments/providers"
)

// Customer identification events (answers to Identify).
const (
	EventIdentificationSuccess = "customeridentification.success"
	EventIdentificationFailed  = "customeridentification.failed"
)

// identificationTTL is how long a started identification may wait for Paystack's answer
// before the verification shows EXPIRED.
const identificationTTL = 24 * time.Hour

// kycPrefix marks the Paystack customers that carry an identification: the customer's email
// is derived from "kyc:<reference>", so the notification (which names the customer's email)
// names our verification again.
const kycPrefix = "kyc:"

// Identify starts Paystack customer identification (POST /customer/{customer_code}/identification,
// type bank_account, country NG) for a Paystack customer of its own, derived from
// req.Reference: the same reference always uses the same customer. Paystack answers 202 and
// later sends customeridentification.success or customeridentification.failed; ParseEvent
// turns them into providers.IdentityOutcome whose Reference is the Session.Reference
// returned here ("kyc:" + req.Reference). The session expires identificationTTL after the
// client's clock (Config.Now).
//
// Errors: a plain error for a request missing a field (the caller validates first);
// *providers.EvidenceError when Paystack refuses the evidence itself (its invalid_params: a
// bank it does not know, say); *providers.UnavailableError when Paystack is unreachable or
// refuses the request for another reason (nothing written on our side; asking again with the
// same Reference uses the same Paystack customer).
func (c *Client) Identify(ctx context.Context, req providers.IdentifyRequest) (providers.Session, error) {
	if req.Reference == "" || req.FirstName == "" || req.LastName == "" || len(req.BVN) != 11 || !digitsOnly(req.BVN) ||
		len(req.AccountNumber) != 10 || !digitsOnly(req.AccountNumber) || req.BankCode == "" {
		return providers.Session{}, errors.New("paystack: identification needs a reference, first and last name, an 11-digit BVN, a bank code and a 10-digit account number")
	}
	ref := kycPrefix + req.Reference
	email := c.customerEmail(ref, 0)
	var cust customer
	err := c.call(ctx, "fetch customer", "GET", "/customer/"+email, nil, nil, &cust)
	if notFound(err) {
		body := map[string]any{"email": email, "first_name": req.FirstName, "last_name": req.LastName, "phone": c.cfg.Phone,
			"metadata": map[string]string{"svc_reference": ref}}
		err = c.call(ctx, "create customer", "POST", "/customer", nil, body, &cust)
	}
	if err != nil {
		return providers.Session{}, c.kycRefused(err)
	}
	if cust.CustomerCode == "" {
		return providers.Session{}, c.down("fetch customer", "the answer has no customer_code")
	}
	body := map[string]any{"country": providers.CountryNG, "type": "bank_account", "account_number": req.AccountNumber,
		"bvn": req.BVN, "bank_code": req.BankCode, "first_name": req.FirstName, "last_name": req.LastName}
	if req.MiddleName != "" {
		body["middle_name"] = req.MiddleName
	}
	if err := c.call(ctx, "validate customer", "POST", "/customer/"+cust.CustomerCode+"/identification", nil, body, nil); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.HTTPStatus == 400 && ae.Code == "invalid_params" {
			c.log.Info("paystack refused identification evidence", "message", ae.Message)
			return providers.Session{}, &providers.EvidenceError{Field: "bank_account", Reason: ae.Message}
		}
		return providers.Session{}, c.kycRefused(err)
	}
	return providers.Session{Reference: ref, Status: "PENDING", ExpiresAt: c.cfg.Now().UTC().Add(identificationTTL)}, nil
}

func (c *Client) kycRefused(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		c.log.Warn("paystack refused an identification", "op", ae.Op, "status", ae.HTTPStatus, "message", ae.Message)
		return &providers.UnavailableError{Provider: "kyc", Operation: "paystack customer identification",
			Reason: "the partner refused the request: " + ae.Error()}
	}
	return err
}

// KYC is the live KYC provider over Paystack (svcd sets it when Paystack is configured):
// a tier 1 hosted verification is Paystack customer identification (Initiate calls
// Identify with the customer's names, BVN and bank account; there is no page, so the
// session has no VerificationURL, and the outcome arrives as customeridentification.*).
// Paystack offers no synchronous BVN-and-selfie check and no tier 2 profile review, so
// VerifyTier1, VerifyTier2 and a tier 2 Initiate answer *providers.UnavailableError (503
// PROVIDER_UNAVAILABLE) as an unconfigured provider does.
func (c *Client) KYC() providers.KYC { return identityKYC{c} }

type identityKYC struct{ c *Client }

var (
	_ providers.KYC              = identityKYC{}
	_ providers.EvidenceRequirer = identityKYC{}
)

// InitiateEvidence implements providers.EvidenceRequirer: tier 1 needs the BVN and a bank
// account in the customer's name.
func (k identityKYC) InitiateEvidence(tier int) providers.Evidence {
	if tier == 1 {
		return providers.Evidence{BVN: true, BankAccount: true}
	}
	return providers.Evidence{}
}

func (k identityKYC) Initiate(ctx context.Context, req providers.InitiateRequest) (providers.Session, error) {
	if req.Tier != 1 {
		return providers.Session{}, &providers.UnavailableError{Provider: "kyc", Operation: "tier 2 verification flow",
			Reason: "the live KYC partner (Paystack) verifies tier 1 only; no tier 2 provider is configured"}
	}
	return k.c.Identify(ctx, providers.IdentifyRequest{Reference: req.Reference, FirstName: req.FirstName, MiddleName: req.MiddleName,
		LastName: req.LastName, BVN: req.BVN, BankCode: req.BankCode, AccountNumber: req.AccountNumber})
}

func (k identityKYC) VerifyTier1(context.Context, providers.Tier1Request) (providers.Decision, error) {
	return providers.Decision{}, &providers.UnavailableError{Provider: "kyc", Operation: "tier 1 verification",
		Reason: "the live KYC partner (Paystack) has no synchronous BVN and selfie check: start tier 1 with POST /v1/customers/{id}/kyc/initiate"}
}

func (k identityKYC) VerifyTier2(context.Context, providers.Tier2Request) (providers.Decision, error) {
	return providers.Decision{}, &providers.UnavailableError{Provider: "kyc", Operation: "tier 2 verification",
		Reason: "the live KYC partner (Paystack) verifies tier 1 only; no tier 2 provider is configured"}
}

// wireIdentification is customeridentification.*'s data (the fields we use).
type wireIdentification struct {
	CustomerID     any    `json:"customer_id"` // Paystack sends a string or a number
	CustomerCode   string `json:"customer_code"`
	Email          string `json:"email"`
	Reason         string `json:"reason"`
	Identification struct {
		Country       string `json:"country"`
		Type          string `json:"type"`
		BVN           string `json:"bvn"`
		AccountNumber string `json:"account_number"`
		BankCode      string `json:"bank_code"`
	} `json:"identification"`
}

// identity parses a customeridentification.* notification's data.
func identity(typ string, data []byte) (string, *providers.IdentityOutcome, error) {
	var d wireIdentification
	if err := providers.StrictJSON(data, &d); err != nil {
		return "", nil, malformed("%s data: %v", typ, err)
	}
	if d.CustomerCode == "" {
		return "", nil, malformed("%s without customer_code", typ)
	}
	out := &providers.IdentityOutcome{ProviderReference: d.CustomerCode, Approved: typ == EventIdentificationSuccess}
	if local, _, ok := strings.Cut(d.Email, "@"); ok {
		if ref, err := DecodeReference(local); err == nil && strings.HasPrefix(ref, kycPrefix) {
			out.Reference = ref
		}
	}
	if !out.Approved {
		out.Reason = strings.TrimSpace(d.Reason)
		if out.Reason == "" {
			out.Reason = "Paystack could not identify the customer"
		}
	}
	// Paystack gives no id of its own for an identification: the customer, the outcome and
	// the masked details identify one answer (a repeat of the same is the same event).
	id := typ + ":" + d.CustomerCode + ":" + d.Identification.BankCode + ":" + d.Identification.AccountNumber
	out.EventID = id
	return id, out, nil
}
