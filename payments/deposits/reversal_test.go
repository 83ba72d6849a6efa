package deposits_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/persistence/postgres/pgtest"
)

// settledFor is a settled 10 USDT deposit of a new customer of in (its conversion step run
// by the batcher). Before it settles, before the customer's accounts exist, setup runs with
// the deposit's id.
func settledFor(t *testing.T, in *intake, setup func(id uuid.UUID)) (deposits.Deposit, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	cust := in.customer(t)
	d, err := in.sim.Simulate(ctx, in.tenant, deposits.SimulateInput{OnrampID: in.onramp(t, "16080.00", &cust, nil).ID})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != deposits.PendingFX {
		t.Fatalf("simulated deposit %s, want PENDING_FX", d.Status)
	}
	if setup != nil {
		setup(d.ID)
	}
	if err := in.deposits.Advance(ctx, d.ID, deposits.PendingFX); err != nil {
		t.Fatal(err)
	}
	if d = in.get(t, d.ID); d.Status != deposits.Settled || d.SettledAmount.String() != "10.000000" {
		t.Fatalf("deposit %s %v, want SETTLED 10 USDT", d.Status, d.SettledAmount)
	}
	return d, cust
}

// waiters is how many backends of pool's database wait for a lock.
func waiters(t *testing.T, in *intake) int {
	t.Helper()
	var n int
	if err := in.pool.QueryRow(context.Background(), `select count(*) from pg_stat_activity
		where wait_event_type = 'Lock' and datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func waitFor(t *testing.T, in *intake, n int, what string) {
	t.Helper()
	for i := 0; waiters(t, in) < n; i++ {
		if i > 500 {
			t.Fatalf("%s never waited for its lock", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isDeadlock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}

// A reversal takes its ledger locks in one round with the other postings (issue 27). It
// locked the credited balance first (ledger.LockBalance, since removed), then the FX desk's shard with
// the rest in its post: a deposit batch crediting that customer through the same FX shard,
// queued on that shard's row before it, then got the shard and waited for the customer's
// row, which the reversal held while it waited for the shard: a deadlock (40P01 after
// deadlock_timeout; postgres.InTx would rerun the victim, a whole batch perhaps). The
// sequence is forced: the shard's row (older than the customer's, so first in id order)
// is held by t0 while the batch's PostAll (t2) and then the reversal (t1) queue on it, and
// t0 then commits. Now both finish, the reversal takes the whole amount (the credit came
// first), and the books verify.
func TestReversalTakesItsLedgerLocksInOneRound(t *testing.T) {
	in := newIntake(t, false)
	ctx := context.Background()
	usdt := money.MustParse(money.USDT, "1")
	var ref string
	d, cust := settledFor(t, in, func(id uuid.UUID) {
		// The reversal's system accounts (its reference's shard), created before the
		// customer's: lower ids, locked first.
		ref = "deposit:" + id.String() + ":reverse"
		if _, err := postTx(ctx, in, ledger.Transaction{MerchantID: in.tenant.MerchantID, Environment: in.tenant.Environment,
			Reference: "shard:" + id.String(), Kind: "test", Description: "the reversal's shard", ShardKey: ref,
			Postings: append(ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), usdt),
				ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), money.MustParse(money.NGN, "1.00"))...)}); err != nil {
			t.Fatal(err)
		}
	})
	fx := pgtest.Strings(t, in.pool, `select e.account_id::text from ledger_entries e join ledger_transactions x on x.id = e.transaction_id
		where x.reference = $1 and e.asset = 'USDT' and e.amount > 0`, "shard:"+d.ID.String())
	holder := pgtest.Strings(t, in.pool, `select id::text from ledger_accounts where owner_type = 'customer' and owner_id = $1
		and asset = 'USDT' and purpose = 'available'`, cust)
	if len(fx) != 1 || len(holder) != 1 || fx[0] >= holder[0] {
		t.Fatalf("FX shard account %v, customer's %v: want one each, the shard's older", fx, holder)
	}
	before := paymentstest.Deadlocks(t, in.pool)

	t0, err := in.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer t0.Rollback(ctx)
	if _, err := t0.Exec(ctx, `select id from ledger_accounts where id = $1 for update`, fx[0]); err != nil {
		t.Fatal(err)
	}
	credit := make(chan error, 1)
	go func() { // t2: a batch crediting the customer through the reversal's FX shard
		credit <- func() error {
			tx, err := in.pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := ledger.PostAll(ctx, tx, ledger.Transaction{MerchantID: in.tenant.MerchantID, Environment: in.tenant.Environment,
				Reference: "credit:" + d.ID.String(), Kind: "test", Description: "a batch's credit", ShardKey: ref,
				Postings: ledger.Move(ledger.System(ledger.FX), ledger.Customer(cust, ledger.Available), usdt)}); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}()
	}()
	waitFor(t, in, 1, "the batch's posting")
	type result struct {
		out deposits.Outcome
		err error
	}
	reversed := make(chan result, 1)
	go func() { // t1: the reversal, in a transaction of its own (no retry)
		var r result
		r.err = func() error {
			tx, err := in.pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if r.out, err = in.deposits.ReverseTx(ctx, tx, nil, d.ID, "chargeback"); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}()
		reversed <- r
	}()
	waitFor(t, in, 2, "the reversal")
	if err := t0.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err2, r1 := <-credit, <-reversed
	if isDeadlock(err2) || isDeadlock(r1.err) {
		t.Fatalf("deadlock: the batch's posting %v, the reversal %v", err2, r1.err)
	}
	if err2 != nil || r1.err != nil {
		t.Fatalf("the batch's posting %v, the reversal %v", err2, r1.err)
	}
	if n := paymentstest.Deadlocks(t, in.pool) - before; n != 0 {
		t.Errorf("%d deadlocks in the test's database", n)
	}
	if !r1.out.Changed || r1.out.Deposit.Status != deposits.Reversed || r1.out.Debited.String() != "10.000000" || r1.out.Shortfall.Sign() != 0 {
		t.Fatalf("reversal %+v", r1.out)
	}
	if d := in.get(t, d.ID); d.Status != deposits.Reversed {
		t.Fatalf("deposit %s after the reversal", d.Status)
	}
	if a := in.available(t, ledger.OwnerCustomer, cust); a != "1.000000" { // 10 + 1 credited - 10 reversed
		t.Errorf("customer available %s, want 1.000000", a)
	}
	in.verify(t)
}

// A reversal debits what the credited balance still holds and books the rest on the
// merchant's receivable: the whole amount when it is all there (no receivable), part of it
// when part was spent, nothing when all was (the customer.balance.refunded event then says
// 0 and the balance left). One ledger transaction under the deposit's reverse reference,
// described as before; a repeat changes nothing; the books verify.
func TestReversalOfASpentBalance(t *testing.T) {
	in := newIntake(t, false)
	ctx := context.Background()
	for _, c := range []struct {
		name, spent, debited, short, left string
	}{
		{"all there", "", "10.000000", "0.000000", "0.000000"},
		{"partly spent", "6.5", "3.500000", "6.500000", "0.000000"},
		{"all spent", "10", "0.000000", "10.000000", "0.000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, cust := settledFor(t, in, nil)
			if c.spent != "" {
				if _, err := postTx(ctx, in, ledger.Transaction{MerchantID: in.tenant.MerchantID, Environment: in.tenant.Environment,
					Reference: "spend:" + d.ID.String(), Kind: "test", Description: "spent",
					Postings: ledger.Move(ledger.Customer(cust, ledger.Available), ledger.System(ledger.External), money.MustParse(money.USDT, c.spent))}); err != nil {
					t.Fatal(err)
				}
			}
			receivable := func() money.Amount {
				bs, err := ledger.GetBalance(ctx, in.pool, in.tenant.MerchantID, in.tenant.Environment, ledger.Merchant(in.tenant.MerchantID, ledger.Receivable), money.USDT)
				if err != nil {
					t.Fatal(err)
				}
				return bs.Amount
			}
			owed := receivable()
			out, err := in.deposits.Reverse(ctx, &in.tenant, d.ID, "chargeback")
			if err != nil {
				t.Fatal(err)
			}
			if !out.Changed || out.From != deposits.Settled || out.Deposit.Status != deposits.Reversed ||
				out.Debited.String() != c.debited || out.Shortfall.String() != c.short {
				t.Fatalf("outcome %+v (debited %v, shortfall %v)", out, out.Debited, out.Shortfall)
			}
			if got, err := receivable().Sub(owed); err != nil || got.Neg().String() != c.short {
				t.Errorf("receivable moved by %v (%v), want -%s", got, err, c.short)
			}
			if a := in.available(t, ledger.OwnerCustomer, cust); a != c.left {
				t.Errorf("customer available %s, want %s", a, c.left)
			}
			desc := pgtest.Strings(t, in.pool, `select description from ledger_transactions where reference = $1`, "deposit:"+d.ID.String()+":reverse")
			want := "Reversal of deposit " + d.PaymentReference + ": " + c.debited + " USDT debited back"
			if c.short != "0.000000" {
				want += ", " + c.short + " USDT owed by the merchant (receivable)"
			}
			if len(desc) != 1 || desc[0] != want {
				t.Errorf("reversal postings %q, want one %q", desc, want)
			}
			ev := pgtest.Strings(t, in.pool, `select data->>'amount' || ' ' || (data->>'balance') || ' ' || (data->>'reason') from events
				where type = 'customer.balance.refunded' and data->>'deposit_id' = $1`, d.ID.String())
			if len(ev) != 1 || !strings.HasPrefix(ev[0], c.debited+" "+c.left+" REVERSED: chargeback") ||
				strings.Contains(ev[0], "not covered") != (c.short != "0.000000") {
				t.Errorf("customer.balance.refunded %q", ev)
			}
			if ev := in.events(t, d.ID); !slices.Contains(ev, "deposit.failed") {
				t.Errorf("events %v, want deposit.failed (REVERSED)", ev)
			}
			again, err := in.deposits.Reverse(ctx, &in.tenant, d.ID, "again")
			if err != nil || again.Changed || again.Deposit.Status != deposits.Reversed {
				t.Fatalf("repeat: %+v %v", again, err)
			}
			in.verify(t)
		})
	}
}
