package checkout

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/products"
)

// MoneyIn is the real Onramps: TEMPORARY onramps of payments/onramps (settling to the
// merchant's internal USDT balance, USD converted at the locked buy price) and the sandbox
// deposit of payments/deposits. Register Hook on the deposits service so a settled deposit
// completes the checkout payment in the settling transaction.
type MoneyIn struct {
	Onramps  *onramps.Service
	Deposits *deposits.Service
}

var _ Onramps = MoneyIn{}

// CreateTemporary creates the onramp in tx for exactly the amount.
func (m MoneyIn) CreateTemporary(ctx context.Context, tx pgx.Tx, req OnrampRequest) (Onramp, error) {
	o, price, err := m.Onramps.CreateForAmount(ctx, tx, req.Tenant, money.New(money.Asset(req.Currency), req.Amount), req.Reference)
	if err != nil {
		return Onramp{}, err
	}
	if o.Amount == nil || o.ExpiresAt == nil {
		return Onramp{}, fmt.Errorf("checkout: onramp %s is not a TEMPORARY one with an amount", o.ID)
	}
	out := Onramp{ID: o.ID.String(), AccountNumber: o.AccountNumber, BankName: o.BankName, AccountName: o.AccountName,
		AmountNGN: o.Amount.Minor, ExpiresAt: *o.ExpiresAt}
	if price > 0 {
		out.Rate = products.FormatAmount("NGN", price) // kobo per unit of the currency, as NGN
	}
	return out, nil
}

// SimulateDeposit runs the sandbox deposit of the onramp's exact amount.
func (m MoneyIn) SimulateDeposit(ctx context.Context, t payments.Tenant, onrampID string) error {
	id, err := uuid.Parse(onrampID)
	if err != nil {
		return ErrPaymentNotFound
	}
	_, err = m.Deposits.Simulate(ctx, t, deposits.SimulateInput{OnrampID: id})
	return err
}

// Hook is the deposits' SettlementHook that completes checkout payments (s.OnDepositSettled)
// inside the settling transaction.
func Hook(s *Service) deposits.SettlementHook {
	return deposits.HookFunc(func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
		if d.OnrampID == nil {
			return nil
		}
		sd := SettledDeposit{ID: d.ID.String(), OnrampID: d.OnrampID.String(),
			Tenant: d.Tenant, AmountNGN: d.Amount.Minor}
		if d.SettledAt != nil {
			sd.SettledAt = *d.SettledAt
		}
		return s.OnDepositSettled(ctx, tx, sd)
	})
}
