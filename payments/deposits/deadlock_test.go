package deposits_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/rates"
)

// onReceipt is a second deposits service on in's database with ConvertOnReceipt, as svcd
// runs it: its intakes post the receipt, the conversion and the settlement in one ledger
// transaction of their own (on their own reference's shard), beside in's batches.
func onReceipt(t *testing.T, in *intake) *deposits.Service {
	t.Helper()
	rec, inserter := paymentstest.Recorder(t, in.pool)
	rs, err := rates.New(in.pool, rates.Config{References: map[money.Asset]int64{money.USDT: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	return deposits.New(in.pool, deposits.Config{Onramps: in.onramps, Rates: rs, Providers: providers.Default(providers.SandboxConfig{}),
		Events: rec, Jobs: inserter, SettleInConversion: true, ConvertOnReceipt: true})
}

// Deposit steps of a fresh merchant run concurrently in batches (deposits.StepLanes lanes,
// each batch one transaction posting every step's ledger transaction and the owners'), some
// alone, beside intakes converting and settling their deposits on receipt, while the
// merchant's accounts are created (its system accounts' shards and each new customer's
// pending and available rows): no transaction deadlocks on ledger_accounts (postgres.InTx
// would retry it, so the books would still balance, but a deadlock costs deadlock_timeout
// and a rerun of a whole batch), and the books verify. Before ledger.PostAll, a batch locked
// its steps' system accounts as each step posted and its owners' rows at the end, while a
// posting alone locks the same rows in id order (the owners' rows, older, first): the two
// crossed whenever the batch's shard was the lone posting's; and account creation crossed
// the same way (a posting waiting to create an account that another had just created,
// uncommitted, while holding a row that other was waiting for).
func TestConcurrentBatchesDoNotDeadlock(t *testing.T) {
	in := newIntake(t, false)
	alone := onReceipt(t, in)
	ctx := context.Background()
	before := paymentstest.Deadlocks(t, in.pool)
	const waves, batched, received = 20, 12, 12
	var settled, failed int
	old := []uuid.UUID{in.customer(t), in.customer(t)}
	for wave := range waves {
		custs := []uuid.UUID{old[wave%2], in.customer(t)} // the new one's accounts are created in the wave
		owner := func(i int) *uuid.UUID {
			if i%3 == 0 {
				return nil // the merchant's
			}
			return &custs[i%2]
		}
		ids := make([]uuid.UUID, batched)
		for i := range ids {
			o := in.onramp(t, "16080.00", owner(i), nil)
			si := deposits.SimulateInput{OnrampID: o.ID}
			if (wave+i)%5 == 4 { // another amount: the conversion step fails it (its NGN returned)
				a := money.MustParse(money.NGN, "16000.00")
				si.Amount = &a
			}
			d, err := in.sim.Simulate(ctx, in.tenant, si)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = d.ID
		}
		intakes := make([]uuid.UUID, received)
		for i := range intakes {
			intakes[i] = in.onramp(t, "16080.00", owner(i+1), nil).ID
		}
		// Every step at once (the conversion settles in it: SettleInConversion), beside the
		// intakes that convert and settle on receipt.
		got := make([]deposits.Deposit, received)
		err := paymentstest.Race(batched+received, func(i int) error {
			if i >= batched {
				var err error
				got[i-batched], err = alone.Simulate(ctx, in.tenant, deposits.SimulateInput{OnrampID: intakes[i-batched]})
				return err
			}
			return in.deposits.Advance(ctx, ids[i], deposits.PendingFX)
		})
		if err != nil {
			t.Fatalf("wave %d: %v", wave, err)
		}
		for i, id := range ids {
			d := in.get(t, id)
			want := deposits.Settled
			if (wave+i)%5 == 4 {
				want = deposits.Failed
				failed++
			} else {
				settled++
			}
			if d.Status != want {
				t.Fatalf("wave %d deposit %d: %s, want %s", wave, i, d.Status, want)
			}
		}
		for i, d := range got {
			// A deadlock in its savepoint would leave it to its job (PENDING_FX).
			if d.Status != deposits.Settled {
				t.Errorf("wave %d intake %d: %s, want SETTLED on receipt", wave, i, d.Status)
				continue
			}
			settled++
		}
	}
	if n := paymentstest.Deadlocks(t, in.pool) - before; n != 0 {
		t.Errorf("%d deadlocks in the test's database", n)
	}
	in.verify(t)
	// Every settled deposit converted 10 USDT out of system:fx; the failed ones nothing.
	bs, err := ledger.OwnerBalances(ctx, in.pool, in.tenant.MerchantID, in.tenant.Environment, ledger.OwnerSystem, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	fx := money.Zero(money.USDT)
	for _, b := range bs {
		if b.Amount.Asset == money.USDT && b.Account.Purpose == ledger.FX {
			fx = b.Amount
		}
	}
	if want := fmt.Sprintf("-%d.000000", 10*settled); fx.String() != want {
		t.Errorf("system:fx USDT %s, want %s (%d settled, %d failed)", fx, want, settled, failed)
	}
}
