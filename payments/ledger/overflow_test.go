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

// A running balance that would pass int64 is a validation error, and Post's contract for
// those is that tx stays usable with nothing written: the caller may go on and commit. The
// refusal must come before the transaction row, or the commit keeps a ledger transaction
// without entries whose reference then replays as posted (found in review R5; the test
// above rolled back and could not see it). In a PostAll the same goes for a later
// transaction's entries: nothing of the earlier ones is written either.
func TestRunningBalanceOverflowWritesNothing(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	merchant := uuid.New()
	acct := ledger.Merchant(merchant, ledger.Available)
	tr := func(ref string, ps []ledger.Posting) ledger.Transaction {
		return ledger.Transaction{MerchantID: merchant, Environment: "sandbox", Reference: ref, Kind: "test", Description: ref, Postings: ps}
	}
	if _, err := post(ctx, pool, tr("fill", ledger.Move(ledger.System(ledger.External), acct, money.New(money.USDT, math.MaxInt64-10)))); err != nil {
		t.Fatal(err)
	}
	up := money.New(money.USDT, 100)
	through := tr("through", append(ledger.Move(ledger.System(ledger.External), acct, up), ledger.Move(acct, ledger.System(ledger.External), up)...))
	other := tr("other", ledger.Move(ledger.System(ledger.External), ledger.Merchant(merchant, ledger.Pending), up))
	for _, c := range []struct {
		name string
		ts   []ledger.Transaction
	}{
		{"post", []ledger.Transaction{through}},
		{"postall", []ledger.Transaction{other, through}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			_, err = ledger.PostAll(ctx, tx, c.ts...)
			if !errors.Is(err, ledger.ErrInvalidTransaction) {
				t.Fatalf("posted through an overflow: %v", err)
			}
			var n int
			if err := tx.QueryRow(ctx, `select count(*) from ledger_transactions where reference in ('through', 'other')`).Scan(&n); err != nil || n != 0 {
				t.Fatalf("after the refusal, in its transaction: %d rows (%v)", n, err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if v, err := ledger.Verify(ctx, pool); err != nil || len(v) != 0 {
				t.Fatalf("verify %v %v", v, err)
			}
		})
	}
}
