package offramps

import (
	"strings"
	"unicode/utf8"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/providers"
)

// Reporter collects field errors; *api.Validator is one.
type Reporter = payments.Reporter

func emailOK(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && at == strings.LastIndexByte(s, '@') && strings.Contains(s[at+1:], ".") &&
		!strings.ContainsAny(s, " \t\r\n<>()[],;:\"") && len(s) <= 254 && !strings.HasSuffix(s, ".")
}

func names(r Reporter, field, v string) {
	if v != "" && (utf8.RuneCountInString(v) > 100 || strings.TrimSpace(v) == "") {
		r.Add(field, "must be 1 to 100 characters")
	}
}

// Validate reports every invalid field of the body to r.
func (in *CreateInput) Validate(r Reporter) {
	payments.OneOf(r, "type", in.Type, Types...)
	switch c := in.Customer; {
	case c == nil:
		r.Add("customer", "is required: customer_id or email")
	case c.ID != nil && c.Email != "":
		r.Add("customer", "customer_id and email are mutually exclusive; give one")
	case c.ID == nil && c.Email == "":
		r.Add("customer", "needs customer_id or email")
	case c.Email != "":
		if !emailOK(c.Email) {
			r.Add("customer.email", "must be a valid email address")
		}
		names(r, "customer.first_name", c.FirstName)
		names(r, "customer.last_name", c.LastName)
	default:
		if c.FirstName != "" || c.LastName != "" {
			r.Add("customer", "first_name and last_name apply only when creating by email")
		}
	}
	payments.OneOf(r, "chain", in.Chain, providers.ChainNames(providers.WalletChains)...)
	payments.OneOf(r, "asset", in.Asset, Assets...)
	st := in.Settlement
	if st == nil {
		r.Add("settlement", "is required")
		return
	}
	if !payments.OneOf(r, "settlement.mode", st.Mode, Modes...) {
		return
	}
	if st.Mode == ModeInternal {
		if st.RateID != nil {
			r.Add("settlement.rate_id", "applies only to NGN_PAYOUT")
		}
		if st.DestinationBank != nil {
			r.Add("settlement.destination_bank", "applies only to NGN_PAYOUT")
		}
		return
	}
	if st.RateID == nil {
		r.Add("settlement.rate_id", "is required for NGN_PAYOUT (a sell rate id from GET /payments/rates)")
	}
	b := st.DestinationBank
	if b == nil {
		r.Add("settlement.destination_bank", "is required for NGN_PAYOUT")
		return
	}
	if strings.TrimSpace(b.AccountName) == "" {
		r.Add("settlement.destination_bank.account_name", "is required")
	} else if utf8.RuneCountInString(b.AccountName) > 256 {
		r.Add("settlement.destination_bank.account_name", "must be at most 256 characters")
	}
	if n := utf8.RuneCountInString(b.AccountNumber); b.AccountNumber == "" {
		r.Add("settlement.destination_bank.account_number", "is required")
	} else if n < 6 || n > 32 {
		r.Add("settlement.destination_bank.account_number", "must be 6 to 32 characters")
	}
	if n := utf8.RuneCountInString(b.BankCode); b.BankCode == "" {
		r.Add("settlement.destination_bank.bank_code", "is required")
	} else if n < 3 || n > 16 {
		r.Add("settlement.destination_bank.bank_code", "must be 3 to 16 characters")
	}
}

// ParseAmount reads a simulated deposit's amount in the offramp's asset.
func ParseAmount(asset money.Asset, s string) (money.Amount, error) {
	return money.ParsePositive(asset, s)
}
