package deposits_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

// TestMoveTxGoesThroughTheMachine: the owner's MoveTx (what payments/offramps calls) refuses
// a move the deposit machine forbids with a typed error and leaves the row as it was; the
// allowed one is written.
func TestMoveTxGoesThroughTheMachine(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	off, cust := uuid.New(), uuid.New()
	amt := money.New(money.USDT, 10_000_000)
	d := deposits.Deposit{ID: uuid.Must(uuid.NewV7()), Tenant: payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox},
		Type: deposits.TypeCrypto, Status: deposits.Settled, OfframpID: &off, CustomerID: &cust, Amount: amt, SettledAmount: &amt,
		Settlement: onramps.Settlement{Mode: "INTERNAL_BALANCE", Asset: money.USDT, Chain: "BASE", DestinationAddress: "0xabc"},
		TxHash:     "0xhash", PaymentReference: "offramp:" + off.String(), CreatedAt: now, UpdatedAt: now}
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error { return deposits.CreateTx(ctx, tx, d) }); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		var s string
		if err := pool.QueryRow(ctx, `select status from deposits where id = $1`, d.ID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		to      string
		illegal bool
	}{
		{deposits.Failed, true},            // the old offramp reversal's raw SETTLED -> FAILED
		{deposits.PendingWithdrawal, true}, // backwards
		{deposits.Reversed, false},
		{deposits.Settled, true}, // REVERSED is final
	} {
		before := status()
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := deposits.MoveTx(ctx, tx, d.ID, c.to, "test", now)
			return err
		})
		var ill *payments.IllegalMoveError
		switch {
		case c.illegal && (!errors.As(err, &ill) || ill.From != before || ill.To != c.to):
			t.Errorf("%s -> %s: %v, want an illegal move", before, c.to, err)
		case c.illegal && status() != before:
			t.Errorf("%s -> %s refused but the row moved to %s", before, c.to, status())
		case !c.illegal && (err != nil || status() != c.to):
			t.Errorf("%s -> %s: %v, status %s", before, c.to, err, status())
		}
	}
	bad := d
	bad.ID, bad.Status = uuid.Must(uuid.NewV7()), deposits.Reversed
	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error { return deposits.CreateTx(ctx, tx, bad) })
	if !errors.Is(err, payments.ErrIllegalMove) {
		t.Errorf("a deposit created REVERSED: %v", err)
	}
}
