// Package deposits is the money that arrives in onramps and its lifecycle (spec "Deposit",
// DESIGN.md section 6):
//
//	PENDING_FX --convert--> PENDING_WITHDRAWAL --route--> SETTLED --reverse (issue 11)--> REVERSED
//	PENDING_FX --compliance hold--> FLAGGED --clear--> PENDING_FX | --reject--> FAILED
//	PENDING_FX --conversion fails--> FAILED (the NGN goes back to the sender)
//
// A deposit is created PENDING_FX when the NGN arrives (in the sandbox, by
// POST /payments/sandbox/deposits), with deposit.received. Each later step is a durable job
// (river, queue money_in) enqueued in the transaction of the step before; every step is
// one transaction holding the status change, its ledger postings (payments/ledger, each
// with a reference "deposit:<id>:<step>" so a retried job never moves money twice), its
// events, and the next job:
//
//   - convert (PENDING_FX): a flagged deposit stops at FLAGGED (deposit.flagged). Otherwise
//     the NGN is converted at the onramp's locked price (TEMPORARY) or the market buy price
//     (PERMANENT): incoming NGN -> FX desk, FX desk -> the destination's pending balance in
//     USDT/USDC; deposit.pending_withdrawal. A TEMPORARY onramp paid another amount than
//     its own, or no price, ends FAILED (deposit.failed), the NGN returned to the sender.
//   - route (PENDING_WITHDRAWAL): INTERNAL_BALANCE moves pending -> available of the
//     customer (when the onramp has one; customer.balance.credited) or of the merchant;
//     ONCHAIN sends through the chain custodian and records tx_hash. deposit.settled, and
//     every SettlementHook (a checkout payment completing) in the same transaction.
//     With Config.SettleInConversion (svcd), an INTERNAL_BALANCE deposit's route runs in a
//     savepoint of its conversion's transaction, and its job only when that fails.
//
// With Config.ConvertOnReceipt (svcd), Receive runs the convert step itself (and with
// SettleInConversion the route), in a savepoint of the intake's transaction, with the
// onramp the intake locked: no PENDING_FX job, and the receipt, conversion and settlement
// are one ledger transaction ("deposit:<id>:convert", its receipt and settlement entries
// under their own references "deposit:<id>:received" and "deposit:<id>:settle"). The
// steps' states and events are the same. A deposit flagged for review, a TEMPORARY onramp
// paid another amount, a conversion that would fail, or any error there: the savepoint is
// rolled back and the deposit is received PENDING_FX with its job, as without the option.
//
// Steps that the job workers run at the same time share one transaction, each in a
// savepoint of its own (batch.go): the owners' side of their postings (FX desk ->
// system:settling -> owner pending; owner pending -> available) is then one ledger
// transaction per merchant at the end of the batch ("deposits:batch:<id>"), so a merchant's
// balance rows are locked once per batch, not once per deposit (issue 22).
//
// Ledger accounts (all in the merchant's books): system:incoming holds NGN received but not
// converted (a FLAGGED deposit's NGN stays there), system:fx is the conversion desk,
// system:outgoing holds crypto on its way on-chain, system:settling holds a batch's
// conversions until its owners' posting (zero after every commit), system:external is the
// outside world.
package deposits

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
)

// Types and statuses.
const (
	TypeNGN    = "NGN_DEPOSIT"
	TypeCrypto = "CRYPTO_DEPOSIT"

	PendingFX         = "PENDING_FX"
	PendingWithdrawal = "PENDING_WITHDRAWAL"
	Settled           = "SETTLED"
	Failed            = "FAILED"
	Flagged           = "FLAGGED"
	Reversed          = "REVERSED"
)

// Statuses lists every stored status.
var Statuses = []string{PendingFX, PendingWithdrawal, Settled, Failed, Flagged, Reversed}

// ExpandStatus maps a status filter to stored statuses: PENDING is PENDING_FX or
// PENDING_WITHDRAWAL, COMPLETED is SETTLED (DESIGN.md section 6); nil for an unknown value.
func ExpandStatus(s string) []string {
	switch s {
	case "PENDING":
		return []string{PendingFX, PendingWithdrawal}
	case "COMPLETED":
		return []string{Settled}
	}
	for _, x := range Statuses {
		if x == s {
			return []string{s}
		}
	}
	return nil
}

// Ledger purposes of the system side used by deposits.
const (
	Incoming ledger.Purpose = "incoming" // NGN received, not yet converted
	Outgoing ledger.Purpose = "outgoing" // crypto on its way on-chain
	// Settling holds, inside one batch of deposit steps, what the batch's conversions owe
	// the owners until the batch's one posting moves it to them (stepBatcher): back to zero
	// at every commit.
	Settling ledger.Purpose = "settling"
)

// Deposit is one arrival of money.
type Deposit struct {
	ID               uuid.UUID
	Tenant           payments.Tenant
	Type             string
	Status           string
	OnrampID         *uuid.UUID
	OfframpID        *uuid.UUID
	CustomerID       *uuid.UUID
	Amount           money.Amount // received
	Flag             bool         // held for compliance review at the conversion step
	Settlement       onramps.Settlement
	Price            int64         // kobo per unit of the asset, once converted
	SettledAmount    *money.Amount // once converted
	TxHash           string        // ONCHAIN, once sent
	PaymentReference string
	FailureReason    string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	SettledAt        *time.Time

	// Read with the deposit for the API (not stored on it).
	AccountNumber string
	BankName      string

	// unsaved: its row is not written yet (Receive running its conversion step,
	// Config.ConvertOnReceipt): the step's first write inserts it, in the state it leaves.
	unsaved bool
}

// SimulateInput is POST /payments/sandbox/deposits.
type SimulateInput struct {
	OnrampID   uuid.UUID
	ShouldFlag bool
	// Amount overrides what arrives (NGN): default the TEMPORARY onramp's amount, or
	// SandboxDefaultAmount for a PERMANENT one. A TEMPORARY onramp paid another amount
	// fails at conversion (and stays ACTIVE for the right amount).
	Amount *money.Amount
}

// SandboxDefaultAmount is what a simulated deposit into a PERMANENT onramp brings when no
// amount is given: 10,000.00 NGN.
var SandboxDefaultAmount = money.New(money.NGN, 1_000_000)

// Filter selects deposits of a list.
type Filter struct {
	Type      string   // NGN_DEPOSIT, CRYPTO_DEPOSIT or ""
	Statuses  []string // stored statuses (see ExpandStatus); nil for all
	OnrampID  *uuid.UUID
	OfframpID *uuid.UUID
	From, To  *time.Time // created_at >= From, < To... inclusive bounds: From <= created_at <= To
	Page      int
	PerPage   int
}

// SettlementHook is called inside the transaction that settles a deposit, after the
// deposit is SETTLED and its events are written (its ledger posting too, unless the step
// runs in a batch: then the owner's credit is posted at the end of the batch, in the same
// transaction; stepBatcher); an error rolls the deposit's settlement back (the step is
// retried). The hooks are given to New (Config.Settled):
// the commerce side's completes a checkout payment in the same transaction
// (payments/checkout.Completer).
type SettlementHook interface {
	DepositSettled(ctx context.Context, tx pgx.Tx, d Deposit) error
}

// HookFunc adapts a function to SettlementHook.
type HookFunc func(ctx context.Context, tx pgx.Tx, d Deposit) error

// DepositSettled calls f.
func (f HookFunc) DepositSettled(ctx context.Context, tx pgx.Tx, d Deposit) error {
	return f(ctx, tx, d)
}
