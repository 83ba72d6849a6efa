package ledger_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// Several transactions of one PostAll on one account: each answers the balance it left (the
// deposit batch's customer.balance.credited is computed from them), the account's entries
// are numbered on across the transactions with their running balances (one moving it up
// then down), and each transaction's system postings go to its own shard key's rows.
func TestPostAllBalancesPerTransaction(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m, c1, c2 := uuid.New(), uuid.New(), uuid.New()
	usdt := func(s string) money.Amount { return money.MustParse(money.USDT, s) }
	tr := func(ref, key string, ps []ledger.Posting) ledger.Transaction {
		return ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: ref, ShardKey: key, Postings: ps}
	}
	a1, ext := ledger.Customer(c1, ledger.Available), ledger.System(ledger.External)
	var ps []ledger.Posted
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		ps, err = ledger.PostAll(ctx, tx,
			tr("a", "K", ledger.Move(ext, a1, usdt("10"))),
			tr("b", "K", ledger.Move(a1, ledger.Customer(c2, ledger.Available), usdt("4"))),
			tr("c", "L", append(ledger.Move(ext, a1, usdt("1")), ledger.Move(a1, ext, usdt("2"))...)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"10.000000", "6.000000", "5.000000"} {
		if b, ok := ps[i].Find(a1, money.USDT); !ok || b.Amount.String() != want {
			t.Errorf("transaction %d answers c1 %v (%v), want %s", i, b.Amount, ok, want)
		}
	}
	got := pgtest.Strings(t, pool, `select format('%s %s %s %s', t.reference, e.seq, e.amount, e.balance_after)
		from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
		join ledger_accounts a on a.id = e.account_id where a.owner_id = $1 order by e.seq`, c1)
	want := []string{"a 1 10000000 10000000", "b 2 -4000000 6000000", "c 3 1000000 7000000", "c 4 -2000000 5000000"}
	if !slices.Equal(got, want) {
		t.Errorf("c1's entries %v, want %v", got, want)
	}
	shards := pgtest.Strings(t, pool, `select distinct owner_id::text from ledger_accounts
		where merchant_id = $1 and owner_type = 'system' order by 1`, m)
	if len(shards) != 2 {
		t.Errorf("system rows on %d shards, want 2 (keys K and L): %v", len(shards), shards)
	}
	if n := len(pgtest.Strings(t, pool, `select reference from ledger_transactions where merchant_id = $1`, m)); n != 3 {
		t.Errorf("%d transactions, want 3", n)
	}
	mustVerify(t, pool)
}
