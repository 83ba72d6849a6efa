package balance

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
)

// Funding is crypto confirmed at one of the merchant's funding addresses (a custody
// partner's notification, payments/partners).
type Funding struct {
	MerchantID  uuid.UUID
	Environment string
	Chain       string
	Address     string
	TxHash      string
	Amount      money.Amount
	// Reference is the ledger transaction's reference ("custody:<notification id>"): a
	// notification applied twice posts once.
	Reference   string
	Description string            // what arrived, for the ledger
	Metadata    map[string]string // kept on the ledger transaction
}

// CreditFundingTx credits the merchant's available balance with f (system:external ->
// merchant available) and records merchant.balance.credited, in the caller's transaction.
// It returns the balance after the credit.
func CreditFundingTx(ctx context.Context, tx pgx.Tx, rec events.Writer, f Funding) (money.Amount, error) {
	acct := ledger.Merchant(f.MerchantID, ledger.Available)
	posted, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: f.MerchantID, Environment: f.Environment,
		Reference: f.Reference, Kind: "funding.credit", Description: "Merchant funding: " + f.Description,
		Postings: ledger.Move(ledger.System(ledger.External), acct, f.Amount), Metadata: f.Metadata})
	if err != nil {
		return money.Amount{}, err
	}
	bal, _ := posted.Find(acct, f.Amount.Asset)
	_, err = rec.Record(ctx, tx, f.MerchantID, f.Environment, events.MerchantBalanceCredited, events.MerchantBalance{
		Asset: string(f.Amount.Asset), Amount: f.Amount.String(), Balance: bal.Amount.String(), Chain: f.Chain,
		Address: f.Address, TxHash: f.TxHash,
	})
	return bal.Amount, err
}
