package transfers_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/recipients"
	"svc/payments/transfers"
)

// Issue 32 item 4: in live, a transfer the configured bank partner cannot pay (Paystack pays
// the NGN rail only) is refused at creation with nothing written or debited, instead of being
// accepted (201, debited) and failed by the payout job.
func TestLiveTransferOnARailThePartnerCannotPayIsRefusedUpFront(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	ps, c := paymentstest.Paystack(t, "sk_test_refuse_0123456789", "dva.example.com")
	ps.AddAccount("058", "0123456789", "ADA LOVELACE")
	rec, inserter := paymentstest.Recorder(t, pool)
	envs := providers.Default(providers.SandboxConfig{})
	envs.Live.Bank = c
	svc := transfers.New(pool, transfers.Config{Deps: moneyout.Deps{Providers: envs, Events: rec, Jobs: inserter}, Prices: paymentstest.USDTAt})

	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Live}
	paymentstest.Fund(t, pool, tn, ledger.Merchant(tn.MerchantID, ledger.Available), money.New(money.USDT, 1_000_000_000))
	addr := &recipients.PostalAddress{Country: "USA"}
	bic := "DEUTDEFF"
	usd := money.MustParse(money.USD, "100.00")
	refused := []struct {
		name string
		dest recipients.Details
		typ  string
	}{
		{"US ACH", recipients.Details{USBankAccount: &recipients.USBank{AccountOwnerName: "Ada", AccountNumber: "000123456789",
			RoutingNumber: "021000021", BankName: "Chase", AccountType: "checking", PayoutScheme: "ach", Address: addr}}, recipients.USBankAccount},
		{"US wire", recipients.Details{USBankAccount: &recipients.USBank{AccountOwnerName: "Ada", AccountNumber: "000123456789",
			RoutingNumber: "021000021", BankName: "Chase", AccountType: "checking", PayoutScheme: "wire", Address: addr}}, recipients.USBankAccount},
		{"SWIFT", recipients.Details{SWIFTBankAccount: &recipients.SWIFT{AccountOwnerName: "Ada GmbH", AccountOwnerType: "business",
			AccountCountry: "DEU", IBAN: "DE89370400440532013000", BIC: &bic, Category: "supplier",
			PurposeOfFunds: []string{"invoice_for_goods_and_services"}, ShortBusinessDescription: "parts",
			Address: &recipients.PostalAddress{Country: "DEU"}, BankAddress: &recipients.PostalAddress{Country: "DEU"}}}, recipients.SWIFTBankAccount},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused with nothing debited", func(t *testing.T) {
			_, err := svc.Create(ctx, tn, transfers.Request{Amount: usd, Reference: "us-" + uuid.NewString(),
				Destination: &transfers.Destination{Type: c.typ, Details: c.dest}})
			var ue *providers.UnsupportedError
			if !errors.As(err, &ue) || ue.APICode() != "NOT_SUPPORTED" {
				t.Fatalf("create: %v, want *providers.UnsupportedError", err)
			}
			var rows, jobsQueued int
			if err := pool.QueryRow(ctx, `select (select count(*) from transfers), (select count(*) from river_job)`).Scan(&rows, &jobsQueued); err != nil {
				t.Fatal(err)
			}
			if rows != 0 || jobsQueued != 0 || paymentstest.Available(t, pool, tn, ledger.OwnerMerchant, tn.MerchantID, money.USDT) != money.New(money.USDT, 1_000_000_000) {
				t.Fatalf("written: %d transfers, %d jobs, available %v", rows, jobsQueued, paymentstest.Available(t, pool, tn, ledger.OwnerMerchant, tn.MerchantID, money.USDT))
			}
		})
	}
	t.Run("an NGN transfer through the same partner is accepted", func(t *testing.T) {
		tr, err := svc.Create(ctx, tn, transfers.Request{Amount: money.MustParse(money.NGN, "15920.00"), Reference: "ngn-1",
			Destination: &transfers.Destination{Type: recipients.BankAccount, Details: recipients.Details{
				BankAccount: &recipients.Bank{BankCode: "058", AccountNumber: "0123456789"}}}})
		if err != nil || tr.Status != transfers.Processing {
			t.Fatalf("%+v %v", tr, err)
		}
	})
	t.Run("no bank partner at all is 503 PROVIDER_UNAVAILABLE", func(t *testing.T) {
		none := transfers.New(pool, transfers.Config{Deps: moneyout.Deps{Providers: providers.Default(providers.SandboxConfig{}),
			Events: rec, Jobs: inserter}, Prices: paymentstest.USDTAt})
		_, err := none.Create(ctx, tn, transfers.Request{Amount: usd, Reference: "none-1",
			Destination: &transfers.Destination{Type: recipients.USBankAccount, Details: refused[0].dest}})
		if !errors.Is(err, providers.ErrProviderUnavailable) {
			t.Fatalf("%v", err)
		}
	})
}
