package recipients

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/providers"
)

// Reporter collects field errors; *api.Validator is one.
type Reporter = payments.Reporter

// MaxName is the longest owner or bank name (spec "Limits").
const MaxName = 256

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func text(r Reporter, field, v string, min, max int) bool {
	n := utf8.RuneCountInString(strings.TrimSpace(v))
	switch {
	case v == "" && min > 0:
		r.Add(field, "is required")
	case n < min || (max > 0 && utf8.RuneCountInString(v) > max):
		if min > 1 {
			r.Add(field, "must be "+itoa(min)+" to "+itoa(max)+" characters")
		} else {
			r.Add(field, "must be at most "+itoa(max)+" characters")
		}
	default:
		return true
	}
	return false
}

func optText(r Reporter, field string, v *string, max int) {
	if v != nil && utf8.RuneCountInString(*v) > max {
		r.Add(field, "must be at most "+itoa(max)+" characters")
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return s != ""
}

// ValidCountry reports whether s is an ISO 3166-1 alpha-3 country code in upper case
// ("NGA", "USA", "GBR").
func ValidCountry(s string) bool {
	if len(s) != 3 || strings.ToUpper(s) != s {
		return false
	}
	reg, err := language.ParseRegion(s)
	return err == nil && reg.IsCountry() && reg.ISO3() == s
}

func country(r Reporter, field, v string) {
	switch {
	case v == "":
		r.Add(field, "is required")
	case !ValidCountry(v):
		r.Add(field, "must be an ISO 3166-1 alpha-3 country code in upper case, e.g. NGA, USA, GBR")
	}
}

// ValidIBAN reports whether s (upper case, no spaces) is an IBAN of valid shape and checksum:
// a 2-letter country, 2 check digits, 11 to 30 alphanumeric characters, and mod 97 = 1.
func ValidIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 || !alnum(s) || strings.ToUpper(s) != s {
		return false
	}
	if s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' || !digits(s[2:4]) {
		return false
	}
	rearranged := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		if c >= 'A' && c <= 'Z' {
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	return rem == 1
}

// ValidBIC reports whether s is a SWIFT/BIC code: 4 letters (bank), 2 letters (country),
// 2 alphanumerics (location), optionally 3 alphanumerics (branch), upper case.
func ValidBIC(s string) bool {
	if (len(s) != 8 && len(s) != 11) || strings.ToUpper(s) != s || !alnum(s) {
		return false
	}
	for i := 0; i < 6; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// ValidRoutingNumber reports whether s is a 9-digit ABA routing number with a valid check
// digit (weights 3, 7, 1).
func ValidRoutingNumber(s string) bool {
	if len(s) != 9 || !digits(s) {
		return false
	}
	w := [3]int{3, 7, 1}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(s[i]-'0') * w[i%3]
	}
	return sum%10 == 0
}

// digitField reports field as required when v is empty, and unless v is min to max digits.
func digitField(r Reporter, field, v string, min, max int) {
	switch {
	case v == "":
		r.Add(field, "is required")
	case !digits(v) || len(v) < min || len(v) > max:
		r.Add(field, fmt.Sprintf("must be %d to %d digits", min, max))
	}
}

// Validate reports every invalid field of a domestic bank account under prefix.
func (b *Bank) Validate(r Reporter, prefix string) {
	if b == nil {
		r.Add(prefix, "is required")
		return
	}
	digitField(r, join(prefix, "account_number"), b.AccountNumber, 6, 32)
	switch {
	case b.BankCode == "":
		r.Add(join(prefix, "bank_code"), "is required")
	case !alnum(b.BankCode) || len(b.BankCode) < 3 || len(b.BankCode) > 16:
		r.Add(join(prefix, "bank_code"), "must be 3 to 16 letters or digits")
	}
	optText(r, join(prefix, "account_name"), b.AccountName, MaxName)
}

// Validate reports every invalid field of a crypto address under prefix.
func (c *Crypto) Validate(r Reporter, prefix string) {
	if c == nil {
		r.Add(prefix, "is required")
		return
	}
	payments.OneOf(r, join(prefix, "asset"), c.Asset, string(money.USDC), string(money.USDT))
	chainOK := payments.OneOf(r, join(prefix, "chain"), c.Chain, providers.ChainNames(providers.RecipientChains)...)
	switch {
	case c.Address == "":
		r.Add(join(prefix, "address"), "is required")
	case chainOK:
		if err := providers.ValidateAddress(providers.Chain(c.Chain), c.Address); err != nil {
			r.Add(join(prefix, "address"), err.Error())
		}
	}
}

// Validate reports every invalid field of a postal address under prefix.
func (a *PostalAddress) Validate(r Reporter, prefix string) {
	if a == nil {
		r.Add(prefix, "is required")
		return
	}
	optText(r, join(prefix, "line1"), a.Line1, MaxName)
	optText(r, join(prefix, "line2"), a.Line2, MaxName)
	optText(r, join(prefix, "city"), a.City, 100)
	optText(r, join(prefix, "state"), a.State, 100)
	optText(r, join(prefix, "postal_code"), a.PostalCode, 20)
	country(r, join(prefix, "country"), a.Country)
}

