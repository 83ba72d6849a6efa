package customers_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/customers"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/payments/providers"
)

// Issue 32 item 5: the customer's USD figure adds USD, USDT and USDC with checked arithmetic
// and the assets' places from payments/money, rounded down to the cent once; a sum beyond
// int64 is an error, never a wrapped (negative) balance.
func TestBalanceAddsUSDAssetsChecked(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	rec, _ := paymentstest.Recorder(t, pool)
	svc := customers.NewService(pool, rec, providers.Default(providers.SandboxConfig{}), nil)
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
				paymentstest.Fund(t, pool, tn, ledger.Customer(cu.ID, ledger.Available), a)
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
