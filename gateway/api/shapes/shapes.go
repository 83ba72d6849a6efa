// Package shapes holds the JSON shapes, with their OpenAPI schemas, that more than one
// gateway resource answers with or reads, so that no resource package imports another:
// commerce amounts as exact JSON numbers (products, invoices, checkout links), invoice line
// items (invoices and checkout links), bank destinations (recipients and transfers), the
// chains of withdrawals and offramps, NGN amounts in requests (onramps and deposits) and
// deposits (the deposits resource and the sandbox deposit controls).
package shapes

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"svc/gateway/api"
	o "svc/gateway/openapi"
	"svc/payments/deposits"
	pi "svc/payments/invoices"
	"svc/payments/money"
	"svc/payments/onramps"
	pp "svc/payments/products"
)

// Amount is minor units of currency as a JSON number with the currency's places.
func Amount(currency string, minor int64) api.Num { return api.Num(pp.FormatAmount(currency, minor)) }

// Adjustment is a tax rate or discount as a JSON number (percent, or an amount).
func Adjustment(a pp.Adjustment, currency string) api.Num {
	return api.Num(pp.FormatAdjustment(a, currency))
}

// LineJSON is a line item in responses (invoices and checkout links).
type LineJSON struct {
	ID             string  `json:"id"`
	Description    string  `json:"description"`
	Quantity       int64   `json:"quantity"`
	UnitPrice      api.Num `json:"unit_price"`
	ProductID      *string `json:"product_id"`
	TaxType        string  `json:"tax_type"`
	TaxRate        api.Num `json:"tax_rate"`
	DiscountType   string  `json:"discount_type"`
	Discount       api.Num `json:"discount"`
	Subtotal       api.Num `json:"subtotal"`
	DiscountAmount api.Num `json:"discount_amount"`
	TaxAmount      api.Num `json:"tax_amount"`
	Total          api.Num `json:"total"`
}

// LineOut renders a line item.
func LineOut(l pi.Line, currency string) LineJSON {
	out := LineJSON{ID: l.ID.String(), Description: l.Description, Quantity: l.Quantity,
		UnitPrice: Amount(currency, l.UnitPrice), TaxType: l.Tax.Type, TaxRate: Adjustment(l.Tax, currency),
		DiscountType: l.Discount.Type, Discount: Adjustment(l.Discount, currency),
		Subtotal: Amount(currency, l.Subtotal), DiscountAmount: Amount(currency, l.DiscountAmount),
		TaxAmount: Amount(currency, l.TaxAmount), Total: Amount(currency, l.Total)}
	if l.ProductID != nil {
		s := l.ProductID.String()
		out.ProductID = &s
	}
	return out
}

// LinesOut renders line items (never null).
func LinesOut(lines []pi.Line, currency string) []LineJSON {
	out := make([]LineJSON, len(lines))
	for i, l := range lines {
		out[i] = LineOut(l, currency)
	}
	return out
}

// LineBody is a line item in requests (invoices and checkout links).
type LineBody struct {
	Description  string       `json:"description"`
	Quantity     *int64       `json:"quantity"`
	UnitPrice    *json.Number `json:"unit_price"`
	ProductID    *uuid.UUID   `json:"product_id"`
	TaxType      string       `json:"tax_type"`
	TaxRate      *json.Number `json:"tax_rate"`
	DiscountType string       `json:"discount_type"`
	Discount     *json.Number `json:"discount"`
}

// Input converts the body to the domain's input.
func (b LineBody) Input() pi.LineInput {
	return pi.LineInput{Description: b.Description, Quantity: b.Quantity, UnitPrice: api.NumText(b.UnitPrice),
		ProductID: b.ProductID, TaxType: b.TaxType, TaxRate: api.NumText(b.TaxRate), DiscountType: b.DiscountType,
		Discount: api.NumText(b.Discount)}
}

// LineInputs converts line bodies.
func LineInputs(bs []LineBody) []pi.LineInput {
	out := make([]pi.LineInput, len(bs))
	for i, b := range bs {
		out[i] = b.Input()
	}
	return out
}

// AdjustType is the schema of a tax or discount type.
var AdjustType = o.Enum("none", "percentage", "fixed")

// LineSchema documents LineJSON.
var LineSchema = o.Obj(map[string]o.Schema{
	"id":              o.UUID(""),
	"description":     o.Str(""),
	"quantity":        o.Int(""),
	"unit_price":      o.Number(""),
	"product_id":      o.Nullable(o.UUID("")),
	"tax_type":        AdjustType,
	"tax_rate":        o.Number("percent, or a fixed amount for the line"),
	"discount_type":   AdjustType,
	"discount":        o.Number("percent, or a fixed amount for the line"),
	"subtotal":        o.Number("quantity x unit_price"),
	"discount_amount": o.Number("applied first, at most the subtotal"),
	"tax_amount":      o.Number("on the discounted subtotal"),
	"total":           o.Number("subtotal - discount + tax, rounded half up to the currency's places"),
})

