package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/rates"
)

// MoneyIn is the real Onramps: TEMPORARY onramps of payments/onramps (settling to the
// merchant's internal USDT balance, USD converted at the locked buy price) and the sandbox
// deposit of payments/deposits. Give the deposits service a Completer (deposits.Config
// Settled) so a settled deposit completes the checkout payment in the settling transaction.
// svcd and the tests run this one adapter.
type MoneyIn struct {
	Onramps  *onramps.Service
	Deposits *deposits.Service
}

var _ Onramps = MoneyIn{}

// CreateTemporary creates the onramp in tx for exactly the amount.
func (m MoneyIn) CreateTemporary(ctx context.Context, tx pgx.Tx, req OnrampRequest) (Onramp, error) {
	asset, err := money.ParseAsset(req.Currency)
	if err != nil {
		return Onramp{}, err
	}
	o, price, err := m.Onramps.CreateForAmount(ctx, tx, req.Tenant, money.New(asset, req.Amount), req.Reference)
	if err != nil {
		return Onramp{}, err
	}
	if o.Amount == nil || o.ExpiresAt == nil {
		return Onramp{}, fmt.Errorf("checkout: onramp %s is not a TEMPORARY one with an amount", o.ID)
	}
	out := Onramp{ID: o.ID.String(), AccountNumber: o.AccountNumber, BankName: o.BankName, AccountName: o.AccountName,
		AmountNGN: o.Amount.Minor, ExpiresAt: *o.ExpiresAt}
	if price > 0 {
		out.Rate = rates.FormatPrice(price) // kobo per unit of the currency, as NGN
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

// Completer completes checkout payments when the deposit into their onramp settles, inside
// the settling transaction. It needs only the event recorder and a clock, so it is built
// before the deposits service and given to it (deposits.Config Settled), which is built
// before the Service that pays through it (MoneyIn): no cycle. Safe for concurrent use.
type Completer struct {
	events Recorder
	now    func() time.Time
}

var _ deposits.SettlementHook = (*Completer)(nil)

// NewCompleter returns the completer; events records checkout.payment.completed, now (nil:
// time.Now) stamps a settlement that carries no time.
func NewCompleter(events Recorder, now func() time.Time) *Completer {
	return &Completer{events: events, now: payments.OrNow(now)}
}

func (c *Completer) stamp() time.Time { return payments.Stamp(c.now()) }

// DepositSettled is the deposits' SettlementHook: a deposit into an onramp completes the
// checkout payment of that onramp, if any (OnDepositSettled).
func (c *Completer) DepositSettled(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
	if d.OnrampID == nil {
		return nil
	}
	sd := SettledDeposit{ID: d.ID.String(), OnrampID: d.OnrampID.String(), Tenant: d.Tenant, AmountNGN: d.Amount.Minor}
	if d.SettledAt != nil {
		sd.SettledAt = *d.SettledAt
	}
	return c.OnDepositSettled(ctx, tx, sd)
}
