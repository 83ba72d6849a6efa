package events

// Data shapes of the events, one struct per family. Amounts are decimal strings (no
// exponent); times are UTC ISO 8601 with milliseconds. A domain may add fields, never rename
// or remove one: receivers parse these. docs/events.md lists them for merchants.

// Deposit is the data of every deposit.* event (the spec's list of fields).
type Deposit struct {
	ID               string  `json:"id"`
	OnrampID         string  `json:"onramp_id"`
	Amount           string  `json:"amount"`
	Currency         string  `json:"currency"`
	Status           string  `json:"status"`
	SettledAmount    *string `json:"settled_amount"` // null until converted
	Asset            string  `json:"asset"`          // USDC or USDT
	Chain            *string `json:"chain"`          // null for INTERNAL_BALANCE settlement
	TxHash           *string `json:"tx_hash"`        // null until sent on-chain
	PaymentReference string  `json:"payment_reference"`
}

// Withdrawal is the data of withdrawal.completed.
type Withdrawal struct {
	ID                 string `json:"id"`
	AmountUSD          string `json:"amount_usd"`
	Token              string `json:"token"`
	Chain              string `json:"chain"`
	DestinationAddress string `json:"destination_address"`
	Status             string `json:"status"`
	TxHash             string `json:"tx_hash"`
	SettledAt          string `json:"settled_at"`
	// Metadata is the withdrawal's metadata (given at creation; issue 30).
	Metadata map[string]string `json:"metadata"`
}

// Onramp is the data of onramp.completed.
type Onramp struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"` // TEMPORARY or PERMANENT
	Status        string  `json:"status"`
	CustomerID    *string `json:"customer_id"`
	AccountNumber string  `json:"account_number"`
	BankName      string  `json:"bank_name"`
	Amount        *string `json:"amount"` // TEMPORARY only
	Currency      string  `json:"currency"`
	// Metadata is the onramp's metadata (given at creation; issue 30).
	Metadata map[string]string `json:"metadata"`
}

// Offramp is the data of offramp.completed.
type Offramp struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	Asset          string `json:"asset"`
	Chain          string `json:"chain"`
	AmountCrypto   string `json:"amount_crypto"`
	AmountNGN      string `json:"amount_ngn"`
	SettlementMode string `json:"settlement_mode"` // INTERNAL_BALANCE or NGN_PAYOUT
	TxHash         string `json:"tx_hash"`
	// Metadata is the offramp's metadata (given at creation; issue 30).
	Metadata map[string]string `json:"metadata"`
}

// Transfer is the data of transfer.completed.
type Transfer struct {
	ID          string `json:"id"`
	Type        string `json:"type"` // e.g. NGN, US_ACH, US_WIRE, SWIFT
	Amount      string `json:"amount"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
	RecipientID string `json:"recipient_id"`
	Reference   string `json:"reference"`
	// Metadata is the transfer's metadata (given at creation; issue 30).
	Metadata map[string]string `json:"metadata"`
}

// Payout is the data of payout.completed (an NGN payout to a bank account).
type Payout struct {
	ID            string `json:"id"`
	SourceType    string `json:"source_type"` // offramp or transfer
	SourceID      string `json:"source_id"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	Status        string `json:"status"`
	BankCode      string `json:"bank_code"`
	AccountNumber string `json:"account_number"`
	Reference     string `json:"reference"`
}

// Customer is the data of customer.created and the customer.tier* events.
type Customer struct {
	ID        string  `json:"id"`
	Email     string  `json:"email"`
	FirstName string  `json:"first_name"`
	LastName  string  `json:"last_name"`
	KYCTier   string  `json:"kyc_tier"` // TIER_0, TIER_1, TIER_2
	Reason    *string `json:"reason"`   // tier2_rejected only
	// Metadata is the customer's metadata as it is when the event happens (issue 30).
	Metadata map[string]string `json:"metadata"`
}

// CustomerBalance is the data of customer.balance.credited and customer.balance.refunded.
type CustomerBalance struct {
	CustomerID string  `json:"customer_id"`
	Asset      string  `json:"asset"`
	Amount     string  `json:"amount"`
	Balance    string  `json:"balance"` // after the movement
	DepositID  *string `json:"deposit_id"`
	Reason     *string `json:"reason"`
}

// MerchantBalance is the data of merchant.balance.credited (extension, issue 19): crypto
// confirmed at one of the merchant's funding addresses, credited to its payments balance.
type MerchantBalance struct {
	Asset   string `json:"asset"`   // USDT or USDC
	Amount  string `json:"amount"`  // credited
	Balance string `json:"balance"` // available after the credit
	Chain   string `json:"chain"`
	Address string `json:"address"` // the funding address
	TxHash  string `json:"tx_hash"`
}

// CheckoutPayment is the data of checkout.payment.completed and checkout.payment.failed.
type CheckoutPayment struct {
	ID             string  `json:"id"` // the payment (deposit) id
	CheckoutLinkID string  `json:"checkout_link_id"`
	InvoiceID      *string `json:"invoice_id"`
	Amount         string  `json:"amount"`
	Currency       string  `json:"currency"`
	CustomerEmail  *string `json:"customer_email"`
	// checkout.payment.failed only: why the link refused the payment; the money is in the
	// merchant's balance (the deposit settled) for the merchant to refund.
	FailureReason *string `json:"failure_reason,omitempty"`
	// Metadata is the checkout link's metadata when the payment ends (issue 30).
	Metadata map[string]string `json:"metadata"`
}

// VirtualAccount is the data of virtual_account.created.
type VirtualAccount struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"` // TEMPORARY or PERMANENT
	CustomerID    *string `json:"customer_id"`
	AccountNumber string  `json:"account_number"`
	AccountName   string  `json:"account_name"`
	BankName      string  `json:"bank_name"`
	ExpiresAt     *string `json:"expires_at"`
}

// Test is the data of test.webhook.
type Test struct {
	Message string `json:"message"`
}
