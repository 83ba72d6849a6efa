package recipients

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

// CryptoAddress is the crypto recipient object.
var CryptoAddress = o.Obj(map[string]o.Schema{
	"asset":   o.Enum("USDC", "USDT"),
	"chain":   o.Enum("ETHEREUM", "BASE", "POLYGON", "ARBITRUM", "OPTIMISM", "CELO"),
	"address": o.Str("required, 0x + 40 hex digits"),
}, "asset", "chain", "address")

var types = o.Enum("BANK_ACCOUNT", "CRYPTO_ADDRESS", "US_BANK_ACCOUNT", "SWIFT_BANK_ACCOUNT")

var recipientSchema = o.Named("Recipient", o.Obj(map[string]o.Schema{
	"id": o.UUID(""), "type": types, "customer_id": o.Nullable(o.UUID("")),
	"bank_account": shapes.BankAccount, "crypto_address": CryptoAddress, "us_bank_account": shapes.USBankAccount,
	"swift_bank_account": shapes.SWIFTBankAccount, "metadata": o.Metadata(), "created_at": o.Time(""),
}, "id", "type", "metadata", "created_at"))

// Docs documents the recipient routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/recipients", Tag: "recipients", Summary: "Save a payout destination",
			Description: "Exactly the object of the type is given. customer_id (one of the merchant's customers) is required for " +
				"US_BANK_ACCOUNT and SWIFT_BANK_ACCOUNT. A recipient's id is accepted as recipient_id by POST /payments/transfers " +
				"(bank types only)." + o.IdempotencyNote,
			Body: o.Obj(map[string]o.Schema{"type": types, "customer_id": o.UUID("required for US and SWIFT"),
				"bank_account": shapes.BankAccount, "crypto_address": CryptoAddress, "us_bank_account": shapes.USBankAccount,
				"swift_bank_account": shapes.SWIFTBankAccount, "metadata": o.Metadata()}, "type"),
			Responses: map[int]o.Response{201: {Description: "the recipient", Data: recipientSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"}},
		{Method: "GET", Path: "/v1/recipients", Tag: "recipients", Summary: "List recipients (extension)",
			Description: "Our extension of the spec, which shows no recipient reads.",
			Query:       append([]o.Param{{Name: "type", Schema: types}, {Name: "customer_id", Schema: o.UUID("")}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses:   map[int]o.Response{200: {Description: "a page of recipients, newest first", Data: o.PageOf(recipientSchema)}},
			Errors:      []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/recipients/{id}", Tag: "recipients", Summary: "Get a recipient (extension)",
			Responses: map[int]o.Response{200: {Description: "the recipient", Data: recipientSchema}}, Errors: []string{"NOT_FOUND"}},
		{Method: "DELETE", Path: "/v1/recipients/{id}", Tag: "recipients", Summary: "Delete a recipient (extension)",
			Description: "The recipient disappears from reads and cannot be used by new transfers; transfers already made keep their copy of the destination.",
			Responses:   map[int]o.Response{200: {Description: "deleted", Data: o.Obj(map[string]o.Schema{"id": o.UUID(""), "deleted": o.Bool("")})}},
			Errors:      []string{"NOT_FOUND"}},
	}
}
