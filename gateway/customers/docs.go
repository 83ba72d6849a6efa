package customers

import (
	o "svc/gateway/openapi"
	"svc/payments/providers"
)

var customerSchema = o.Named("Customer", o.Obj(map[string]o.Schema{
	"id":         o.UUID("customer id (UUIDv7)"),
	"email":      o.Str("unique per merchant and environment; stored lower-cased"),
	"first_name": o.Str("1 to 100 characters"),
	"last_name":  o.Str("1 to 100 characters"),
	"kyc_tier":   o.Enum("TIER_0", "TIER_1", "TIER_2"),
	"metadata":   o.Metadata(),
	"created_at": o.Time(""),
	"updated_at": o.Time(""),
}, "id", "email", "first_name", "last_name", "kyc_tier", "metadata", "created_at", "updated_at"))

var verificationSchema = o.Named("KYCVerification", o.Obj(map[string]o.Schema{
	"id":               o.Nullable(o.UUID("verification id; null when the customer was already verified")),
	"customer_id":      o.UUID(""),
	"tier":             o.Enum("TIER_1", "TIER_2"),
	"status":           o.Enum("VERIFIED", "REJECTED", "PENDING"),
	"reason":           o.Nullable(o.Str("why it was rejected")),
	"kyc_tier":         o.Enum("TIER_0", "TIER_1", "TIER_2"),
	"customer":         customerSchema,
	"verification_url": o.Str("hosted flows only: where to send the customer"),
	"expires_at":       o.Time("hosted flows only"),
	"created_at":       o.Time(""),
	"bank_account":     maskedAccountSchema,
}))

var maskedAccountSchema = o.Obj(map[string]o.Schema{
	"bank_code":            o.Str("the bank the hosted flow was started with"),
	"account_number_last4": o.Str("the account number's last 4 digits (the number is not stored)"),
}, "bank_code", "account_number_last4")

var walletSchema = o.Named("CryptoWallet", o.Obj(map[string]o.Schema{
	"id": o.UUID(""), "customer_id": o.UUID(""), "chain": o.Enum(providers.ChainNames(providers.WalletChains)...),
	"asset": o.Enum("USDC", "USDT"), "address": o.Str(""), "label": o.Nullable(o.Str("")), "created_at": o.Time(""),
}))

var pageMeta = o.Obj(map[string]o.Schema{"total": o.Int(""), "page": o.Int(""), "limit": o.Int(""), "total_pages": o.Int("")})

var paging = []o.Param{{Name: "page", Schema: o.Int("1-indexed, default 1")}, {Name: "limit", Schema: o.Int("default 20, at most 100")}}

func str(d string) o.Schema { return o.Str(d) }

