package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

func ngn(s string) money.Amount { return money.MustParse(money.NGN, s) }

func post(ctx context.Context, pool *pgxpool.Pool, t ledger.Transaction) (ledger.Posted, error) {
	var p ledger.Posted
	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		p, err = ledger.Post(ctx, tx, t)
		return err
	})
	return p, err
}

func mustVerify(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	vs, err := ledger.Verify(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("violation: %s", v)
	}
}

func TestValidateRefusesBeforeSQL(t *testing.T) {
	m, c := uuid.New(), uuid.New()
	base := ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "r"}
	cases := []struct {
		name     string
		postings []ledger.Posting
		want     error
	}{
		{"postings that do not sum to zero", []ledger.Posting{
			{Account: ledger.System(ledger.External), Amount: ngn("-10")},
			{Account: ledger.Customer(c, ledger.Available), Amount: ngn("9.99")},
		}, ledger.ErrUnbalanced},
		{"zero sum overall but not per asset", []ledger.Posting{
			{Account: ledger.System(ledger.External), Amount: money.New(money.NGN, -100)},
			{Account: ledger.Customer(c, ledger.Available), Amount: money.New(money.USD, 100)},
		}, ledger.ErrUnbalanced},
		{"a single posting", []ledger.Posting{{Account: ledger.System(ledger.External), Amount: ngn("1")}}, ledger.ErrInvalidTransaction},
		{"a zero amount", []ledger.Posting{
			{Account: ledger.System(ledger.External), Amount: ngn("0")},
			{Account: ledger.Customer(c, ledger.Available), Amount: ngn("0")},
		}, ledger.ErrInvalidTransaction},
		{"a customer account without id", ledger.Move(ledger.System(ledger.External), ledger.Customer(uuid.Nil, ledger.Available), ngn("1")), ledger.ErrInvalidTransaction},
		{"a bad purpose", ledger.Move(ledger.System(ledger.External), ledger.Customer(c, "Available!"), ngn("1")), ledger.ErrInvalidTransaction},
		{"an unknown asset", ledger.Move(ledger.System(ledger.External), ledger.Customer(c, ledger.Available), money.New("BTC", 1)), ledger.ErrInvalidTransaction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := base
			tr.Postings = tc.postings
			if err := tr.Validate(); !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
	ok := base
	ok.Postings = ledger.Move(ledger.System(ledger.External), ledger.Customer(c, ledger.Available), ngn("1"))
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	noRef := ok
	noRef.Reference = ""
	if err := noRef.Validate(); !errors.Is(err, ledger.ErrInvalidTransaction) {
		t.Fatalf("no reference: %v", err)
	}
}

func TestPostUnbalancedWritesNothing(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m, c := uuid.New(), uuid.New()
	_, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "x", Postings: []ledger.Posting{
		{Account: ledger.System(ledger.External), Amount: ngn("-10")},
		{Account: ledger.Customer(c, ledger.Available), Amount: ngn("10.01")},
	}})
	if !errors.Is(err, ledger.ErrUnbalanced) {
		t.Fatalf("err = %v", err)
	}
	var n int
	_ = pool.QueryRow(ctx, `select (select count(*) from ledger_accounts) + (select count(*) from ledger_transactions)`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows written", n)
	}
}

