package treasury

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/recipients"
	"svc/payments/transfers"
)

// TestTreasuryHedgesTransfersConversions (issue 27 item 3): an NGN transfer sells the
// merchant's USDT to system:fx when the bank settles it, so the treasury sees the sale as
// an intent, nets it with the others into hedge orders on the book, and `svc ledger
// verify` reconciles it; a bank's reversal buys the USDT back the same way. A USD
// transfer (USDT out 1:1) touches no desk. Real transfers service, sandbox bank, real
// engine and PostgreSQL; priced from the book the maker keeps.
func TestTreasuryHedgesTransfersConversions(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	rec, inserter := paymentstest.Recorder(t, r.pool)
	svc := transfers.New(r.pool, transfers.Config{Deps: moneyout.Deps{Providers: providers.Default(providers.SandboxConfig{}),
		Events: rec, Jobs: inserter}, Prices: r.rates})
	tn := payments.Tenant{MerchantID: merchant, Environment: payments.Sandbox}
	paymentstest.Fund(t, r.pool, tn, ledger.Merchant(merchant, ledger.Available), money.New(money.USDT, 100_000*1_000_000))
	bank := transfers.Destination{Type: recipients.BankAccount, Details: recipients.Details{
		BankAccount: &recipients.Bank{BankCode: "058", AccountNumber: "0123456789"}}}

	var sold int64 // USDT the NGN transfers sold to system:fx
	var settled []transfers.Transfer
	for i, ngn := range []string{"250000.00", "1600000.00", "48000.00", "900000.00", "3200000.00", "160000.00"} {
		tr, err := svc.Create(ctx, tn, transfers.Request{Amount: money.MustParse(money.NGN, ngn), Reference: fmt.Sprintf("pay-%d", i),
			Destination: &bank})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Advance(ctx, tr.ID); err != nil {
			t.Fatal(err)
		}
		if tr, err = svc.Get(ctx, tn, tr.ID); err != nil || tr.Status != transfers.Settled {
			t.Fatalf("%+v %v", tr, err)
		}
		sold += tr.SourceAmount.Minor
		settled = append(settled, tr)
	}
	// A USD transfer: USDT out 1:1, no conversion.
	usd, err := svc.Create(ctx, tn, transfers.Request{Amount: money.MustParse(money.USD, "100.00"), Reference: "usd-1",
		Destination: &transfers.Destination{Type: recipients.USBankAccount, Details: recipients.Details{USBankAccount: &recipients.USBank{
			AccountOwnerName: "Ada", AccountNumber: "000123456789", RoutingNumber: "021000021", BankName: "Chase",
			AccountType: "checking", PayoutScheme: "ach", Address: &recipients.PostalAddress{Country: "USA"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Advance(ctx, usd.ID); err != nil {
		t.Fatal(err)
	}

	open, err := OpenPositions(ctx, r.pool, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if open[money.USDT] != -sold || len(open) != 1 {
		t.Fatalf("open positions %v, want USDT -%d (sell what the transfers sold to the desk) and nothing else", open, sold)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
		t.Fatal(err)
	}
	// One reversal by the bank: the NGN comes back, the desk buys the USDT back.
	back := settled[1]
	if err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		_, _, err := svc.ReverseTx(ctx, tx, back.ID, "account closed")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
		t.Fatal(err)
	}
	if open, err = OpenPositions(ctx, r.pool, "sandbox"); err != nil {
		t.Fatal(err)
	}
	if abs(open[money.USDT]) >= 10_000 { // one lot of 0.01
		t.Fatalf("USDT still open after hedging against the maker's ladder: %d", open[money.USDT])
	}
	recs := r.verify(t)
	if len(recs) != 1 || recs[0].Asset != money.USDT || recs[0].LedgerFX != sold-back.SourceAmount.Minor ||
		recs[0].Engine != -(sold-back.SourceAmount.Minor)-recs[0].InFlight {
		t.Fatalf("reconciliation %+v, want system:fx USDT %d traded on the book", recs, sold-back.SourceAmount.Minor)
	}
	engineOrders, rows := r.treasuryOrders(t)
	if engineOrders != rows || rows != 2 {
		t.Fatalf("7 transfers and a reversal became %d engine orders and %d rows, want one sell and one buy", engineOrders, rows)
	}
	// The merchant got exactly the transfers' prices: the reversed one's USDT back in full.
	want := 100_000*1_000_000 - sold + back.SourceAmount.Minor - usd.SourceAmount.Minor
	if got := paymentstest.Available(t, r.pool, tn, ledger.OwnerMerchant, merchant, money.USDT); got.Minor != want {
		t.Fatalf("merchant available %v, want %d", got, want)
	}
}
