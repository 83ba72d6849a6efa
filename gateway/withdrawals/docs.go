package withdrawals

import (
	"svc/gateway/api/shapes"
	o "svc/gateway/openapi"
)

var withdrawalSchema = o.Named("Withdrawal", o.Obj(map[string]o.Schema{
	"id":                  o.UUID(""),
	"amount_usd":          o.Decimal("USDT, 6 decimal places"),
	"token":               o.Enum("USDT"),
	"chain":               shapes.Chains,
	"destination_address": o.Str(""),
	"status":              o.Enum("PENDING", "SUBMITTED", "SETTLED", "FAILED"),
	"tx_hash":             o.Nullable(o.Str("set once submitted to the chain")),
	"failure_reason":      o.Nullable(o.Str("FAILED only")),
	"created_at":          o.Time(""),
	"updated_at":          o.Time(""),
	"settled_at":          o.Nullable(o.Time("SETTLED only")),
	"metadata":            o.Metadata(),
}, "id", "amount_usd", "token", "chain", "destination_address", "status", "metadata", "created_at"))

// Docs documents the withdrawal routes.
func (rs *Routes) Docs() []o.Op {
	return []o.Op{
		{Method: "POST", Path: "/v1/payments/withdrawals", Tag: "withdrawals", Summary: "Withdraw USDT to an external wallet",
			Description: "Source of funds: the merchant USDT balance. The amount moves from available to pending at once " +
				"(422 INSUFFICIENT_BALANCE when available does not cover it, nothing changed), then the withdrawal goes " +
				"PENDING -> SUBMITTED (tx_hash) -> SETTLED (withdrawal.completed), or FAILED with the funds back to available. " +
				"destination_address must fit the chain: 0x + 40 hex digits on EVM chains, base58 on SOLANA and TRON, 0x + 64 hex " +
				"digits on APTOS. Live without a configured custodian: 503 PROVIDER_UNAVAILABLE, nothing debited." + o.IdempotencyNote,
			Body: o.Obj(map[string]o.Schema{
				"amount_usd":          o.Decimal("required, > 0, at most 6 decimal places"),
				"token":               o.Enum("USDT"),
				"chain":               shapes.Chains,
				"destination_address": o.Str("required, valid for the chain"),
				"metadata":            o.Metadata(),
			}, "amount_usd", "token", "chain", "destination_address"),
			Responses: map[int]o.Response{201: {Description: "the withdrawal (PENDING)", Data: withdrawalSchema}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "INSUFFICIENT_BALANCE", "PROVIDER_UNAVAILABLE", "NOT_SUPPORTED",
				"IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"}},
		{Method: "GET", Path: "/v1/payments/withdrawals", Tag: "withdrawals", Summary: "List withdrawals",
			Query: append([]o.Param{{Name: "status", Description: "PROCESSING is PENDING or SUBMITTED",
				Schema: o.Enum("PENDING", "SUBMITTED", "PROCESSING", "SETTLED", "FAILED")}, o.MetadataFilter()}, o.PagingParams("100")...),
			Responses: map[int]o.Response{200: {Description: "a page of withdrawals, newest first", Data: o.PageOf(withdrawalSchema)}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/payments/withdrawals/{id}", Tag: "withdrawals", Summary: "Get a withdrawal",
			Responses: map[int]o.Response{200: {Description: "the withdrawal", Data: withdrawalSchema}}, Errors: []string{"NOT_FOUND"}},
	}
}