func TestPostBalancesEntriesAndReplay(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m, c := uuid.New(), uuid.New()
	avail := ledger.Customer(c, ledger.Available)
	p, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "dep-1",
		Kind: "deposit.settle", Description: "Deposit", Postings: ledger.Move(ledger.System(ledger.External), avail, ngn("1500.50"))})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := p.Find(avail, money.NGN); !ok || b.Amount.String() != "1500.50" {
		t.Fatalf("balances after = %+v", p.Balances)
	}
	if b, _ := p.Find(ledger.System(ledger.External), money.NGN); b.Amount.String() != "-1500.50" {
		t.Fatalf("external = %v", b.Amount)
	}

	// Same reference, same postings: a replay, no second movement.
	again, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "dep-1",
		Postings: ledger.Move(ledger.System(ledger.External), avail, ngn("1500.50"))})
	if err != nil || !again.Replayed || again.ID != p.ID {
		t.Fatalf("replay = %+v, %v", again, err)
	}
	// Same reference, other postings: refused.
	_, err = post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "dep-1",
		Postings: ledger.Move(ledger.System(ledger.External), avail, ngn("1"))})
	if !errors.Is(err, ledger.ErrReferenceConflict) {
		t.Fatalf("reused reference: %v", err)
	}
	// The same reference in the other environment is another transaction.
	if p2, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "live", Reference: "dep-1",
		Postings: ledger.Move(ledger.System(ledger.External), avail, ngn("2"))}); err != nil || p2.Replayed {
		t.Fatalf("live = %+v, %v", p2, err)
	}

	_, err = post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "spend-1",
		Description: "Payout", Postings: ledger.Move(avail, ledger.System(ledger.External), ngn("500.25"))})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ledger.GetBalance(ctx, pool, m, "sandbox", avail, money.NGN)
	if err != nil || b.Amount.String() != "1000.25" {
		t.Fatalf("balance = %v, %v", b.Amount, err)
	}
	if b, _ := ledger.GetBalance(ctx, pool, m, "live", avail, money.NGN); b.Amount.String() != "2.00" {
		t.Fatalf("live balance = %v", b.Amount)
	}
	if b, _ := ledger.GetBalance(ctx, pool, uuid.New(), "sandbox", avail, money.NGN); !b.Amount.IsZero() {
		t.Fatalf("other merchant sees %v", b.Amount)
	}
	entries, total, err := ledger.ListEntries(ctx, pool, ledger.EntryFilter{MerchantID: m, Environment: "sandbox",
		Owner: ledger.OwnerCustomer, OwnerID: c}, 10, 0)
	if err != nil || total != 2 || len(entries) != 2 {
		t.Fatalf("entries = %+v, %d, %v", entries, total, err)
	}
	if entries[0].Type() != "DEBIT" || entries[0].Amount.String() != "-500.25" || entries[0].BalanceAfter.String() != "1000.25" ||
		entries[0].Description != "Payout" || entries[0].Seq != 2 {
		t.Fatalf("newest entry = %+v", entries[0])
	}
	if entries[1].Type() != "CREDIT" || entries[1].Kind != "deposit.settle" || entries[1].Seq != 1 {
		t.Fatalf("oldest entry = %+v", entries[1])
	}
	bals, err := ledger.OwnerBalances(ctx, pool, m, "sandbox", ledger.OwnerCustomer, c)
	if err != nil || len(bals) != 1 || bals[0].Account != avail {
		t.Fatalf("owner balances = %+v, %v", bals, err)
	}
	mustVerify(t, pool)
}

func TestInsufficientBalanceLeavesTxUsable(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m := uuid.New()
	avail, pending := ledger.Merchant(m, ledger.Available), ledger.Merchant(m, ledger.Pending)
	paymentstest.Fund(t, pool, payments.Tenant{MerchantID: m, Environment: "sandbox"}, avail, money.MustParse(money.USDT, "10"))
	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "hold-1",
			Postings: ledger.Move(avail, pending, money.MustParse(money.USDT, "10.000001"))})
		var ib *ledger.InsufficientBalanceError
		if !errors.As(err, &ib) || ib.APICode() != "INSUFFICIENT_BALANCE" || ib.Balance != 10_000_000 {
			return fmt.Errorf("post = %v", err)
		}
		// The transaction is still usable: a smaller hold goes through in it.
		_, err = ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "hold-2",
			Postings: ledger.Move(avail, pending, money.MustParse(money.USDT, "4"))})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := ledger.GetBalance(ctx, pool, m, "sandbox", pending, money.USDT); b.Amount.String() != "4.000000" {
		t.Fatalf("pending = %v", b.Amount)
	}
	// Receivable accounts may go negative (a debt), others may not.
	if _, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "reversal-shortfall",
		Postings: ledger.Move(ledger.Merchant(m, ledger.Receivable), ledger.System(ledger.External), money.MustParse(money.USDT, "3"))}); err != nil {
		t.Fatalf("receivable below zero: %v", err)
	}
	mustVerify(t, pool)
}

func TestDatabaseRefusesNegativeBalance(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m, c := uuid.New(), uuid.New()
	paymentstest.Fund(t, pool, payments.Tenant{MerchantID: m, Environment: "sandbox"}, ledger.Customer(c, ledger.Available), ngn("5"))
	_, err := pool.Exec(ctx, `update ledger_accounts set balance = -1 where owner_type = 'customer'`)
	if err == nil || !strings.Contains(err.Error(), "ledger_accounts_non_negative") {
		t.Fatalf("raw SQL negative balance: %v", err)
	}
	_, err = pool.Exec(ctx, `update ledger_accounts set allow_negative = true where owner_type = 'customer'`)
	if err == nil || !strings.Contains(err.Error(), "ledger_accounts_negative_allowed_only") {
		t.Fatalf("raw SQL allow_negative on an available account: %v", err)
	}
	// System accounts may be negative.
	if _, err := pool.Exec(ctx, `update ledger_accounts set balance = balance - 1 where owner_type = 'system'`); err != nil {
		t.Fatal(err)
	}
}

