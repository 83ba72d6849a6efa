package ledger_test

import (
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
)

// Issue 32 item 5: every balance an entry records is checked, not only the final one. An
// account moved up and then down in one transaction nets to zero, but the balance after its
// first entry would pass int64: refused, nothing written (before, the entry recorded a
// wrapped, negative balance_after).
func TestRunningBalanceOverflowIsRefused(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	merchant := uuid.New()
	acct := ledger.Merchant(merchant, ledger.Available)
	near := money.New(money.USDT, math.MaxInt64-10)
	if _, err := post(ctx, pool, ledger.Transaction{MerchantID: merchant, Environment: "sandbox", Reference: "fill",
		Kind: "test", Description: "near the top", Postings: ledger.Move(ledger.System(ledger.External), acct, near)}); err != nil {
		t.Fatal(err)
	}
	up := money.New(money.USDT, 100)
	through := append(ledger.Move(ledger.System(ledger.External), acct, up), ledger.Move(acct, ledger.System(ledger.External), up)...)
	_, err := post(ctx, pool, ledger.Transaction{MerchantID: merchant, Environment: "sandbox", Reference: "through",
		Kind: "test", Description: "up and down again", Postings: through})
	var inv *ledger.InvalidTransactionError
	if !errors.As(err, &inv) {
		t.Fatalf("posted through an overflow: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `select count(*) from ledger_transactions where reference = 'through'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows %v", n, err)
	}
	if v, err := ledger.Verify(ctx, pool); err != nil || len(v) != 0 {
		t.Fatalf("verify %v %v", v, err)
	}
}
