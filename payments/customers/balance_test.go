package customers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// Issue 32 item 5: the customer's USD figure adds USD, USDT and USDC with checked arithmetic
// and the assets' places from payments/money, rounded down to the cent once; a sum beyond
// int64 is an error, never a wrapped (negative) balance.
func TestBalanceAddsUSDAssetsChecked(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := customers.NewService(pool, events.NewRecorder(inserter), providers.Default(providers.SandboxConfig{}), nil)
	credit := func(tn payments.Tenant, id uuid.UUID, a money.Amount) {
		t.Helper()
		if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: tn.MerchantID, Environment: tn.Environment,
				Reference: "test:" + uuid.NewString(), Kind: "test.fund", Description: "test funds",
				Postings: ledger.Move(ledger.System(ledger.External), ledger.Customer(id, ledger.Available), a)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		credits []money.Amount
		want    money.Amount
		err     error
	}{
		{"nothing", nil, money.Zero(money.USD), nil},
		{"USD, USDT and USDC at par, rounded down once", []money.Amount{money.MustParse(money.USD, "10.01"),
			money.MustParse(money.USDT, "0.004999"), money.MustParse(money.USDC, "0.005001")}, money.MustParse(money.USD, "10.02"), nil},
		{"NGN is not in the USD figure", []money.Amount{money.MustParse(money.NGN, "1000.00"), money.MustParse(money.USDT, "1.999999")},
			money.MustParse(money.USD, "1.99"), nil},
		// 10^15 cents is 10^19 micro-USD: past int64, which the old sum wrapped to a negative balance.
		{"a USD balance past int64 in micro-USD", []money.Amount{money.New(money.USD, 1_000_000_000_000_000)}, money.Amount{}, money.ErrOverflow},
		{"a sum past int64", []money.Amount{money.New(money.USDT, 5_000_000_000_000_000_000), money.New(money.USDC, 5_000_000_000_000_000_000)},
			money.Amount{}, money.ErrOverflow},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
			cu, err := svc.Create(ctx, tn, customers.CreateInput{Email: uuid.NewString()[:8] + "@example.test", FirstName: "Ada", LastName: "L"})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range c.credits {
				credit(tn, cu.ID, a)
			}
			b, err := svc.Balance(ctx, tn, cu.ID)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("balance %+v, err %v: want %v", b.USD, err, c.err)
				}
				return
			}
			if err != nil || b.USD != c.want {
				t.Fatalf("USD %v (%v), want %v", b.USD, err, c.want)
			}
		})
	}
}
