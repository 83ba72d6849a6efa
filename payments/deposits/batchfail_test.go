package deposits_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/persistence/postgres/pgtest"
)

// A batch's steps post through one ledger.PostAll at its end, so one step's posting that
// fails (here a reference conflict: its conversion's reference already posted with other
// postings) fails the batch; the batch then runs its steps alone: that step fails alone,
// with the ledger's error, its deposit left PENDING_FX with nothing of the step written,
// and every other step goes through once: SETTLED, each event once, the customer's credit
// once, the books sound; the batch's failure is logged. (Before ledger.PostAll each step posted in its own savepoint,
// with the same outcome.)
func TestABatchStepsFailingPostingFailsItAlone(t *testing.T) {
	in := newIntake(t, false)
	ctx := context.Background()
	cust := in.customer(t)
	const n = 6
	ids := make([]uuid.UUID, n)
	for i := range ids {
		var c *uuid.UUID
		if i%2 == 1 {
			c = &cust
		}
		d, err := in.sim.Simulate(ctx, in.tenant, deposits.SimulateInput{OnrampID: in.onramp(t, "16080.00", c, nil).ID})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != deposits.PendingFX {
			t.Fatalf("deposit %d: %s", i, d.Status)
		}
		ids[i] = d.ID
	}
	const bad = 3
	if _, err := postTx(ctx, in, ledger.Transaction{MerchantID: in.tenant.MerchantID, Environment: in.tenant.Environment,
		Reference: "deposit:" + ids[bad].String() + ":convert", Kind: "test", Description: "another posting under the step's reference",
		Postings: ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), money.MustParse(money.NGN, "1.00"))}); err != nil {
		t.Fatal(err)
	}
	errs := in.deposits.RunBatch(ctx, deposits.PendingFX, ids...)
	for i, err := range errs {
		if i == bad {
			if !errors.Is(err, ledger.ErrReferenceConflict) {
				t.Errorf("bad step: %v, want the reference conflict", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("step %d: %v", i, err)
		}
	}
	for i, id := range ids {
		d := in.get(t, id)
		want := []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled"}
		if d.CustomerID != nil {
			want = append(want, "customer.balance.credited")
		}
		status := deposits.Settled
		if i == bad {
			status, want = deposits.PendingFX, []string{"deposit.received"}
		}
		if d.Status != status {
			t.Errorf("deposit %d: %s, want %s", i, d.Status, status)
		}
		if got := in.events(t, id); !slices.Equal(got, want) {
			t.Errorf("deposit %d events %v, want %v", i, got, want)
		}
	}
	if got := in.available(t, ledger.OwnerCustomer, cust); got != "20.000000" { // 2 customer deposits of 10 USDT settled (the bad one is the third), each credited once
		t.Errorf("customer available %s, want 20.000000", got)
	}
	// The batch failed as a whole, and says so (else a batch that always fails would show
	// only as a slower service): no batch posting committed, each step posted alone.
	if logs := in.logs.String(); !strings.Contains(logs, "batch failed") || !strings.Contains(logs, ids[bad].String()) {
		t.Errorf("the failed batch is not logged with its error: %q", logs)
	}
	if got := pgtest.Strings(t, in.pool, `select reference from ledger_transactions where reference like 'deposits:batch:%'`); len(got) != 0 {
		t.Errorf("batch postings committed: %v", got)
	}
	in.verify(t)
}

func postTx(ctx context.Context, in *intake, tr ledger.Transaction) (ledger.Posted, error) {
	tx, err := in.pool.Begin(ctx)
	if err != nil {
		return ledger.Posted{}, err
	}
	defer tx.Rollback(ctx)
	p, err := ledger.Post(ctx, tx, tr)
	if err != nil {
		return p, err
	}
	return p, tx.Commit(ctx)
}
