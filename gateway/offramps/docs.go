package offramps

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var bank = o.Obj(map[string]o.Schema{
	"account_name":   o.Str("required"),
	"account_number": o.Str("required, 6 to 32 characters"),
	"bank_code":      o.Str("required, 3 to 16 characters"),
}, "account_name", "account_number", "bank_code")

var offrampSchema = o.Named("Offramp", o.Obj(map[string]o.Schema{
	"id":              o.UUID(""),
	"type":            o.Enum("TEMPORARY", "PERMANENT"),
	"status":          o.Enum("ACTIVE", "INACTIVE", "EXPIRED"),
	"customer_id":     o.UUID(""),
	"chain":           shapes.Chains,
	"asset":           o.Enum("USDC", "USDT"),
	"deposit_address": o.Str("send the asset here on the chain"),
	"settlement": o.Obj(map[string]o.Schema{
		"mode":             o.Enum("INTERNAL_BALANCE", "NGN_PAYOUT"),
		"rate_id":          o.Nullable(o.UUID("NGN_PAYOUT")),
		"rate":             o.Nullable(o.Decimal("NGN per unit of the asset locked at creation (TEMPORARY converts at it; PERMANENT at the market sell price of each deposit)")),
		"destination_bank": o.Nullable(bank),
	}, "mode"),
	"expires_at": o.Nullable(o.Time("TEMPORARY: 25 minutes after creation")),
	"created_at": o.Time(""),
	"updated_at": o.Time(""),
	"metadata":   o.Metadata(),
}, "id", "type", "status", "chain", "asset", "deposit_address", "settlement", "metadata", "created_at"))

// Docs documents the offramp routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/payments/offramps", Tag: "offramps", Summary: "Create an offramp (crypto in, NGN out)",
			Description: "customer: customer_id of an existing customer, or email (looked up, or created with first_name and " +
				"last_name, which default to the address's local part and \"Customer\"); the two are exclusive (400). " +
				"INTERNAL_BALANCE credits the customer's balance in the asset received; NGN_PAYOUT converts to NGN at the sell " +
				"rate and pays destination_bank, and needs a sell rate_id of the asset from GET /payments/rates (unexpired, unused). " +
				"A TEMPORARY offramp takes one deposit and expires after 25 minutes. In the sandbox, POST " +
				"/payments/sandbox/deposits with {offramp_id, amount} simulates crypto arriving." + o.IdempotencyNote,
			Body: o.Obj(map[string]o.Schema{
				"type": o.Enum("TEMPORARY", "PERMANENT"),
				"customer": o.Obj(map[string]o.Schema{"customer_id": o.UUID(""), "email": o.Str(""),
					"first_name": o.Str("1 to 100 characters"), "last_name": o.Str("1 to 100 characters")}),
				"chain": shapes.Chains,
				"asset": o.Enum("USDC", "USDT"),
				"settlement": o.Obj(map[string]o.Schema{
					"mode":             o.Enum("INTERNAL_BALANCE", "NGN_PAYOUT"),
					"rate_id":          o.UUID("required for NGN_PAYOUT"),
					"destination_bank": bank,
				}, "mode"),
				"metadata": o.Metadata(),
			}, "type", "customer", "chain", "asset", "settlement"),
			Responses: map[int]o.Response{201: {Description: "the offramp (ACTIVE)", Data: offrampSchema}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "RATE_EXPIRED", "RATE_ALREADY_USED",
				"PROVIDER_UNAVAILABLE", "NOT_SUPPORTED", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"}},
		{Method: "GET", Path: "/v1/payments/offramps", Tag: "offramps", Summary: "List offramps",
			Query: append([]o.Param{{Name: "type", Schema: o.Enum("TEMPORARY", "PERMANENT")}, {Name: "chain", Schema: shapes.Chains},
				{Name: "asset", Schema: o.Enum("USDC", "USDT")}, {Name: "status", Schema: o.Enum("ACTIVE", "INACTIVE", "EXPIRED")},
				{Name: "settlement_mode", Schema: o.Enum("INTERNAL_BALANCE", "NGN_PAYOUT")}, o.MetadataFilter()}, o.PagingParams("200")...),
			Responses: map[int]o.Response{200: {Description: "a page of offramps, newest first", Data: o.PageOf(offrampSchema)}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/payments/offramps/{id}", Tag: "offramps", Summary: "Get an offramp",
			Responses: map[int]o.Response{200: {Description: "the offramp", Data: offrampSchema}}, Errors: []string{"NOT_FOUND"}},
	}
}