// Docs documents the customer routes.
func (h *Routes) Docs() []o.Op {
	idem := " Accepts X-Idempotency-Key."
	nf := []string{"NOT_FOUND"}
	return []o.Op{
		{Method: "POST", Path: "/v1/customers", Tag: "customers", Summary: "Create a customer",
			Description: "Starts at TIER_0; records customer.created." + idem,
			Body: o.Obj(map[string]o.Schema{"email": str("valid address"), "first_name": str("1 to 100 characters"), "last_name": str("1 to 100 characters"),
				"metadata": o.Metadata()}, "email", "first_name", "last_name"),
			Responses: map[int]o.Response{201: {Description: "the customer", Data: customerSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "CUSTOMER_EXISTS"}},
		{Method: "GET", Path: "/v1/customers", Tag: "customers", Summary: "List customers (newest first, cursor paging)",
			Query: []o.Param{{Name: "limit", Schema: o.Int("default 20, at most 200")}, {Name: "cursor", Description: "next_cursor of the previous page"},
				{Name: "email", Description: "exact match"}, {Name: "kyc_tier", Schema: o.Enum("TIER_0", "UNVERIFIED", "TIER_1", "TIER_2")}, o.MetadataFilter()},
			Responses: map[int]o.Response{200: {Description: "a page", Data: o.Obj(map[string]o.Schema{"items": o.Arr(customerSchema), "next_cursor": o.Nullable(o.Str("null on the last page"))})}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/customers/{id}", Tag: "customers", Summary: "Get a customer",
			Responses: map[int]o.Response{200: {Description: "the customer", Data: customerSchema}}, Errors: nf},
		{Method: "PATCH", Path: "/v1/customers/{id}", Tag: "customers", Summary: "Update a customer's names and metadata",
			Body: o.Obj(map[string]o.Schema{"first_name": str("1 to 100 characters"), "last_name": str("1 to 100 characters"),
				"metadata": o.MetadataPatch()}),
			Responses: map[int]o.Response{200: {Description: "the customer", Data: customerSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND"}},
		{Method: "POST", Path: "/v1/customers/{id}/tier1-verification", Tag: "customers", Summary: "Submit tier 1 KYC (BVN and selfie)",
			Description: "Passed: TIER_1 and customer.tier1_verified. Failed: status REJECTED with a reason, tier unchanged. Sandbox: any BVN passes except one starting 000." + idem,
			Body:        o.Obj(map[string]o.Schema{"bvn": str("exactly 11 digits"), "image_url": str("publicly reachable http(s) URL of a selfie")}, "bvn", "image_url"),
			Responses:   map[int]o.Response{200: {Description: "the verification", Data: verificationSchema}},
			Errors:      []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "PROVIDER_UNAVAILABLE"}},
		{Method: "POST", Path: "/v1/customers/{id}/tier2-verification", Tag: "customers", Summary: "Submit tier 2 KYC (identity profile)",
			Description: "Requires TIER_1. Passed: TIER_2 and customer.tier2_verified; rejected: customer.tier2_rejected with the reason. Sandbox: rejected when most_recent_occupation is missing or acting_as_intermediary is true." + idem,
			Body: o.Obj(map[string]o.Schema{
				"residential_address": o.Obj(map[string]o.Schema{"street_line_1": str(""), "street_line_2": str("optional"), "city": str(""), "subdivision": str(""), "postal_code": str(""), "country": str("alpha-3")},
					"street_line_1", "city", "subdivision", "postal_code", "country"),
				"nationality": str("alpha-3"), "birth_date": str("YYYY-MM-DD"),
				"identifying_information": o.Arr(o.Obj(map[string]o.Schema{"type": o.Enum(IDTypes...), "issuing_country": str("alpha-3"), "number": str(""),
					"expiration": str("YYYY-MM-DD"), "image_front": str("URL"), "image_back": str("URL")}, "type", "issuing_country", "image_front")),
				"source_of_funds": o.Enum(SourcesOfFunds...), "account_purpose": o.Enum(AccountPurposes...),
				"expected_monthly_payments_usd": o.Enum(MonthlyPayments...), "acting_as_intermediary": o.Bool("must be false for standard use"),
				"employment_status": o.Enum(Employment...), "most_recent_occupation": o.Enum(Occupations...),
				"documents": o.Arr(o.Obj(map[string]o.Schema{"file": str("URL"), "purposes": o.Arr(o.Enum(DocPurposes...))}, "file", "purposes")),
			}, "residential_address", "nationality", "birth_date", "identifying_information", "source_of_funds", "account_purpose",
				"expected_monthly_payments_usd", "acting_as_intermediary", "employment_status", "most_recent_occupation"),
			Responses: map[int]o.Response{200: {Description: "the verification", Data: verificationSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "KYC_TIER_REQUIRED", "PROVIDER_UNAVAILABLE"}},
		{Method: "POST", Path: "/v1/customers/{id}/kyc/initiate", Tag: "customers", Summary: "Start a hosted tier 1 verification",
			Description: "Answers PENDING with the URL to send the customer to. In live with Paystack as the KYC provider, tier 1 is " +
				"Paystack customer identification (the BVN checked against a bank account in the customer's name): bvn and " +
				"bank_account are then required (400 naming each missing field), there is no verification_url, and the outcome " +
				"arrives as Paystack's notification (see GET .../verifications/{verification_id} and the customer.tier1_verified " +
				"webhook). The sandbox needs neither. The BVN and account number go to the provider only; the verification keeps " +
				"their last 4 digits." + idem,
			Body: o.Obj(map[string]o.Schema{"bvn": str("11 digits; optional, required in live with Paystack"), "redirect_url": str("optional http(s) URL"),
				"middle_name": str("optional, 1 to 100 characters: passed to the provider (helps match the BVN's name)"),
				"bank_account": o.Obj(map[string]o.Schema{"bank_code": str("3 to 6 digits, e.g. 058"), "account_number": str("10 digits (NUBAN), in the customer's name")},
					"bank_code", "account_number")}),
			Responses: map[int]o.Response{201: {Description: "the pending verification", Data: verificationSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "PROVIDER_UNAVAILABLE"}},
		{Method: "POST", Path: "/v1/customers/{id}/tier2-kyc/initiate", Tag: "customers", Summary: "Start a hosted tier 2 verification",
			Description: "Requires TIER_1. Answers PENDING with the URL to send the customer to." + idem,
			Body:        o.Obj(map[string]o.Schema{"redirect_url": str("optional http(s) URL")}),
			Responses:   map[int]o.Response{201: {Description: "the pending verification", Data: verificationSchema}},
			Errors:      []string{"VALIDATION_ERROR", "NOT_FOUND", "KYC_TIER_REQUIRED", "PROVIDER_UNAVAILABLE"}},
		{Method: "POST", Path: "/v1/customers/{id}/crypto-wallet", Tag: "customers", Summary: "Register a crypto wallet",
			Description: "The address must have the chain's format: 0x + 40 hex (EVM chains), base58 (SOLANA, TRON), 0x + 64 hex (APTOS)." + idem,
			Body: o.Obj(map[string]o.Schema{"chain": o.Enum(providers.ChainNames(providers.WalletChains)...), "asset": o.Enum("USDC", "USDT"),
				"address": str(""), "label": str("optional, up to 100 characters")}, "chain", "asset", "address"),
			Responses: map[int]o.Response{201: {Description: "the wallet", Data: walletSchema}},
			Errors:    []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "CONFLICT"}},
		{Method: "GET", Path: "/v1/customers/{id}/crypto-wallets", Tag: "customers", Summary: "List a customer's wallets", Query: paging,
			Responses: map[int]o.Response{200: {Description: "data is the array; paging in the top-level meta", Data: o.Arr(walletSchema)}},
			Errors:    []string{"VALIDATION_ERROR", "NOT_FOUND"}},
		{Method: "POST", Path: "/v1/customers/{id}/crypto-funding", Tag: "customers", Summary: "Create a crypto funding request",
			Description: "Returns the customer's deposit address for the chain and asset (stable), valid 24 hours." + idem,
			Body: o.Obj(map[string]o.Schema{"chain": o.Enum(providers.ChainNames(providers.WalletChains)...), "asset": o.Enum("USDC", "USDT"),
				"amount": o.Decimal("optional expected amount (6 places)")}, "chain", "asset"),
			Responses: map[int]o.Response{201: {Description: "the funding request", Data: o.Obj(map[string]o.Schema{
				"id": o.UUID(""), "customer_id": o.UUID(""), "chain": str(""), "asset": str(""), "amount": o.Nullable(o.Decimal("")),
				"deposit_address": str(""), "status": o.Enum("PENDING", "COMPLETED", "EXPIRED"), "expires_at": o.Time(""), "created_at": o.Time("")})}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "PROVIDER_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/customers/{id}/balance", Tag: "customers", Summary: "A customer's balance",
			Description: "ngn: available NGN; usd: available USD, USDT and USDC at par (2 places, rounded down); accounts: every ledger account of the customer.",
			Responses: map[int]o.Response{200: {Description: "the balance", Data: o.Obj(map[string]o.Schema{
				"ngn": o.Decimal(""), "usd": o.Decimal(""), "updated_at": o.Time(""),
				"accounts": o.Arr(o.Obj(map[string]o.Schema{"asset": str(""), "purpose": str("available, pending, ..."), "balance": o.Decimal("")}))})}},
			Errors: nf},
		{Method: "GET", Path: "/v1/customers/{id}/ledger", Tag: "customers", Summary: "A customer's ledger entries (newest first)", Query: paging,
			Responses: map[int]o.Response{200: {Description: "data is the array; paging in the top-level meta", Data: o.Arr(o.Obj(map[string]o.Schema{
				"id": o.UUID(""), "type": o.Enum("CREDIT", "DEBIT"), "amount": o.Decimal("positive"), "currency": str(""), "description": str(""),
				"balance_after": o.Decimal(""), "account": str("the account's purpose"), "reference": str(""), "transaction_id": o.UUID(""), "created_at": o.Time("")}))}},
			Errors: []string{"VALIDATION_ERROR", "NOT_FOUND"}},
	}
}
