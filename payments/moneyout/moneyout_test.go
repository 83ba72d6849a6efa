package moneyout_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/paymentstest"
	"svc/persistence/postgres"
)

var errNotFound = errors.New("thing not found")

type thing struct {
	ID     uuid.UUID
	Status string
}

func scanThing(row pgx.Row) (thing, error) {
	var t thing
	err := row.Scan(&t.ID, &t.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, errNotFound
	}
	return t, err
}

// TestTable: Get scopes to the tenant (another tenant's record is not found) or reads by id
// alone; List pages newest first with the total, filtered, and counts past the last page.
func TestTable(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	if _, err := pool.Exec(ctx, `create table things (id uuid primary key, merchant_id uuid not null, environment text not null,
		status text not null, created_at timestamptz not null)`); err != nil {
		t.Fatal(err)
	}
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	other := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	base := time.Now().UTC()
	var ids []uuid.UUID
	for i := range 5 {
		id := uuid.New()
		ids = append(ids, id)
		if _, err := pool.Exec(ctx, `insert into things values ($1, $2, $3, $4, $5)`, id, tn.MerchantID, tn.Environment,
			[]string{"A", "B"}[i%2], base.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	tb := moneyout.Table[thing]{Name: "things", Cols: "id, status", Scan: scanThing, NotFound: errNotFound}
	if got, err := tb.Get(ctx, pool, &tn, ids[0]); err != nil || got.ID != ids[0] {
		t.Fatalf("Get: %+v %v", got, err)
	}
	if _, err := tb.Get(ctx, pool, &other, ids[0]); !errors.Is(err, errNotFound) {
		t.Fatalf("another tenant's: %v", err)
	}
	if got, err := tb.Get(ctx, pool, nil, ids[1]); err != nil || got.ID != ids[1] {
		t.Fatalf("by id alone: %+v %v", got, err)
	}
	for _, c := range []struct {
		where       string
		args        []any
		page, limit int
		want        []uuid.UUID
		total       int64
	}{
		{"", nil, 1, 2, []uuid.UUID{ids[4], ids[3]}, 5},
		{"", nil, 3, 2, []uuid.UUID{ids[0]}, 5},
		{"", nil, 4, 2, nil, 5},
		{"status = $3", []any{"A"}, 1, 10, []uuid.UUID{ids[4], ids[2], ids[0]}, 3},
		{"status = $3", []any{"B"}, 2, 10, nil, 2},
	} {
		got, total, err := tb.List(ctx, pool, tn, c.where, c.args, c.page, c.limit)
		if err != nil || total != c.total || fmt.Sprint(ids2(got)) != fmt.Sprint(c.want) {
			t.Errorf("List(%q %v page %d of %d) = %v total %d %v, want %v total %d", c.where, c.args, c.page, c.limit,
				ids2(got), total, err, c.want, c.total)
		}
	}
	if got, total, err := tb.List(ctx, pool, other, "", nil, 1, 10); err != nil || len(got) != 0 || total != 0 {
		t.Errorf("another tenant's list: %v %d %v", got, total, err)
	}
}

func ids2(ts []thing) []uuid.UUID {
	var out []uuid.UUID
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestFundsLegs: hold, settle, release and reverse move the owner's money as their names say,
// under "<ref>:<leg>", and a repeated leg moves nothing.
func TestFundsLegs(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	cust := uuid.New()
	usdt := func(n int64) money.Amount { return money.New(money.USDT, n) }
	for _, c := range []struct {
		name     string
		customer *uuid.UUID
	}{{"merchant", nil}, {"customer", &cust}} {
		t.Run(c.name, func(t *testing.T) {
			f := moneyout.Funds{Tenant: tn, Customer: c.customer, Amount: usdt(300), Ref: "thing:" + c.name, Kind: "thing"}
			g := f
			g.Ref = "other:" + c.name
			bal := func(p ledger.Purpose) int64 {
				b, err := ledger.GetBalance(ctx, pool, tn.MerchantID, tn.Environment, f.Account(p), money.USDT)
				if err != nil {
					t.Fatal(err)
				}
				return b.Amount.Minor
			}
			step := func(fn func(tx pgx.Tx) error) {
				if err := postgres.InTx(ctx, pool, fn); err != nil {
					t.Fatal(err)
				}
			}
			step(func(tx pgx.Tx) error { // fund the owner
				_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: tn.MerchantID, Environment: tn.Environment,
					Reference: "fund:" + c.name, Kind: "test", Description: "fund",
					Postings: ledger.Move(ledger.System(ledger.External), f.Account(ledger.Available), usdt(1000))})
				return err
			})
			for _, s := range []struct {
				leg                string
				do                 func(tx pgx.Tx) error
				available, pending int64
			}{
				{"hold", func(tx pgx.Tx) error { return f.Hold(ctx, tx, "hold") }, 700, 300},
				{"hold again", func(tx pgx.Tx) error { return f.Hold(ctx, tx, "hold") }, 700, 300},
				{"settle", func(tx pgx.Tx) error { _, err := f.Settle(ctx, tx, "settle"); return err }, 700, 0},
				{"reverse", func(tx pgx.Tx) error { _, err := f.Reverse(ctx, tx, "reverse"); return err }, 1000, 0},
				{"reverse again", func(tx pgx.Tx) error { _, err := f.Reverse(ctx, tx, "reverse"); return err }, 1000, 0},
				{"another's hold", func(tx pgx.Tx) error { return g.Hold(ctx, tx, "hold") }, 700, 300},
				{"release", func(tx pgx.Tx) error { _, err := g.Release(ctx, tx, "release"); return err }, 1000, 0},
			} {
				step(s.do)
				if a, p := bal(ledger.Available), bal(ledger.Pending); a != s.available || p != s.pending {
					t.Errorf("after %s: available %d pending %d, want %d %d", s.leg, a, p, s.available, s.pending)
				}
			}
		})
	}
}
