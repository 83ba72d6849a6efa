package recipients

import (
	o "svc/gateway/openapi"
	gw "svc/gateway/withdrawals"
)

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

// CryptoAddress is the crypto recipient object.
var CryptoAddress = o.Obj(map[string]o.Schema{
	"asset":   o.Enum("USDC", "USDT"),
	"chain":   o.Enum("ETHEREUM", "BASE", "POLYGON", "ARBITRUM", "OPTIMISM", "CELO"),
	"address": o.Str("required, 0x + 40 hex digits"),
}, "asset", "chain", "address")

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

var types = o.Enum("BANK_ACCOUNT", "CRYPTO_ADDRESS", "US_BANK_ACCOUNT", "SWIFT_BANK_ACCOUNT")

var recipientSchema = o.Named("Recipient", o.Obj(map[string]o.Schema{
	"id": o.UUID(""), "type": types, "customer_id": o.Nullable(o.UUID("")),
	"bank_account": BankAccount, "crypto_address": CryptoAddress, "us_bank_account": USBankAccount,
	"swift_bank_account": SWIFTBankAccount, "created_at": o.Time(""),
}, "id", "type", "created_at"))

// Docs documents the recipient routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/recipients", Tag: "recipients", Summary: "Save a payout destination",
			Description: "Exactly the object of the type is given. customer_id (one of the merchant's customers) is required for " +
				"US_BANK_ACCOUNT and SWIFT_BANK_ACCOUNT. A recipient's id is accepted as recipient_id by POST /payments/transfers " +
				"(bank types only)." + gw.IdempotencyNote,
			Body: o.Obj(map[string]o.Schema{"type": types, "customer_id": o.UUID("required for US and SWIFT"),
				"bank_account": BankAccount, "crypto_address": CryptoAddress, "us_bank_account": USBankAccount,
				"swift_bank_account": SWIFTBankAccount}, "type"),
			Responses: map[int]o.Response{201: {Description: "the recipient", Data: recipientSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"}},
		{Method: "GET", Path: "/v1/recipients", Tag: "recipients", Summary: "List recipients (extension)",
			Description: "Our extension of the spec, which shows no recipient reads.",
			Query:       append([]o.Param{{Name: "type", Schema: types}, {Name: "customer_id", Schema: o.UUID("")}}, gw.PagingParams("100")...),
			Responses:   map[int]o.Response{200: {Description: "a page of recipients, newest first", Data: gw.PageOf(recipientSchema)}},
			Errors:      []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/recipients/{id}", Tag: "recipients", Summary: "Get a recipient (extension)",
			Responses: map[int]o.Response{200: {Description: "the recipient", Data: recipientSchema}}, Errors: []string{"NOT_FOUND"}},
		{Method: "DELETE", Path: "/v1/recipients/{id}", Tag: "recipients", Summary: "Delete a recipient (extension)",
			Description: "The recipient disappears from reads and cannot be used by new transfers; transfers already made keep their copy of the destination.",
			Responses:   map[int]o.Response{200: {Description: "deleted", Data: o.Obj(map[string]o.Schema{"id": o.UUID(""), "deleted": o.Bool("")})}},
			Errors:      []string{"NOT_FOUND"}},
	}
}
