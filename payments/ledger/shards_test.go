package ledger_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
)

// TestSystemAccountShards: concurrent posts through one system account spread over its
// shards (ledger.SystemShards rows), the account's balance and entries are those of all its
// shards, a replay lands on the same shard, and Verify stays clean.
func TestSystemAccountShards(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m := uuid.New()
	ext := ledger.System(ledger.External)
	const n = 64
	if err := paymentstest.Race(n, func(i int) error {
		_, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: fmt.Sprintf("dep-%d", i),
			Postings: ledger.Move(ext, ledger.Customer(uuid.New(), ledger.Available), ngn("10"))})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `select count(*) from ledger_accounts where merchant_id = $1 and owner_type = 'system'`, m).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows < 2 || rows > ledger.SystemShards {
		t.Fatalf("system:external in %d rows, want 2..%d", rows, ledger.SystemShards)
	}
	b, err := ledger.GetBalance(ctx, pool, m, "sandbox", ext, money.NGN)
	if err != nil || b.Amount.String() != "-640.00" {
		t.Fatalf("system:external = %v, %v; want -640.00", b.Amount, err)
	}
	all, err := ledger.OwnerBalances(ctx, pool, m, "sandbox", ledger.OwnerSystem, uuid.Nil)
	if err != nil || len(all) != 1 || all[0].Amount.String() != "-640.00" || all[0].Account != ext {
		t.Fatalf("system balances = %+v, %v", all, err)
	}
	_, total, err := ledger.ListEntries(ctx, pool, ledger.EntryFilter{MerchantID: m, Environment: "sandbox", Owner: ledger.OwnerSystem}, 10, 0)
	if err != nil || total != n {
		t.Fatalf("system entries = %d, %v; want %d", total, err, n)
	}
	again, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "dep-0",
		Postings: ledger.Move(ext, ledger.Customer(uuid.New(), ledger.Available), ngn("10"))})
	if err == nil && !again.Replayed {
		t.Fatalf("a second post of dep-0 with other postings was not refused: %+v", again)
	}
	if v, err := ledger.Verify(ctx, pool); err != nil || len(v) != 0 {
		t.Fatalf("verify: %v %v", v, err)
	}
}
