package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/gateway/auth/authtest"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres"
)

// TestLiveMoneyComesBackThroughPaystack runs svcd in live mode against the Paystack contract
// server (real PostgreSQL, real HTTP both ways) through the money that comes back (issue 19):
// an NGN transfer settled by transfer.success and then reversed by the bank
// (transfer.reversed) ends FAILED with the merchant's USDT credited back and transfer.failed
// delivered; money into a dedicated account no onramp holds is refunded through Paystack's
// Refund API by the durable job and recorded REFUNDED on refund.processed; and a merchant's sandbox funding credit is told to the merchant
// (merchant.balance.credited). The ledger verifies clean after all of it.
func TestLiveMoneyComesBackThroughPaystack(t *testing.T) {
	sv := startLiveSvcd(t, "sk_test_contract_moneyback_0123", strings.Repeat("ab", 32))
	pool, ps, base, hooks := sv.pool, sv.ps, sv.base, sv.hooks
	ctx := context.Background()
	ps.AddAccount("058", "0123456789", "ADA LOVELACE")
	c := client{t: t, base: base}
	m := authtest.New(t, pool)
	c.must(201, "POST", "/v1/webhooks/endpoints", m.LiveKey, map[string]any{"url": sv.hookURL + "/live"}, nil)
	c.must(201, "POST", "/v1/webhooks/endpoints", m.SandboxKey, map[string]any{"url": sv.hookURL + "/sandbox"}, nil)
	events := base + "/v1/partners/paystack/events"
	deliver := func(what string, n paystacktest.Notification) {
		t.Helper()
		if status, err := paystacktest.Deliver(ctx, http.DefaultClient, events, n); err != nil || status != 200 {
			t.Fatalf("%s: %d %v", what, status, err)
		}
	}

	// 1. A transfer settled, then reversed by the bank.
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m.ID, Environment: "live", Reference: "test:fund", Kind: "test.fund",
			Description: "test funds", Postings: ledger.Move(ledger.System(ledger.External), ledger.Merchant(m.ID, ledger.Available), money.New(money.USDT, 1_000_000_000))})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	type balanceJSON struct {
		Available string `json:"available"`
	}
	var bal balanceJSON
	c.must(200, "GET", "/v1/payments/merchant/balance", m.LiveKey, nil, &bal)
	before := bal.Available
	var tr struct {
		ID            string `json:"id"`
		Status        string `json:"status"`
		FailureReason string `json:"failure_reason"`
	}
	c.must(201, "POST", "/v1/payments/transfers", m.LiveKey, map[string]any{"currency": "NGN", "amount": "15000.00", "reference": "pay-ada-rev",
		"destination": map[string]any{"type": "BANK_ACCOUNT", "bank_account": map[string]any{"bank_code": "058", "account_number": "0123456789"}}}, &tr)
	ref, _ := paystack.EncodeReference("transfer:" + tr.ID)
	eventually(t, "Paystack holds the transfer", func() bool { _, ok := ps.Transfer(ref); return ok })
	success, err := ps.Finish(ref, "success", "")
	if err != nil {
		t.Fatal(err)
	}
	deliver("transfer.success", success)
	eventually(t, "the transfer settles", func() bool {
		c.must(200, "GET", "/v1/payments/transfers/"+tr.ID, m.LiveKey, nil, &tr)
		return tr.Status == "SETTLED"
	})
	c.must(200, "GET", "/v1/payments/merchant/balance", m.LiveKey, nil, &bal)
	if bal.Available == before {
		t.Fatalf("the settled transfer debited nothing: %s", bal.Available)
	}
	reversed, err := ps.Finish(ref, "reversed", "Beneficiary account closed")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // at least once
		deliver("transfer.reversed", reversed)
	}
	eventually(t, "the reversed transfer is FAILED", func() bool {
		c.must(200, "GET", "/v1/payments/transfers/"+tr.ID, m.LiveKey, nil, &tr)
		return tr.Status == "FAILED"
	})
	if !strings.Contains(tr.FailureReason, "reversed by the bank after settlement") {
		t.Fatalf("failure_reason %q", tr.FailureReason)
	}
	c.must(200, "GET", "/v1/payments/merchant/balance", m.LiveKey, nil, &bal)
	if bal.Available != before {
		t.Fatalf("available %s after the reversal, %s before the transfer: not credited back in full", bal.Available, before)
	}
	eventually(t, "transfer.failed reaches the merchant", func() bool { return hooks.has("transfer.failed") })

	// 2. Money into a Paystack dedicated account no onramp of ours holds: refunded.
	pc, err := paystack.New(paystack.Config{SecretKey: ps.Secret, BaseURL: ps.URL, CustomerEmailDomain: "dva.example.com",
		Phone: "+2348000000000", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	va, err := pc.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "onramp:" + uuid.NewString(), AccountName: "Gone", Type: "PERMANENT"})
	if err != nil {
		t.Fatal(err)
	}
	stray, err := ps.Charge(va.AccountNumber, 420_000, paystacktest.Sender{Name: "GRACE HOPPER", Bank: "Zenith Bank", AccountNumber: "2233445566"})
	if err != nil {
		t.Fatal(err)
	}
	deliver("charge.success for no account", stray)
	eventually(t, "Paystack holds the refund", func() bool { rs := ps.Refunds(); return len(rs) == 1 && rs[0].Amount == 420_000 })
	var status, outcome, refund string
	eventually(t, "the refund is SUBMITTED", func() bool {
		_ = pool.QueryRow(ctx, `select e.status, e.outcome, r.status from partner_events e join partner_refunds r on r.partner_event_id = e.id
			where e.body = $1`, stray.Body).Scan(&status, &outcome, &refund)
		return refund == "SUBMITTED"
	})
	if status != "REJECTED" || !strings.Contains(outcome, "returns it to the sender") {
		t.Fatalf("stored notification %s: %s", status, outcome)
	}
	processed, err := ps.FinishRefund(ps.Refunds()[0].Reference, "processed")
	if err != nil {
		t.Fatal(err)
	}
	deliver("refund.processed", processed)
	eventually(t, "the refund is REFUNDED", func() bool {
		_ = pool.QueryRow(ctx, `select r.status from partner_events e join partner_refunds r on r.partner_event_id = e.id
			where e.body = $1`, stray.Body).Scan(&refund)
		return refund == "REFUNDED"
	})
	if len(ps.Refunds()) != 1 {
		t.Fatalf("Paystack made %d refunds", len(ps.Refunds()))
	}

	// 2b. A second payment into a TEMPORARY onramp already paid (INACTIVE): refunded too,
	// recorded against the merchant and the onramp.
	var on struct {
		ID            string `json:"id"`
		AccountNumber string `json:"accountNumber"`
	}
	c.must(201, "POST", "/v1/payments/onramps", m.LiveKey, map[string]any{"type": "TEMPORARY", "amount": "20000"}, &on)
	paid, err := ps.Charge(on.AccountNumber, 2_000_000, paystacktest.Sender{Name: "ADA LOVELACE"})
	if err != nil {
		t.Fatal(err)
	}
	deliver("charge.success into the onramp", paid)
	var onStatus string
	eventually(t, "the onramp's deposit is received", func() bool {
		_ = pool.QueryRow(ctx, `select status from partner_events where body = $1`, paid.Body).Scan(&onStatus)
		return onStatus == "PROCESSED"
	})
	again, err := ps.Charge(on.AccountNumber, 2_000_000, paystacktest.Sender{Name: "ADA LOVELACE"})
	if err != nil {
		t.Fatal(err)
	}
	deliver("charge.success into the paid onramp", again)
	var refundMerchant, refundOnramp string
	eventually(t, "the second payment is refunded against the merchant's onramp", func() bool {
		_ = pool.QueryRow(ctx, `select r.merchant_id::text, r.onramp_id::text from partner_events e
			join partner_refunds r on r.partner_event_id = e.id where e.body = $1`, again.Body).Scan(&refundMerchant, &refundOnramp)
		return refundOnramp == on.ID
	})
	if refundMerchant != m.ID.String() {
		t.Fatalf("refund of the inactive onramp's money recorded for merchant %s", refundMerchant)
	}
	eventually(t, "Paystack holds the second refund", func() bool { return len(ps.Refunds()) == 2 })

	// 3. The merchant's sandbox funding address credited: merchant.balance.credited.
	var funding struct {
		Addresses []struct {
			Chain   string `json:"chain"`
			Asset   string `json:"asset"`
			Address string `json:"address"`
		} `json:"addresses"`
	}
	c.must(200, "GET", "/v1/payments/merchant/funding", m.SandboxKey, nil, &funding)
	if len(funding.Addresses) == 0 {
		t.Fatal("no funding address")
	}
	f := funding.Addresses[0]
	var sim struct {
		Status string `json:"status"`
	}
	c.must(201, "POST", "/v1/payments/sandbox/crypto-deposits", m.SandboxKey, map[string]any{"chain": f.Chain, "asset": f.Asset,
		"address": f.Address, "amount": "12.5"}, &sim)
	if sim.Status != "PROCESSED" {
		t.Fatalf("funding simulation %+v", sim)
	}
	eventually(t, "merchant.balance.credited reaches the merchant", func() bool { return hooks.has("merchant.balance.credited") })

	if v, err := ledger.Verify(ctx, pool); err != nil || len(v) != 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
	if err := sv.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
}
