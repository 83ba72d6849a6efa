// Package checkouttest gives tests a stand-in for the onramp machinery a checkout is paid
// through (payments/onramps and payments/deposits): TEMPORARY "onramps" with fixed test
// accounts, and a simulated deposit that settles at once by calling the checkout's
// settlement hook in its own transaction, as the deposits service does. It moves no money
// and writes no ledger: it exists only so checkout's own behavior can be tested.
package checkouttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/checkout"
	"svc/persistence/postgres"
)

// Onramps is the stand-in. Completer completes the checkout payments, as the deposits
// service's settlement hook does.
type Onramps struct {
	Pool      *pgxpool.Pool
	Completer *checkout.Completer
	// USDRate is the NGN per USD used for USD links (default "1500.00").
	USDRate string
	Now     func() time.Time

	mu     sync.Mutex
	amount map[string]int64
	tenant map[string]payments.Tenant
	// Created counts onramps created.
	Created int
}

var _ checkout.Onramps = (*Onramps)(nil)

func (o *Onramps) clock() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// CreateTemporary returns a test account for the amount (USD at USDRate), expiring in 25
// minutes.
func (o *Onramps) CreateTemporary(ctx context.Context, tx pgx.Tx, req checkout.OnrampRequest) (checkout.Onramp, error) {
	now := o.clock()
	ngn, rate := req.Amount, ""
	if req.Currency == "USD" {
		rate = o.USDRate
		if rate == "" {
			rate = "1500.00"
		}
		var whole, frac int64
		fmt.Sscanf(rate, "%d.%d", &whole, &frac)
		ngn = req.Amount * (whole*100 + frac) / 100
	}
	id := uuid.NewString()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.amount == nil {
		o.amount, o.tenant = map[string]int64{}, map[string]payments.Tenant{}
	}
	o.amount[id], o.tenant[id] = ngn, req.Tenant
	o.Created++
	return checkout.Onramp{ID: id, AccountNumber: fmt.Sprintf("99%08d", o.Created), BankName: "Test Bank",
		AccountName: "SVC Checkout", AmountNGN: ngn, Rate: rate, ExpiresAt: now().Add(25 * time.Minute)}, nil
}

// SimulateDeposit settles a deposit of the onramp's amount now, calling the completer
// inside the settling transaction.
func (o *Onramps) SimulateDeposit(ctx context.Context, t payments.Tenant, onrampID string) error {
	o.mu.Lock()
	amount, ok := o.amount[onrampID]
	o.mu.Unlock()
	if !ok {
		return fmt.Errorf("checkouttest: unknown onramp %s", onrampID)
	}
	return postgres.InTx(ctx, o.Pool, func(tx pgx.Tx) error {
		return o.Completer.OnDepositSettled(ctx, tx, checkout.SettledDeposit{
			ID: uuid.NewString(), OnrampID: onrampID, Tenant: t, AmountNGN: amount, SettledAt: o.clock()(),
		})
	})
}
