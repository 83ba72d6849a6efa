// Package withdrawals sends USDT from the merchant's payments balance to an external wallet
// (spec "Withdrawal", DESIGN.md sections 4 and 6):
//
//	PENDING --custody accepts (tx_hash)--> SUBMITTED --confirmed on-chain--> SETTLED (withdrawal.completed)
//	PENDING | SUBMITTED --chain refuses--> FAILED (funds returned)
//
// Create moves the amount from the merchant's available USDT to its pending USDT in the same
// transaction as the withdrawal row (ledger reference "withdrawal:<id>:hold"), so a balance
// that does not cover it answers INSUFFICIENT_BALANCE with nothing written, and enqueues the
// durable job (river, queue money_out) that drives the rest. Each step is one transaction:
// the status change, its ledger posting ("withdrawal:<id>:settle" pending -> system external,
// or "withdrawal:<id>:release" pending -> available), its event and the next job. The
// custodian is called with the reference "withdrawal:<id>" so a retried job never sends twice.
//
// The list filter also accepts PROCESSING (= PENDING or SUBMITTED).
package withdrawals

import (
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/providers"
)

// Statuses.
const (
	Pending   = "PENDING"
	Submitted = "SUBMITTED"
	Settled   = "SETTLED"
	Failed    = "FAILED"
	// Processing is the listing filter's alias of PENDING or SUBMITTED.
	Processing = "PROCESSING"
)

// Statuses lists every stored status.
var Statuses = []string{Pending, Submitted, Settled, Failed}

// FilterStatuses is what the list's status filter accepts.
var FilterStatuses = []string{Pending, Submitted, Settled, Failed, Processing}

// ExpandStatus maps a status filter to stored statuses; nil for an unknown value.
func ExpandStatus(s string) []string {
	if s == Processing {
		return []string{Pending, Submitted}
	}
	for _, x := range Statuses {
		if x == s {
			return []string{s}
		}
	}
	return nil
}

// Machine is the withdrawal's state machine; every status change goes through it (move).
var Machine = payments.Machine{Name: "withdrawal", Moves: map[string][]string{
	Pending:   {Submitted, Failed},
	Submitted: {Settled, Failed},
}}

// CanMove reports whether the state machine allows from -> to.
func CanMove(from, to string) bool { return Machine.Can(from, to) }

// Token is the only token withdrawals send.
const Token = "USDT"

// Withdrawal is one send of USDT to an external address.
type Withdrawal struct {
	ID                 uuid.UUID
	Tenant             payments.Tenant
	Amount             money.Amount // USDT
	Token              string
	Chain              providers.Chain
	DestinationAddress string
	Status             string
	TxHash             string
	FailureReason      string
	Metadata           metadata.Metadata // the merchant's own keys, given at creation (issue 30)
	CreatedAt          time.Time
	UpdatedAt          time.Time
	SubmittedAt        *time.Time
	SettledAt          *time.Time
}

// Reporter collects field errors; *api.Validator is one.
type Reporter interface {
	Add(field, message string)
}

// CreateInput is POST /payments/withdrawals as received.
type CreateInput struct {
	AmountUSD          string
	Token              string
	Chain              string
	DestinationAddress string
}

// Validate reports every invalid field to r and returns the parsed amount (USDT, 6 places).
func (in CreateInput) Validate(r Reporter) money.Amount {
	var amt money.Amount
	if in.AmountUSD == "" {
		r.Add("amount_usd", "is required")
	} else if a, err := money.ParsePositive(money.USDT, in.AmountUSD); err != nil {
		r.Add("amount_usd", "must be a decimal string above zero with at most 6 decimal places")
	} else {
		amt = a
	}
	switch in.Token {
	case "":
		r.Add("token", "is required")
	case Token:
	default:
		r.Add("token", "must be USDT")
	}
	c := providers.Chain(in.Chain)
	chainOK := false
	switch {
	case in.Chain == "":
		r.Add("chain", "is required")
	case !c.In(providers.WalletChains):
		r.Add("chain", "must be one of APTOS, BASE, CELO, ETHEREUM, POLYGON, SOLANA, TRON")
	default:
		chainOK = true
	}
	switch {
	case in.DestinationAddress == "":
		r.Add("destination_address", "is required")
	case chainOK:
		if err := providers.ValidateAddress(c, in.DestinationAddress); err != nil {
			r.Add("destination_address", err.Error())
		}
	}
	return amt
}

// Filter selects a page of withdrawals, newest first.
type Filter struct {
	Statuses []string        // stored statuses (ExpandStatus); nil for all
	Metadata metadata.Filter // nil for any
	Page     int             // 1-indexed
	Limit    int
}
