// Package recipients is a merchant's saved payout destinations (spec "Recipients"), and the
// validation of the bank destinations that transfers share with them: domestic NGN bank
// accounts, US bank accounts (ach or wire), SWIFT bank accounts (IBAN checksum, BIC, ISO 3166-1
// alpha-3 countries), and crypto addresses on the crypto-recipient chains.
//
// US_BANK_ACCOUNT and SWIFT_BANK_ACCOUNT recipients belong to a customer of the merchant
// (customer_id required). GET /recipients, GET /recipients/:id and DELETE /recipients/:id are
// our extension of the spec; a deleted recipient is gone from reads and cannot be used by new
// transfers, while transfers already made keep their copy of the destination.
package recipients

import (
	"svc/payments"
	"svc/payments/metadata"
	"time"

	"github.com/google/uuid"
)

// Recipient and destination types.
const (
	BankAccount      = "BANK_ACCOUNT"
	CryptoAddress    = "CRYPTO_ADDRESS"
	USBankAccount    = "US_BANK_ACCOUNT"
	SWIFTBankAccount = "SWIFT_BANK_ACCOUNT"
)

// Types lists the recipient types.
var Types = []string{BankAccount, CryptoAddress, USBankAccount, SWIFTBankAccount}

// Recipient is a saved destination: exactly one of the detail objects is set, the one of Type.
type Recipient struct {
	ID         uuid.UUID
	Tenant     payments.Tenant
	Type       string
	CustomerID *uuid.UUID
	Details    Details
	Metadata   metadata.Metadata // the merchant's own keys (issue 30)
	CreatedAt  time.Time
}

// Details holds the object of a recipient's or transfer destination's type; exactly one is
// set. It is stored as JSON.
type Details struct {
	BankAccount      *Bank   `json:"bank_account,omitempty"`
	CryptoAddress    *Crypto `json:"crypto_address,omitempty"`
	USBankAccount    *USBank `json:"us_bank_account,omitempty"`
	SWIFTBankAccount *SWIFT  `json:"swift_bank_account,omitempty"`
}

// Bank is a domestic (NGN) bank account.
type Bank struct {
	AccountNumber string  `json:"account_number"`
	BankCode      string  `json:"bank_code"`
	AccountName   *string `json:"account_name"`
}

// Crypto is an address on a crypto-recipient chain.
type Crypto struct {
	Asset   string `json:"asset"`
	Chain   string `json:"chain"`
	Address string `json:"address"`
}

// PostalAddress is an address; country (ISO 3166-1 alpha-3) is required, the rest optional.
type PostalAddress struct {
	Line1      *string `json:"line1"`
	Line2      *string `json:"line2"`
	City       *string `json:"city"`
	State      *string `json:"state"`
	PostalCode *string `json:"postal_code"`
	Country    string  `json:"country"`
}

// USBank is a US bank account paid by ACH or wire.
type USBank struct {
	AccountOwnerName string         `json:"account_owner_name"`
	AccountNumber    string         `json:"account_number"`
	RoutingNumber    string         `json:"routing_number"`
	BankName         string         `json:"bank_name"`
	AccountType      string         `json:"account_type"`  // checking or savings
	PayoutScheme     string         `json:"payout_scheme"` // ach or wire
	Address          *PostalAddress `json:"address"`
}

// SWIFT is an international bank account paid by SWIFT wire.
type SWIFT struct {
	AccountOwnerName         string         `json:"account_owner_name"`
	AccountOwnerType         string         `json:"account_owner_type"` // individual or business
	AccountCountry           string         `json:"account_country"`
	IBAN                     string         `json:"iban"`
	BIC                      *string        `json:"bic"`
	BankName                 *string        `json:"bank_name"`
	Category                 string         `json:"category"`
	PurposeOfFunds           []string       `json:"purpose_of_funds"`
	ShortBusinessDescription string         `json:"short_business_description"`
	Address                  *PostalAddress `json:"address"`
	BankAddress              *PostalAddress `json:"bank_address"`
}

// CreateInput is POST /recipients.
type CreateInput struct {
	Type       string
	CustomerID *uuid.UUID
	Details    Details
	Metadata   metadata.Metadata // checked by payments/metadata
}

// Filter selects a page of recipients, newest first.
type Filter struct {
	Type       string // "" for every type
	CustomerID *uuid.UUID
	Metadata   metadata.Filter // nil for any
	Page       int
	Limit      int
}
