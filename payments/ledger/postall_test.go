package ledger_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

// Database transactions that each post several ledger transactions (a customer funded, then
// paying another, the merchant's pending credited, another merchant's books) through one
// PostAll, concurrently, on fresh merchants whose accounts (customers', system shards')
// are created as they go, never deadlock, whatever order their accounts come in; and
// postings alone beside them neither. The books verify. The same workload posting one
// ledger transaction at a time in each database transaction deadlocks (each holds what
// another's next post needs).
func TestPostAllNeverDeadlocks(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	rng := rand.New(rand.NewPCG(seed(t), 7))
	merchants := []uuid.UUID{uuid.New(), uuid.New()}
	customers := make([]uuid.UUID, 8)
	for i := range customers {
		customers[i] = uuid.New()
	}
	const workers, rounds = 8, 12
	type work struct {
		ts    []ledger.Transaction
		alone bool // posted one by one, each in its own database transaction
	}
	var plans [workers][rounds]work
	for w := range workers {
		for r := range rounds {
			m, other := merchants[rng.IntN(2)], merchants[rng.IntN(2)]
			a, b := customers[rng.IntN(len(customers))], customers[rng.IntN(len(customers))]
			x := money.New(money.USDT, 1+rng.Int64N(1000))
			ref := fmt.Sprintf("w%d:r%d", w, r)
			ts := []ledger.Transaction{
				{MerchantID: m, Environment: "sandbox", Reference: ref + ":fund", ShardKey: fmt.Sprint(rng.IntN(40)),
					Postings: ledger.Move(ledger.System(ledger.External), ledger.Customer(a, ledger.Available), x)},
				{MerchantID: m, Environment: "sandbox", Reference: ref + ":pay", // spends what :fund credited
					Postings: ledger.Move(ledger.Customer(a, ledger.Available), ledger.Customer(b, ledger.Pending), x)},
				{MerchantID: m, Environment: "sandbox", Reference: ref + ":merchant",
					Postings: ledger.Move(ledger.System(ledger.FX), ledger.Merchant(m, ledger.Pending), x)},
				{MerchantID: other, Environment: "live", Reference: ref + ":other",
					Postings: ledger.Move(ledger.System(ledger.External), ledger.Customer(b, ledger.Available), x)},
			}
			rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
			var fund, pay int // :pay after :fund, in whichever places
			for i, tr := range ts {
				switch tr.Reference {
				case ref + ":fund":
					fund = i
				case ref + ":pay":
					pay = i
				}
			}
			if pay < fund {
				ts[pay], ts[fund] = ts[fund], ts[pay]
			}
			plans[w][r] = work{ts: ts, alone: rng.IntN(4) == 0}
		}
	}
	before := paymentstest.Deadlocks(t, pool)
	err := paymentstest.Race(workers, func(w int) error {
		for _, p := range plans[w] {
			if p.alone {
				for _, tr := range p.ts {
					if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error { _, err := ledger.Post(ctx, tx, tr); return err }); err != nil &&
						!errors.Is(err, ledger.ErrInsufficientBalance) { // :pay alone may find :fund not posted yet
						return err
					}
				}
				continue
			}
			if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
				ps, err := ledger.PostAll(ctx, tx, p.ts...)
				if err == nil && len(ps) != len(p.ts) {
					err = fmt.Errorf("%d posted of %d", len(ps), len(p.ts))
				}
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := paymentstest.Deadlocks(t, pool) - before; n != 0 {
		t.Errorf("%d deadlocks in the test's database", n)
	}
	mustVerify(t, pool)
}

// PostAll posts each transaction as Post would, in order: a later one may spend what an
// earlier one credited; a replayed one is answered as replayed while the others are
// written; any refusal (a balance short at its turn, a reference conflict, a reference
// twice, an invalid transaction) writes nothing and, but for the conflict, leaves the
// database transaction usable.
func TestPostAll(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m := uuid.New()
	c1, c2 := uuid.New(), uuid.New()
	usdt := func(s string) money.Amount { return money.MustParse(money.USDT, s) }
	tr := func(ref string, ps []ledger.Posting) ledger.Transaction {
		return ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: ref, Postings: ps}
	}
	fund := tr("fund", ledger.Move(ledger.System(ledger.External), ledger.Customer(c1, ledger.Available), usdt("10")))
	pay := tr("pay", ledger.Move(ledger.Customer(c1, ledger.Available), ledger.Customer(c2, ledger.Available), usdt("10")))
	if _, err := post(ctx, pool, tr("earlier", ledger.Move(ledger.System(ledger.External), ledger.Customer(c2, ledger.Available), usdt("1")))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		ts       []ledger.Transaction
		err      error  // errors.Is
		replayed []bool // per transaction, when it went through
		c2       string // c2's balance after (committed when no error)
	}{
		{name: "spent before credited", ts: []ledger.Transaction{pay, fund}, err: ledger.ErrInsufficientBalance, c2: "1.000000"},
		{name: "invalid", ts: []ledger.Transaction{fund, tr("bad", nil)}, err: ledger.ErrInvalidTransaction, c2: "1.000000"},
		{name: "reference twice", ts: []ledger.Transaction{fund, fund}, err: ledger.ErrInvalidTransaction, c2: "1.000000"},
		{name: "in order", ts: []ledger.Transaction{fund, pay}, replayed: []bool{false, false}, c2: "11.000000"},
		{name: "replays", ts: []ledger.Transaction{tr("earlier", ledger.Move(ledger.System(ledger.External), ledger.Customer(c2, ledger.Available), usdt("1"))), fund,
			tr("fund again", fund.Postings), tr("pay again", pay.Postings)}, replayed: []bool{true, true, false, false}, c2: "21.000000"},
		{name: "conflict", ts: []ledger.Transaction{tr("fund", pay.Postings)}, err: ledger.ErrReferenceConflict, c2: "21.000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var before int
			if err := tx.QueryRow(ctx, `select count(*) from ledger_transactions`).Scan(&before); err != nil {
				t.Fatal(err)
			}
			ps, err := ledger.PostAll(ctx, tx, c.ts...)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				if !errors.Is(c.err, ledger.ErrReferenceConflict) { // still usable, nothing written
					var n int
					if err := tx.QueryRow(ctx, `select count(*) from ledger_transactions`).Scan(&n); err != nil || n != before {
						t.Fatalf("after the refusal: %d transactions (%v)", n, err)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range ps {
					if p.Replayed != c.replayed[i] {
						t.Fatalf("transaction %d replayed %v, want %v", i, p.Replayed, c.replayed[i])
					}
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if b, _ := ledger.GetBalance(ctx, pool, m, "sandbox", ledger.Customer(c2, ledger.Available), money.USDT); b.Amount.String() != c.c2 {
				t.Fatalf("c2 has %s, want %s", b.Amount, c.c2)
			}
		})
	}
	mustVerify(t, pool)
}
