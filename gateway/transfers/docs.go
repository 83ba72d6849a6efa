package transfers

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var destination = o.Obj(map[string]o.Schema{
	"type":               o.Enum("BANK_ACCOUNT", "US_BANK_ACCOUNT", "SWIFT_BANK_ACCOUNT"),
	"bank_account":       shapes.BankAccount,
	"us_bank_account":    shapes.USBankAccount,
	"swift_bank_account": shapes.SWIFTBankAccount,
}, "type")

var transferSchema = o.Named("Transfer", o.Obj(map[string]o.Schema{
	"id":           o.UUID(""),
	"currency":     o.Enum("NGN", "USD"),
	"amount":       o.Decimal("2 decimal places"),
	"reference":    o.Str("the merchant's reference, unique per merchant and environment"),
	"status":       o.Enum("PROCESSING", "SETTLED", "FAILED"),
	"rail":         o.Enum("NGN", "US_ACH", "US_WIRE", "SWIFT"),
	"recipient_id": o.Nullable(o.UUID("")),
	"destination":  destination,
	"on_behalf_of": o.Nullable(o.Obj(map[string]o.Schema{"customer_id": o.UUID("")}, "customer_id")),
	"quote": o.Obj(map[string]o.Schema{
		"source_currency": o.Enum("USDT"),
		"source_amount":   o.Decimal("USDT debited from the merchant balance (6 places, rounded up)"),
		"rate":            o.Decimal("units of currency per USDT: 1.00 for USD, the sell price for NGN"),
		"side":            o.Enum("sell"),
	}),
	"failure_reason": o.Nullable(o.Str("FAILED only")),
	"created_at":     o.Time(""),
	"updated_at":     o.Time(""),
	"settled_at":     o.Nullable(o.Time("SETTLED only")),
	"metadata":       o.Metadata(),
}, "id", "currency", "amount", "reference", "status", "metadata", "created_at"))

// Docs documents the transfer routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/payments/transfers", Tag: "transfers", Summary: "Send NGN or USD to a bank account",
			Description: "Exactly one of recipient_id (a saved bank recipient) and destination. NGN goes to BANK_ACCOUNT, USD to " +
				"US_BANK_ACCOUNT (ach or wire) or SWIFT_BANK_ACCOUNT. Source of funds: the merchant USDT balance, USD at 1:1, NGN at " +
				"the current sell price of USDT, quoted in the response (quote); held at once (422 INSUFFICIENT_BALANCE otherwise, " +
				"nothing changed). PROCESSING -> SETTLED (transfer.completed; payout.completed for NGN) or FAILED with the funds " +
				"returned. reference is unique per merchant (409 REFERENCE_IN_USE). Live without a configured bank partner: 503 " +
				"PROVIDER_UNAVAILABLE, nothing debited. The key may also come in `Idempotency-Key`." + o.IdempotencyNote,
			Body: o.Obj(map[string]o.Schema{
				"currency":     o.Enum("NGN", "USD"),
				"amount":       o.Decimal("required, > 0, at most 2 decimal places"),
				"reference":    o.Str("required, at most 128 characters"),
				"recipient_id": o.UUID("one of recipient_id and destination"),
				"destination":  destination,
				"on_behalf_of": o.Obj(map[string]o.Schema{"customer_id": o.UUID("required: one of the merchant's customers")}, "customer_id"),
				"metadata":     o.Metadata(),
			}, "currency", "amount", "reference"),
			Responses: map[int]o.Response{201: {Description: "the transfer (PROCESSING)", Data: transferSchema}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "REFERENCE_IN_USE", "INSUFFICIENT_BALANCE",
				"PROVIDER_UNAVAILABLE", "NOT_SUPPORTED", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"}},
		{Method: "GET", Path: "/v1/payments/transfers", Tag: "transfers", Summary: "List transfers",
			Query: append([]o.Param{{Name: "status", Schema: o.Enum("PROCESSING", "SETTLED", "FAILED")},
				{Name: "currency", Schema: o.Enum("NGN", "USD")}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses: map[int]o.Response{200: {Description: "a page of transfers, newest first", Data: o.PageOf(transferSchema)}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/payments/transfers/{id}", Tag: "transfers", Summary: "Get a transfer",
			Responses: map[int]o.Response{200: {Description: "the transfer", Data: transferSchema}}, Errors: []string{"NOT_FOUND"}},
	}
}