// LineBodySchema documents LineBody.
var LineBodySchema = o.Obj(map[string]o.Schema{
	"description":   o.Str("required unless product_id; at most 500 characters"),
	"quantity":      o.Int("required, positive"),
	"unit_price":    o.Number("required unless product_id; >= 0"),
	"product_id":    o.UUID("an active product of the same currency: fills description, price, tax and discount"),
	"tax_type":      AdjustType,
	"tax_rate":      o.Number("required unless tax_type is none"),
	"discount_type": AdjustType,
	"discount":      o.Number("required unless discount_type is none"),
}, "quantity")

// The bank destinations of recipients and transfers.

// Address is a postal address object.
var Address = o.Obj(map[string]o.Schema{
	"line1": o.Nullable(o.Str("")), "line2": o.Nullable(o.Str("")), "city": o.Nullable(o.Str("")),
	"state": o.Nullable(o.Str("")), "postal_code": o.Nullable(o.Str("")),
	"country": o.Str("required, ISO 3166-1 alpha-3 in upper case (NGA, USA, GBR)"),
}, "country")

// BankAccount is the domestic NGN bank account object.
var BankAccount = o.Obj(map[string]o.Schema{
	"account_number": o.Str("required, 6 to 32 digits"),
	"bank_code":      o.Str("required, 3 to 16 letters or digits"),
	"account_name":   o.Nullable(o.Str("at most 256 characters")),
}, "account_number", "bank_code")

// USBankAccount is the US bank account object.
var USBankAccount = o.Obj(map[string]o.Schema{
	"account_owner_name": o.Str("required, at most 256 characters"),
	"account_number":     o.Str("required, 4 to 17 digits"),
	"routing_number":     o.Str("required, 9-digit ABA routing number with a valid check digit"),
	"bank_name":          o.Str("required, at most 256 characters"),
	"account_type":       o.Enum("checking", "savings"),
	"payout_scheme":      o.Enum("ach", "wire"),
	"address":            Address,
}, "account_owner_name", "account_number", "routing_number", "bank_name", "account_type", "payout_scheme", "address")

// SWIFTBankAccount is the SWIFT bank account object.
var SWIFTBankAccount = o.Obj(map[string]o.Schema{
	"account_owner_name":         o.Str("required, at most 256 characters"),
	"account_owner_type":         o.Enum("individual", "business"),
	"account_country":            o.Str("required, ISO 3166-1 alpha-3"),
	"iban":                       o.Str("required, upper case without spaces, valid mod-97 checksum"),
	"bic":                        o.Nullable(o.Str("8 or 11 characters")),
	"bank_name":                  o.Nullable(o.Str("at most 256 characters")),
	"category":                   o.Enum("client", "parent_company", "subsidiary", "supplier"),
	"purpose_of_funds":           o.Arr(o.Enum("intra_group_transfer", "invoice_for_goods_and_services")),
	"short_business_description": o.Str("required, at most 500 characters"),
	"address":                    Address,
	"bank_address":               Address,
}, "account_owner_name", "account_owner_type", "account_country", "iban", "category", "purpose_of_funds",
	"short_business_description", "address", "bank_address")

// Chains are the chains withdrawals and offramps send on.
var Chains = o.Enum("APTOS", "BASE", "CELO", "ETHEREUM", "POLYGON", "SOLANA", "TRON")

// ParseNGN reads a positive NGN amount given as a JSON number or a decimal string, exactly
// (no floats; at most 2 decimal places). The second result is the field's error message, ""
// when the amount is good.
func ParseNGN(raw json.RawMessage) (money.Amount, string) {
	s := strings.TrimSpace(string(raw))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return money.Amount{}, "must be a number or a decimal string"
		}
	}
	a, err := money.ParsePositive(money.NGN, s)
	if err != nil {
		return money.Amount{}, err.Error()
	}
	return a, ""
}

// CustomerJSON is a deposit's customer (detail view).
type CustomerJSON struct {
	ID    string  `json:"id"`
	Email *string `json:"email,omitempty"`
	Name  *string `json:"name,omitempty"`
}

// AccountJSON is the receiving account.
type AccountJSON struct {
	AccountNumber string `json:"accountNumber"`
	BankName      string `json:"bankName"`
}

// SettlementJSON is the detail view's settlement.
type SettlementJSON struct {
	Mode               string  `json:"mode"`
	Asset              string  `json:"asset"`
	Amount             *string `json:"amount"` // null until converted
	Rate               *string `json:"rate"`   // NGN per unit applied
	Chain              *string `json:"chain"`
	DestinationAddress *string `json:"destination_address"`
	TxHash             *string `json:"tx_hash"`
}

