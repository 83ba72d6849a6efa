package customers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
)

// Completed is a funding request the crypto arrived for (PENDING -> COMPLETED, the only
// move a funding request makes).
const Completed = "COMPLETED"

// FundingArrival is crypto confirmed at a customer's deposit address (a custody partner's
// notification, payments/partners).
type FundingArrival struct {
	CustomerID  uuid.UUID
	Environment string
	Chain       string
	Address     string
	Amount      money.Amount
	// Reference is the ledger transaction's reference ("custody:<notification id>"): a
	// notification applied twice posts once.
	Reference   string
	Description string            // what arrived, for the ledger
	Metadata    map[string]string // kept on the ledger transaction
}

// FundingCredited is what CreditFundingTx did.
type FundingCredited struct {
	MerchantID uuid.UUID
	Request    *uuid.UUID   // the funding request completed; nil when none matched
	Balance    money.Amount // the customer's available balance after the credit
}

// CreditFundingTx applies crypto arriving at a customer's deposit address, in the caller's
// transaction: the oldest PENDING funding request for that address and asset (an
// amount-bound request only for its amount) moves to COMPLETED, the customer's available
// balance is credited (system:external -> customer available) and
// customer.balance.credited is recorded. This package is the only writer of
// crypto_funding_requests (issue 32).
//
// Errors: ErrNotFound (no such customer in the environment), the database's.
func CreditFundingTx(ctx context.Context, tx pgx.Tx, rec events.Writer, a FundingArrival) (FundingCredited, error) {
	var out FundingCredited
	err := tx.QueryRow(ctx, `select merchant_id from customers where id = $1 and environment = $2`, a.CustomerID, a.Environment).
		Scan(&out.MerchantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return FundingCredited{}, ErrNotFound
	}
	if err != nil {
		return FundingCredited{}, fmt.Errorf("customers: funding: %w", err)
	}
	err = tx.QueryRow(ctx, `update crypto_funding_requests set status = $7
		where id = (select id from crypto_funding_requests
			where customer_id = $1 and environment = $2 and chain = $3 and asset = $4 and lower(deposit_address) = lower($5)
				and status = 'PENDING' and (amount is null or amount = $6)
			order by created_at limit 1 for update)
		returning id`, a.CustomerID, a.Environment, a.Chain, string(a.Amount.Asset), a.Address, a.Amount.Minor, Completed).Scan(&out.Request)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return FundingCredited{}, fmt.Errorf("customers: funding request: %w", err)
	}
	acct := ledger.Customer(a.CustomerID, ledger.Available)
	posted, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: out.MerchantID, Environment: a.Environment,
		Reference: a.Reference, Kind: "funding.credit", Description: "Customer funding: " + a.Description,
		Postings: ledger.Move(ledger.System(ledger.External), acct, a.Amount), Metadata: a.Metadata})
	if err != nil {
		return FundingCredited{}, err
	}
	bal, _ := posted.Find(acct, a.Amount.Asset)
	out.Balance = bal.Amount
	if _, err := rec.Record(ctx, tx, out.MerchantID, a.Environment, events.CustomerBalanceCredited, events.CustomerBalance{
		CustomerID: a.CustomerID.String(), Asset: string(a.Amount.Asset), Amount: a.Amount.String(), Balance: bal.Amount.String(),
	}); err != nil {
		return FundingCredited{}, err
	}
	return out, nil
}