// 100 parallel debits of 1.00 against a balance of 60.00: exactly 60 succeed, 40 get
// INSUFFICIENT_BALANCE, and the balance never goes negative.
func TestConcurrentDebitsNeverOverdraw(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	m := uuid.New()
	avail, pending := ledger.Merchant(m, ledger.Available), ledger.Merchant(m, ledger.Pending)
	paymentstest.Fund(t, pool, payments.Tenant{MerchantID: m, Environment: "sandbox"}, avail, money.MustParse(money.USDT, "60"))
	var ok, short atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := post(ctx, pool, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "w-" + strconv.Itoa(i),
				Postings: ledger.Move(avail, pending, money.MustParse(money.USDT, "1"))})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ledger.ErrInsufficientBalance):
				short.Add(1)
			default:
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ok.Load() != 60 || short.Load() != 40 {
		t.Fatalf("%d succeeded, %d insufficient; want 60 and 40", ok.Load(), short.Load())
	}
	if b, _ := ledger.GetBalance(ctx, pool, m, "sandbox", avail, money.USDT); !b.Amount.IsZero() {
		t.Fatalf("available = %v", b.Amount)
	}
	mustVerify(t, pool)
}

func seed(t *testing.T) uint64 {
	if s := os.Getenv("SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := uint64(time.Now().UnixNano())
	t.Logf("SEED=%d", n)
	return n
}

// A randomized workload (deposits, moves between customers, holds, releases, FX, replays,
// overdrafts refused) from parallel workers leaves Verify clean; then one corrupted entry
// makes it fail.
func TestVerifyAfterRandomWorkloadAndCorruption(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	s := seed(t)
	merchants := []uuid.UUID{uuid.New(), uuid.New()}
	customers := map[uuid.UUID][]uuid.UUID{}
	for _, m := range merchants {
		customers[m] = []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	}
	assets := []money.Asset{money.NGN, money.USDT}
	var wg sync.WaitGroup
	var posted, refused atomic.Int64
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s, uint64(w)))
			for i := 0; i < 60; i++ {
				m := merchants[rng.IntN(len(merchants))]
				env := []string{"sandbox", "live"}[rng.IntN(2)]
				cs := customers[m]
				a, b := ledger.Customer(cs[rng.IntN(len(cs))], ledger.Available), ledger.Customer(cs[rng.IntN(len(cs))], ledger.Available)
				asset := assets[rng.IntN(len(assets))]
				amt := money.New(asset, 1+rng.Int64N(50_000))
				ref := fmt.Sprintf("w%d-%d", w, i)
				var ps []ledger.Posting
				switch rng.IntN(5) {
				case 0, 1:
					ps = ledger.Move(ledger.System(ledger.External), a, amt)
				case 2:
					if a == b {
						continue
					}
					ps = ledger.Move(a, b, amt)
				case 3:
					ps = ledger.Move(a, ledger.Merchant(m, ledger.Pending), amt)
				case 4: // conversion NGN -> USDT through FX
					usdt, _ := money.Convert(money.New(money.NGN, amt.Minor), money.USDT, money.MustRate("0.000625"), money.HalfEven)
					if usdt.IsZero() {
						continue
					}
					ps = append(ledger.Move(a, ledger.System(ledger.FX), money.New(money.NGN, amt.Minor)),
						ledger.Move(ledger.System(ledger.FX), a, usdt)...)
				}
				tr := ledger.Transaction{MerchantID: m, Environment: env, Reference: ref, Postings: ps}
				_, err := post(ctx, pool, tr)
				switch {
				case err == nil:
					posted.Add(1)
					if rng.IntN(4) == 0 { // a retried post is a replay
						if p, err := post(ctx, pool, tr); err != nil || !p.Replayed {
							t.Errorf("replay: %+v %v", p, err)
						}
					}
				case errors.Is(err, ledger.ErrInsufficientBalance):
					refused.Add(1)
				default:
					t.Errorf("post: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d posted, %d refused for insufficient balance", posted.Load(), refused.Load())
	if posted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("workload too one-sided: %d posted, %d refused", posted.Load(), refused.Load())
	}
	mustVerify(t, pool)

	// Corrupt one entry: its transaction no longer sums to zero, its account's balance no
	// longer equals its entries, and its running balance breaks.
	if _, err := pool.Exec(ctx, `update ledger_entries set amount = amount + 1 where id = (select id from ledger_entries order by id limit 1)`); err != nil {
		t.Fatal(err)
	}
	vs, err := ledger.Verify(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, v := range vs {
		found[v.Check] = true
	}
	for _, want := range []string{"zero_sum", "balance_sum", "sequence"} {
		if !found[want] {
			t.Errorf("corruption not caught by %s: %v", want, vs)
		}
	}
}