// DepositJSON is the spec's Deposit object.
type DepositJSON struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Amount           string          `json:"amount"`
	Currency         string          `json:"currency"`
	Status           string          `json:"status"`
	OnrampID         *string         `json:"onramp_id"`
	OfframpID        *string         `json:"offramp_id,omitempty"`
	Customer         *CustomerJSON   `json:"customer"`
	VirtualAccount   *AccountJSON    `json:"virtual_account"`
	Settlement       *SettlementJSON `json:"settlement,omitempty"` // detail view only
	SettledAmount    *string         `json:"settled_amount"`
	Asset            string          `json:"asset"`
	PaymentReference string          `json:"payment_reference"`
	FailureReason    *string         `json:"failure_reason"`
	CreatedAt        string          `json:"created_at"`
	UpdatedAt        string          `json:"updated_at"`
	SettledAt        *string         `json:"settled_at"`
}

// DepositOut renders a deposit; detail adds the settlement (and the customer found by the caller).
func DepositOut(d deposits.Deposit, detail bool, c *onramps.Customer) DepositJSON {
	out := DepositJSON{ID: d.ID.String(), Type: d.Type, Amount: d.Amount.String(), Currency: string(d.Amount.Asset),
		Status: d.Status, Asset: string(d.Settlement.Asset), PaymentReference: d.PaymentReference,
		FailureReason: api.StrPtr(d.FailureReason), CreatedAt: api.Time(d.CreatedAt), UpdatedAt: api.Time(d.UpdatedAt)}
	if d.OnrampID != nil {
		out.OnrampID = api.StrPtr(d.OnrampID.String())
	}
	if d.OfframpID != nil {
		out.OfframpID = api.StrPtr(d.OfframpID.String())
	}
	if d.CustomerID != nil {
		out.Customer = &CustomerJSON{ID: d.CustomerID.String()}
		if c != nil {
			name := c.Name()
			out.Customer.Email, out.Customer.Name = &c.Email, &name
		}
	}
	if d.AccountNumber != "" {
		out.VirtualAccount = &AccountJSON{AccountNumber: d.AccountNumber, BankName: d.BankName}
	}
	if d.SettledAmount != nil {
		out.SettledAmount = api.StrPtr(d.SettledAmount.String())
	}
	if d.SettledAt != nil {
		out.SettledAt = api.StrPtr(api.Time(*d.SettledAt))
	}
	if detail {
		st := &SettlementJSON{Mode: d.Settlement.Mode, Asset: string(d.Settlement.Asset), Amount: out.SettledAmount,
			Chain: api.StrPtr(d.Settlement.Chain), DestinationAddress: api.StrPtr(d.Settlement.DestinationAddress), TxHash: api.StrPtr(d.TxHash)}
		if d.Price > 0 {
			st.Rate = api.StrPtr(money.Format(money.NGN, d.Price))
		}
		out.Settlement = st
	}
	return out
}

// DepositSchema documents DepositJSON.
func DepositSchema(detail bool) o.Schema {
	props := map[string]o.Schema{
		"id":         o.UUID(""),
		"type":       o.Enum(deposits.TypeNGN, deposits.TypeCrypto),
		"amount":     o.Decimal("amount received"),
		"currency":   o.Str("e.g. NGN"),
		"status":     o.Enum(deposits.Statuses...),
		"onramp_id":  o.Nullable(o.UUID("receiving onramp")),
		"offramp_id": o.UUID("crypto deposits only"),
		"customer": o.Nullable(o.Obj(map[string]o.Schema{
			"id": o.UUID(""), "email": o.Str("detail view"), "name": o.Str("detail view"),
		}, "id")),
		"virtual_account": o.Nullable(o.Obj(map[string]o.Schema{
			"accountNumber": o.Str(""), "bankName": o.Str(""),
		})),
		"settled_amount":    o.Nullable(o.Decimal("in asset, once converted")),
		"asset":             o.Enum("USDC", "USDT"),
		"payment_reference": o.Str(""),
		"failure_reason":    o.Nullable(o.Str("FAILED only: CODE: sentence")),
		"created_at":        o.Time(""),
		"updated_at":        o.Time("the last status change"),
		"settled_at":        o.Nullable(o.Time("")),
	}
	if detail {
		props["settlement"] = o.Obj(map[string]o.Schema{
			"mode":                o.Enum(onramps.ModeOnchain, onramps.ModeInternal, "NGN_PAYOUT"), // NGN_PAYOUT: a crypto deposit to an offramp
			"asset":               o.Enum("USDC", "USDT"),
			"amount":              o.Nullable(o.Decimal("")),
			"rate":                o.Nullable(o.Decimal("NGN per unit of asset applied")),
			"chain":               o.Nullable(o.Str("")),
			"destination_address": o.Nullable(o.Str("")),
			"tx_hash":             o.Nullable(o.Str("")),
		}, "mode", "asset")
	}
	name := "Deposit"
	if detail {
		name = "DepositDetail"
	}
	return o.Named(name, o.Obj(props, "id", "type", "amount", "currency", "status", "created_at"))
}
