package partners_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/offramps"
	"svc/payments/partners"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/payments/recipients"
	"svc/payments/transfers"
)

// Money that comes back (issue 19): a payout the bank reverses after it settled is credited
// back to the merchant; money for no active account is refunded to its sender.

// moneyBack is a partners service over real transfers, with the sandbox bank and, when ps is
// given, Paystack (its contract server) as the live bank.
type moneyBack struct {
	pool *pgxpool.Pool
	svc  *partners.Service
	tfs  *transfers.Service
	ps   *paystacktest.Server
	bank *paystack.Client // the adapter on ps
}

func newMoneyBack(t *testing.T, withPaystack bool) *moneyBack {
	t.Helper()
	pool, _ := paymentstest.New(t)
	rec, inserter := paymentstest.Recorder(t, pool)
	envs := providers.Default(providers.SandboxConfig{})
	set := []partners.Partner{partners.SandboxBankPartner(secret), partners.SandboxCustodyPartner(secret)}
	m := &moneyBack{pool: pool}
	if withPaystack {
		m.ps, m.bank = paymentstest.Paystack(t, "sk_test_moneyback_0123456789", "dva.example.com")
		envs.Live.Bank = m.bank
		set = append(set, partners.PaystackPartner(m.bank))
	}
	m.tfs = transfers.New(pool, transfers.Config{Deps: moneyout.Deps{Providers: envs, Events: rec, Jobs: inserter}, Prices: paymentstest.USDTAt})
	var err error
	m.svc, err = partners.New(pool, partners.Config{Partners: set, Jobs: inserter, Events: rec, Providers: envs,
		Payouts: map[string]partners.PayoutAdvancer{"transfer": m.tfs.Advance},
		Reversals: map[string]partners.PayoutReverser{"transfer": func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (bool, error) {
			_, applied, err := m.tfs.ReverseTx(ctx, tx, id, reason)
			if errors.Is(err, transfers.ErrNotSettled) {
				return false, partners.ErrNotReversible
			}
			return applied, err
		}}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *moneyBack) fund(t *testing.T, tn payments.Tenant, micro int64) {
	t.Helper()
	paymentstest.Fund(t, m.pool, tn, ledger.Merchant(tn.MerchantID, ledger.Available), money.New(money.USDT, micro))
}

func (m *moneyBack) available(t *testing.T, tn payments.Tenant) money.Amount {
	t.Helper()
	return paymentstest.Available(t, m.pool, tn, ledger.OwnerMerchant, tn.MerchantID, money.USDT)
}

func (m *moneyBack) eventCount(t *testing.T, tn payments.Tenant, typ events.Type) int {
	t.Helper()
	var n int
	if err := m.pool.QueryRow(context.Background(), `select count(*) from events where merchant_id = $1 and environment = $2 and type = $3`,
		tn.MerchantID, tn.Environment, string(typ)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (m *moneyBack) verifyLedger(t *testing.T) {
	t.Helper()
	v, err := ledger.Verify(context.Background(), m.pool)
	if err != nil || len(v) != 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
}

func (m *moneyBack) transfer(t *testing.T, tn payments.Tenant, account string) transfers.Transfer {
	t.Helper()
	tr, err := m.tfs.Create(context.Background(), tn, transfers.Request{Amount: money.MustParse(money.NGN, "15920.00"), Reference: "pay-" + uuid.NewString(),
		Destination: &transfers.Destination{Type: recipients.BankAccount, Details: recipients.Details{
			BankAccount: &recipients.Bank{BankCode: "058", AccountNumber: account}}}})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func (m *moneyBack) deliver(t *testing.T, provider string, body []byte, sig string) (partners.Receipt, partners.Result) {
	t.Helper()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if provider == partners.Paystack {
		h.Set(paystack.SignatureHeader, sig)
	} else {
		h.Set(partners.SandboxSignatureHeader, sig)
	}
	rc, err := m.svc.Receive(context.Background(), provider, partners.Incoming{Header: h, Body: body, RemoteAddr: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.svc.Process(context.Background(), rc.ID)
	if err != nil {
		t.Fatal(err)
	}
	return rc, res
}

func TestReversalAfterSettlementCreditsTheMerchantBack(t *testing.T) {
	m := newMoneyBack(t, false)
	ctx := context.Background()
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	m.fund(t, tn, 100_000_000) // 100 USDT
	tr := m.transfer(t, tn, "0123456789")
	if tr.SourceAmount != money.New(money.USDT, 10_000_000) {
		t.Fatalf("source %v", tr.SourceAmount)
	}
	if _, err := m.tfs.Advance(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.tfs.Get(ctx, tn, tr.ID); got.Status != transfers.Settled || m.available(t, tn) != money.New(money.USDT, 90_000_000) {
		t.Fatalf("settled? %+v, available %v", got, m.available(t, tn))
	}
	reversal := func(id string) (partners.Receipt, partners.Result) {
		now := time.Now()
		body, sig, _ := partners.SandboxNotification(secret, id, partners.TypePayoutReversed, now, partners.SandboxPayout{
			Reference: "transfer:" + tr.ID.String(), ProviderReference: "sbx_po", Amount: 1_592_000, Currency: "NGN",
			FailureReason: "beneficiary account closed", At: stamp(now)})
		return m.deliver(t, partners.SandboxBank, body, sig)
	}

	_, res := reversal("rev_1")
	if res.Status != partners.Processed || !strings.Contains(res.Outcome, "credited back") {
		t.Fatalf("reversal: %+v", res)
	}
	got, _ := m.tfs.Get(ctx, tn, tr.ID)
	if got.Status != transfers.Failed || !strings.Contains(got.FailureReason, "reversed by the bank after settlement") ||
		!strings.Contains(got.FailureReason, "beneficiary account closed") || got.SettledAt == nil {
		t.Fatalf("transfer after the reversal: %+v", got)
	}
	if m.available(t, tn) != money.New(money.USDT, 100_000_000) {
		t.Fatalf("available %v: the 10 USDT debited must be back in full", m.available(t, tn))
	}
	if n := m.eventCount(t, tn, events.TransferFailed); n != 1 {
		t.Fatalf("transfer.failed events %d", n)
	}

	t.Run("the same notification again changes nothing", func(t *testing.T) {
		rc, res := reversal("rev_1")
		if !rc.Duplicate || res.Status != partners.Processed || m.available(t, tn) != money.New(money.USDT, 100_000_000) {
			t.Fatalf("%+v %+v", rc, res)
		}
	})
	t.Run("another notification of the same reversal credits nothing more", func(t *testing.T) {
		_, res := reversal("rev_2")
		if res.Status != partners.Processed || !strings.Contains(res.Outcome, "already FAILED") ||
			m.available(t, tn) != money.New(money.USDT, 100_000_000) || m.eventCount(t, tn, events.TransferFailed) != 1 {
			t.Fatalf("%+v, available %v", res, m.available(t, tn))
		}
	})
	m.verifyLedger(t)
}

func TestReversalThroughPaystackIsConfirmedFirst(t *testing.T) {
	m := newMoneyBack(t, true)
	ctx := context.Background()
	m.ps.AddAccount("058", "0123456789", "ADA LOVELACE")
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Live}
	m.fund(t, tn, 100_000_000)
	tr := m.transfer(t, tn, "0123456789")
	if _, err := m.tfs.Advance(ctx, tr.ID); err != nil { // submitted to Paystack
		t.Fatal(err)
	}
	ref, _ := paystack.EncodeReference("transfer:" + tr.ID.String())
	success, err := m.ps.Finish(ref, "success", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, res := m.deliver(t, partners.Paystack, success.Body, success.Signature); res.Status != partners.Processed {
		t.Fatalf("transfer.success: %+v", res)
	}
	if got, _ := m.tfs.Get(ctx, tn, tr.ID); got.Status != transfers.Settled {
		t.Fatalf("not settled: %+v", got)
	}

	// A transfer.reversed while Paystack's API still holds the transfer as success (the API
	// lagging its notification): nothing is credited, the job retries.
	var b map[string]any
	_ = json.Unmarshal(success.Body, &b)
	b["event"] = "transfer.reversed"
	early, _ := json.Marshal(b)
	h := http.Header{}
	h.Set(paystack.SignatureHeader, paystackSig(m.ps.Secret, early))
	rc, err := m.svc.Receive(ctx, partners.Paystack, partners.Incoming{Header: h, Body: early, RemoteAddr: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.svc.Process(ctx, rc.ID); err == nil || m.available(t, tn) != money.New(money.USDT, 90_000_000) {
		t.Fatalf("an unconfirmed reversal: %+v %v, available %v", res, err, m.available(t, tn))
	}

	reversed, err := m.ps.Finish(ref, "reversed", "Account closed")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.svc.Process(ctx, rc.ID); err != nil || res.Status != partners.Processed { // the job's retry
		t.Fatalf("the retry once Paystack holds it reversed: %+v %v", res, err)
	}
	got, _ := m.tfs.Get(ctx, tn, tr.ID)
	if got.Status != transfers.Failed || m.available(t, tn) != money.New(money.USDT, 100_000_000) || m.eventCount(t, tn, events.TransferFailed) != 1 {
		t.Fatalf("after the reversal: %+v, available %v", got, m.available(t, tn))
	}
	if rc2, res := m.deliver(t, partners.Paystack, reversed.Body, reversed.Signature); !rc2.Duplicate || res.Status != partners.Processed ||
		m.available(t, tn) != money.New(money.USDT, 100_000_000) {
		t.Fatalf("Paystack's own notification after: %+v %+v", rc2, res)
	}
	m.verifyLedger(t)
}

func paystackSig(secret string, body []byte) string {
	const hexdigits = "0123456789abcdef"
	sum := paystack.Sign(secret, body)
	out := make([]byte, 0, 2*len(sum))
	for _, c := range sum {
		out = append(out, hexdigits[c>>4], hexdigits[c&15])
	}
	return string(out)
}

func TestMoneyForNoAccountIsRefundedToTheSender(t *testing.T) {
	m := newMoneyBack(t, false)
	ctx := context.Background()
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "in_nobody", partners.TypeInboundTransfer, now, partners.SandboxInbound{
		Reference: "sbx_trf_nobody", BankCode: "999", AccountNumber: "0000000001", Amount: 1_000_000, Currency: "NGN", PaidAt: stamp(now),
		SenderName: "ADA LOVELACE"})
	rc, res := m.deliver(t, partners.SandboxBank, body, sig)
	if res.Status != partners.Rejected || res.DepositID != nil || !strings.Contains(res.Outcome, "returns it to the sender") {
		t.Fatalf("%+v", res)
	}
	r, err := m.svc.RefundOf(ctx, rc.ID)
	if err != nil || r.Status != partners.RefundPending || r.Amount != money.New(money.NGN, 1_000_000) || r.ProviderReference != "sbx_trf_nobody" ||
		r.MerchantID != nil || r.Provider != partners.SandboxBank {
		t.Fatalf("refund record %+v %v", r, err)
	}
	var queued int
	if err := m.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'partner_refund'`).Scan(&queued); err != nil || queued != 1 {
		t.Fatalf("refund jobs %d %v", queued, err)
	}
	if wait, err := m.svc.AdvanceRefund(ctx, r.ID); err != nil || wait != 0 {
		t.Fatalf("advance: %v %v", wait, err)
	}
	r, _ = m.svc.RefundOf(ctx, rc.ID)
	if r.Status != partners.RefundRefunded || !strings.HasPrefix(r.ProviderRefundID, "sbx_rfd_") || r.RefundedAt == nil {
		t.Fatalf("after the job: %+v", r)
	}
	if wait, err := m.svc.AdvanceRefund(ctx, r.ID); err != nil || wait != 0 {
		t.Fatalf("again: %v %v", wait, err)
	}
	if rc2, _ := m.deliver(t, partners.SandboxBank, body, sig); !rc2.Duplicate {
		t.Fatal("repeat not a duplicate")
	}
	var rows int
	if err := m.pool.QueryRow(ctx, `select count(*) from partner_refunds`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("refunds %d %v", rows, err)
	}
	m.verifyLedger(t)
}

func TestMoneyForNoAccountIsRefundedThroughPaystack(t *testing.T) {
	m := newMoneyBack(t, true)
	ctx := context.Background()
	// A dedicated account Paystack issued but that no onramp of ours holds (e.g. deleted here).
	va, err := m.bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "onramp:" + uuid.NewString(), AccountName: "Gone", Type: "PERMANENT"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.ps.Charge(va.AccountNumber, 300_000, paystacktest.Sender{Name: "MALLORY"})
	if err != nil {
		t.Fatal(err)
	}
	rc, res := m.deliver(t, partners.Paystack, n.Body, n.Signature)
	if res.Status != partners.Rejected || !strings.Contains(res.Outcome, "returns it to the sender") {
		t.Fatalf("%+v", res)
	}
	r, err := m.svc.RefundOf(ctx, rc.ID)
	if err != nil {
		t.Fatal(err)
	}
	m.ps.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateRefund, Times: 1, Status: 502, After: true}) // a lost answer
	if wait, err := m.svc.AdvanceRefund(ctx, r.ID); err != nil || wait <= 0 {
		t.Fatalf("advance: %v %v", wait, err)
	}
	r, _ = m.svc.RefundOf(ctx, rc.ID)
	if r.Status != partners.RefundSubmitted || r.ProviderRefundID == "" || len(m.ps.Refunds()) != 1 || m.ps.Refunds()[0].Amount != 300_000 {
		t.Fatalf("submitted: %+v, Paystack holds %+v", r, m.ps.Refunds())
	}
	if _, err := m.svc.AdvanceRefund(ctx, r.ID); err != nil || len(m.ps.Refunds()) != 1 {
		t.Fatalf("asking again: %v, %d refunds", err, len(m.ps.Refunds()))
	}
	processed, err := m.ps.FinishRefund(m.ps.Refunds()[0].Reference, "processed")
	if err != nil {
		t.Fatal(err)
	}
	// Paystack's refund.processed only wakes the refund's job (one advancer per refund, issue
	// 32): the notification itself asks nothing and moves nothing.
	var woken int
	if err := m.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'partner_refund' and args->>'id' = $1`, r.ID.String()).
		Scan(&woken); err != nil {
		t.Fatal(err)
	}
	if _, res := m.deliver(t, partners.Paystack, processed.Body, processed.Signature); res.Status != partners.Processed ||
		!strings.Contains(res.Outcome, "its job asks the partner") {
		t.Fatalf("refund.processed: %+v", res)
	}
	var after int
	if err := m.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'partner_refund' and args->>'id' = $1`, r.ID.String()).
		Scan(&after); err != nil || after != woken+1 {
		t.Fatalf("refund jobs %d -> %d %v: the notification must wake the job", woken, after, err)
	}
	if r, _ = m.svc.RefundOf(ctx, rc.ID); r.Status != partners.RefundSubmitted {
		t.Fatalf("the notification advanced the refund itself: %+v", r)
	}
	if _, err := m.svc.AdvanceRefund(ctx, r.ID); err != nil { // the woken job's run
		t.Fatal(err)
	}
	if r, _ = m.svc.RefundOf(ctx, rc.ID); r.Status != partners.RefundRefunded || len(m.ps.Refunds()) != 1 {
		t.Fatalf("refunded: %+v", r)
	}
}

func TestReversalOfASettledOfframpPayoutCreditsTheCustomer(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	rec, inserter := paymentstest.Recorder(t, pool)
	envs := providers.Default(providers.SandboxConfig{})
	ofs := offramps.New(pool, offramps.Config{Deps: moneyout.Deps{Providers: envs, Events: rec, Jobs: inserter}})
	svc, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.SandboxBankPartner(secret)}, Jobs: inserter, Events: rec,
		Providers: envs, Payouts: map[string]partners.PayoutAdvancer{"payout": ofs.AdvancePayout},
		Reversals: map[string]partners.PayoutReverser{"payout": func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (bool, error) {
			return ofs.ReversePayoutTx(ctx, tx, id, reason)
		}}})
	if err != nil {
		t.Fatal(err)
	}
	merchant, customer, offramp, deposit, payout := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	// A settled offramp deposit whose NGN payout settled (as the offramp's jobs leave them).
	if _, err := pool.Exec(ctx, `insert into deposits (id, merchant_id, environment, type, status, offramp_id, customer_id, amount,
		currency, settlement_mode, asset, chain, destination_address, price, settled_amount, tx_hash, payment_reference, created_at, updated_at, settled_at)
		values ($1, $2, 'sandbox', 'CRYPTO_DEPOSIT', 'SETTLED', $3, $4, 10000000, 'USDT', 'NGN_PAYOUT', 'USDT', 'BASE', '0xabc', 159200, 10000000,
			'0xhash', $5, now(), now(), now())`, deposit, merchant, offramp, customer, "offramp:"+offramp.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into payouts (id, merchant_id, environment, source_type, source_id, deposit_id, customer_id,
		amount, currency, status, bank_code, account_number, account_name, provider_reference, created_at, updated_at, settled_at)
		values ($1, $2, 'sandbox', 'offramp', $3, $4, $5, 1592000, 'NGN', 'SETTLED', '058', '0123456789', 'ADA LOVELACE', 'sbx_po', now(), now(), now())`,
		payout, merchant, offramp, deposit, customer); err != nil {
		t.Fatal(err)
	}
	reversal := func(id string) partners.Result {
		now := time.Now()
		body, sig, _ := partners.SandboxNotification(secret, id, partners.TypePayoutReversed, now, partners.SandboxPayout{
			Reference: "payout:" + payout.String(), ProviderReference: "sbx_po", Amount: 1_592_000, Currency: "NGN", At: stamp(now)})
		rc, err := svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Process(ctx, rc.ID)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := reversal("prev_1"); res.Status != partners.Processed || !strings.Contains(res.Outcome, "credited back") {
		t.Fatalf("%+v", res)
	}
	if res := reversal("prev_2"); res.Status != partners.Processed || !strings.Contains(res.Outcome, "already FAILED") {
		t.Fatalf("second: %+v", res)
	}
	var pst, dst string
	if err := pool.QueryRow(ctx, `select p.status, d.status from payouts p join deposits d on d.id = p.deposit_id where p.id = $1`, payout).Scan(&pst, &dst); err != nil ||
		pst != "FAILED" || dst != "REVERSED" {
		t.Fatalf("payout %s deposit %s %v", pst, dst, err)
	}
	// The deposit's event: deposit.failed with status REVERSED (the spec has no deposit.reversed).
	var failed int
	if err := pool.QueryRow(ctx, `select count(*) from events where type = 'deposit.failed' and merchant_id = $1
		and data->>'status' = 'REVERSED' and data->>'id' = $2`, merchant, deposit.String()).Scan(&failed); err != nil || failed != 1 {
		t.Fatalf("deposit.failed REVERSED events %d %v", failed, err)
	}
	bs, err := ledger.OwnerBalances(ctx, pool, merchant, "sandbox", ledger.OwnerCustomer, customer)
	if err != nil || len(bs) != 1 || bs[0].Amount != money.New(money.NGN, 1_592_000) || bs[0].Account.Purpose != ledger.Available {
		t.Fatalf("customer balances %+v %v", bs, err)
	}
	var credited int
	if err := pool.QueryRow(ctx, `select count(*) from events where type = 'customer.balance.credited' and merchant_id = $1`, merchant).Scan(&credited); err != nil || credited != 1 {
		t.Fatalf("customer.balance.credited %d %v", credited, err)
	}
	if v, err := ledger.Verify(ctx, pool); err != nil || len(v) != 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
}

func TestConcurrentRunsOfOneReversalCreditOnce(t *testing.T) {
	m := newMoneyBack(t, false)
	ctx := context.Background()
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	m.fund(t, tn, 100_000_000)
	tr := m.transfer(t, tn, "0123456789")
	if _, err := m.tfs.Advance(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "rev_race", partners.TypePayoutReversed, now, partners.SandboxPayout{
		Reference: "transfer:" + tr.ID.String(), ProviderReference: "sbx_po", Amount: 1_592_000, Currency: "NGN", At: stamp(now)})
	rc, err := m.svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	if err := paymentstest.Race(8, func(int) error {
		if res, err := m.svc.Process(ctx, rc.ID); err != nil || res.Status != partners.Processed {
			return fmt.Errorf("%+v %v", res, err)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if m.available(t, tn) != money.New(money.USDT, 100_000_000) || m.eventCount(t, tn, events.TransferFailed) != 1 {
		t.Fatalf("available %v, transfer.failed %d: credited more than once?", m.available(t, tn), m.eventCount(t, tn, events.TransferFailed))
	}
	m.verifyLedger(t)
}