// Validate reports every invalid field of a US bank account under prefix.
func (u *USBank) Validate(r Reporter, prefix string) {
	if u == nil {
		r.Add(prefix, "is required")
		return
	}
	text(r, join(prefix, "account_owner_name"), u.AccountOwnerName, 1, MaxName)
	digitField(r, join(prefix, "account_number"), u.AccountNumber, 4, 17)
	switch {
	case u.RoutingNumber == "":
		r.Add(join(prefix, "routing_number"), "is required")
	case !ValidRoutingNumber(u.RoutingNumber):
		r.Add(join(prefix, "routing_number"), "must be a 9-digit ABA routing number with a valid check digit")
	}
	text(r, join(prefix, "bank_name"), u.BankName, 1, MaxName)
	payments.OneOf(r, join(prefix, "account_type"), u.AccountType, "checking", "savings")
	payments.OneOf(r, join(prefix, "payout_scheme"), u.PayoutScheme, "ach", "wire")
	u.Address.Validate(r, join(prefix, "address"))
}

// SWIFT enumerations.
var (
	OwnerTypes      = []string{"individual", "business"}
	Categories      = []string{"client", "parent_company", "subsidiary", "supplier"}
	PurposesOfFunds = []string{"intra_group_transfer", "invoice_for_goods_and_services"}
)

// Validate reports every invalid field of a SWIFT bank account under prefix.
func (s *SWIFT) Validate(r Reporter, prefix string) {
	if s == nil {
		r.Add(prefix, "is required")
		return
	}
	text(r, join(prefix, "account_owner_name"), s.AccountOwnerName, 1, MaxName)
	payments.OneOf(r, join(prefix, "account_owner_type"), s.AccountOwnerType, OwnerTypes...)
	country(r, join(prefix, "account_country"), s.AccountCountry)
	switch {
	case s.IBAN == "":
		r.Add(join(prefix, "iban"), "is required")
	case !ValidIBAN(s.IBAN):
		r.Add(join(prefix, "iban"), "must be an IBAN in upper case without spaces, with a valid checksum")
	}
	if s.BIC != nil && !ValidBIC(*s.BIC) {
		r.Add(join(prefix, "bic"), "must be an 8 or 11 character SWIFT/BIC code in upper case")
	}
	optText(r, join(prefix, "bank_name"), s.BankName, MaxName)
	payments.OneOf(r, join(prefix, "category"), s.Category, Categories...)
	if len(s.PurposeOfFunds) == 0 {
		r.Add(join(prefix, "purpose_of_funds"), "must list at least one of intra_group_transfer, invoice_for_goods_and_services")
	}
	for _, p := range s.PurposeOfFunds {
		if p != PurposesOfFunds[0] && p != PurposesOfFunds[1] {
			r.Add(join(prefix, "purpose_of_funds"), "must contain only intra_group_transfer, invoice_for_goods_and_services")
			break
		}
	}
	text(r, join(prefix, "short_business_description"), s.ShortBusinessDescription, 1, 500)
	s.Address.Validate(r, join(prefix, "address"))
	s.BankAddress.Validate(r, join(prefix, "bank_address"))
}

// Validate reports every invalid field of the object of type typ under prefix ("" for a
// recipient body, "destination" for a transfer's), and that no other type's object is given.
func (d *Details) Validate(r Reporter, prefix, typ string) {
	set := map[string]bool{BankAccount: d.BankAccount != nil, CryptoAddress: d.CryptoAddress != nil,
		USBankAccount: d.USBankAccount != nil, SWIFTBankAccount: d.SWIFTBankAccount != nil}
	for _, t := range Types {
		if set[t] && t != typ {
			r.Add(join(prefix, strings.ToLower(t)), "must not be given with type "+typ)
		}
	}
	switch typ {
	case BankAccount:
		d.BankAccount.Validate(r, join(prefix, "bank_account"))
	case CryptoAddress:
		d.CryptoAddress.Validate(r, join(prefix, "crypto_address"))
	case USBankAccount:
		d.USBankAccount.Validate(r, join(prefix, "us_bank_account"))
	case SWIFTBankAccount:
		d.SWIFTBankAccount.Validate(r, join(prefix, "swift_bank_account"))
	}
}

// Validate reports every invalid field of a recipient body.
func (in *CreateInput) Validate(r Reporter) {
	if !payments.OneOf(r, "type", in.Type, Types...) {
		return
	}
	if (in.Type == USBankAccount || in.Type == SWIFTBankAccount) && in.CustomerID == nil {
		r.Add("customer_id", "is required for "+in.Type+" recipients")
	}
	in.Details.Validate(r, "", in.Type)
}
