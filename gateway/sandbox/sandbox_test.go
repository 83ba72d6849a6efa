package sandbox_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"svc/gateway/gatewaytest"
	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
)

func wantCode(t testing.TB, r gatewaytest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Message != code {
		t.Fatalf("got %d %s (%s), want %d %s", r.Status, r.Message, r.Detail, status, code)
	}
}

func amountOf(t testing.TB, asset money.Asset, s *string) money.Amount {
	t.Helper()
	if s == nil {
		t.Fatal("no amount")
	}
	a, err := money.Parse(asset, *s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSandboxRoutesRefuseLiveKeysAndOtherMerchants(t *testing.T) {
	r := newRig(t)
	d := r.deposit(t, r.a.SandboxKey, 16000, false, nil, "SETTLED")
	for _, action := range []string{"reverse", "clear", "reject"} {
		path := "/v1/payments/sandbox/deposits/" + d.ID + "/" + action
		wantCode(t, r.srv.Do(t, "POST", path, r.a.LiveKey, nil), 403, "SANDBOX_ONLY")
		wantCode(t, r.srv.Do(t, "POST", path, r.b.LiveKey, map[string]string{"reason": "x"}), 403, "SANDBOX_ONLY")
		wantCode(t, r.srv.Do(t, "POST", path, r.b.SandboxKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+uuid.NewString()+"/"+action, r.a.SandboxKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/nope/"+action, r.a.SandboxKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "POST", path, "", nil), 401, "UNAUTHORIZED")
	}
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+d.ID+"/reverse", r.a.SandboxKey, map[string]any{"reason": 5}), 400, "VALIDATION_ERROR")
	// Nothing changed.
	if got := r.wait(t, r.a.SandboxKey, d.ID, "SETTLED"); got.Status != "SETTLED" {
		t.Fatal(got.Status)
	}
	if n := r.ledgerTxs(t, "deposit:"+d.ID+":reverse"); n != 0 {
		t.Fatalf("%d reversal postings after refused calls", n)
	}
	verify(t, r.pool)
}

// An NGN amount ending in .13 is refused at conversion: FAILED, deposit.failed, the NGN back
// with the sender, nothing credited.
func TestMagicFXFailure(t *testing.T) {
	r := newRig(t)
	m := r.a.ID
	d := r.deposit(t, r.a.SandboxKey, "5000.13", false, nil, "FAILED")
	if d.FailureReason == nil || !strings.HasPrefix(*d.FailureReason, "FX_FAILED") || d.SettledAmount != nil {
		t.Fatalf("%+v", d)
	}
	if r.events(t, m, events.DepositReceived, d.ID, "") != 1 || r.events(t, m, events.DepositFailed, d.ID, "FAILED") != 1 ||
		r.events(t, m, events.DepositPendingWithdrawal, d.ID, "") != 0 {
		t.Fatal("events")
	}
	if r.ledgerTxs(t, "deposit:"+d.ID+":return") != 1 || r.ledgerTxs(t, "deposit:"+d.ID+":convert") != 0 {
		t.Fatal("ledger: want the NGN returned and no conversion")
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDT); !b.IsZero() {
		t.Fatalf("merchant credited %s", b)
	}
	if b := r.balance(t, m, ledger.System("incoming"), money.NGN); !b.IsZero() {
		t.Fatalf("NGN left on incoming: %s", b)
	}
	// The same amount without .13 settles.
	r.deposit(t, r.a.SandboxKey, "5000.14", false, nil, "SETTLED")
	verify(t, r.pool)
}

// An on-chain settlement to the chain's rejected address fails: the crypto is unwound and the
// NGN returned.
func TestMagicChainRejectionOnDepositSettlement(t *testing.T) {
	r := newRig(t)
	m := r.a.ID
	for _, chain := range []providers.Chain{providers.Base, providers.Solana, providers.Tron, providers.Aptos} {
		d := r.deposit(t, r.a.SandboxKey, 16000, false, map[string]any{"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT",
			"chain": string(chain), "destination_address": providers.SendRejected(chain)}}, "FAILED")
		if d.FailureReason == nil || !strings.HasPrefix(*d.FailureReason, "SEND_FAILED") {
			t.Fatalf("%s: %+v", chain, d)
		}
		if r.events(t, m, events.DepositFailed, d.ID, "FAILED") != 1 || r.events(t, m, events.DepositSettled, d.ID, "") != 0 {
			t.Fatalf("%s: events", chain)
		}
	}
	if b := r.balance(t, m, ledger.System("outgoing"), money.USDT); !b.IsZero() {
		t.Fatalf("crypto left on outgoing: %s", b)
	}
	verify(t, r.pool)
}

// Reversal of a deposit credited to the merchant: debited back; the part the balance no
// longer covers is on the merchant's receivable account; repeating changes nothing.
func TestReverseMerchantBalanceWithShortfall(t *testing.T) {
	r := newRig(t)
	m, key := r.a.ID, r.a.SandboxKey
	d := r.deposit(t, key, 16000, false, nil, "SETTLED")
	got := amountOf(t, money.USDT, d.SettledAmount)
	avail := ledger.Merchant(m, ledger.Available)
	if b := r.balance(t, m, avail, money.USDT); b.Cmp(got) != 0 {
		t.Fatalf("credited %s, want %s", b, got)
	}
	left := money.New(money.USDT, 3_000_000)
	spent, _ := got.Sub(left)
	r.spend(t, m, avail, spent)

	path := "/v1/payments/sandbox/deposits/" + d.ID + "/reverse"
	out := decode[depositJSON](t, r.srv.Must(t, 200, "POST", path, key, map[string]string{"reason": "chargeback from the sender's bank"}))
	if out.Status != "REVERSED" || out.FailureReason == nil || !strings.Contains(*out.FailureReason, "chargeback") {
		t.Fatalf("%+v", out)
	}
	if b := r.balance(t, m, avail, money.USDT); !b.IsZero() {
		t.Fatalf("available after reversal %s", b)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Receivable), money.USDT); b.Cmp(spent.Neg()) != 0 {
		t.Fatalf("receivable %s, want %s", b, spent.Neg())
	}
	if r.events(t, m, events.DepositFailed, d.ID, "REVERSED") != 1 || r.events(t, m, events.CustomerBalanceRefunded, d.ID, "") != 0 {
		t.Fatal("events")
	}
	verify(t, r.pool)

	// Again: the same answer, nothing moves, no event; still audited.
	again := decode[depositJSON](t, r.srv.Must(t, 200, "POST", path, key, nil))
	if again.Status != "REVERSED" || r.ledgerTxs(t, "deposit:"+d.ID+":reverse") != 1 || r.events(t, m, events.DepositFailed, d.ID, "") != 1 {
		t.Fatalf("repeat changed something: %+v", again)
	}
	if n := r.audits(t, "deposit:"+d.ID, "deposit.reverse"); n != 2 {
		t.Fatalf("audit rows %d", n)
	}
	// Only SETTLED deposits reverse.
	f := r.deposit(t, key, 16000, true, nil, "FLAGGED")
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+f.ID+"/reverse", key, nil), 422, "INVALID_STATE")
	if got := r.wait(t, key, d.ID, "REVERSED"); got.SettledAt == nil {
		t.Fatal("settled_at lost")
	}
	verify(t, r.pool)
}

// Reversal of a deposit credited to a customer, many times at once: one reversal, the
// customer's balance debited, customer.balance.refunded once.
func TestReverseCustomerBalanceConcurrently(t *testing.T) {
	r := newRig(t)
	m, key := r.a.ID, r.a.SandboxKey
	c := r.customer(t, key, "payer@example.com")
	d := r.deposit(t, key, 32000, false, map[string]any{"customer_id": c}, "SETTLED")
	got := amountOf(t, money.USDT, d.SettledAmount)
	cust := ledger.Customer(uuid.MustParse(c), ledger.Available)
	if b := r.balance(t, m, cust, money.USDT); b.Cmp(got) != 0 {
		t.Fatalf("customer credited %s, want %s", b, got)
	}
	merchantBefore := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDT)

	const n = 12
	var wg sync.WaitGroup
	statuses := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+d.ID+"/reverse", key, map[string]string{"reason": "test"})
			if res.Status == 200 {
				statuses[i] = decode[depositJSON](t, res).Status
			} else {
				statuses[i] = res.Message
			}
		}(i)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != "REVERSED" {
			t.Fatalf("call %d: %s", i, s)
		}
	}
	if k := r.ledgerTxs(t, "deposit:"+d.ID+":reverse"); k != 1 {
		t.Fatalf("%d reversal postings", k)
	}
	if b := r.balance(t, m, cust, money.USDT); !b.IsZero() {
		t.Fatalf("customer balance %s", b)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Receivable), money.USDT); !b.IsZero() {
		t.Fatalf("receivable %s without a shortfall", b)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDT); b.Cmp(merchantBefore) != 0 {
		t.Fatal("the merchant's balance moved for a customer's deposit")
	}
	if r.events(t, m, events.CustomerBalanceRefunded, d.ID, "") != 1 || r.events(t, m, events.DepositFailed, d.ID, "REVERSED") != 1 {
		t.Fatal("events")
	}
	if k := r.audits(t, "deposit:"+d.ID, "deposit.reverse"); k != n {
		t.Fatalf("audit rows %d, want %d", k, n)
	}
	verify(t, r.pool)

	// A customer who spent part of it: the rest is debited and the shortfall is the merchant's.
	d2 := r.deposit(t, key, 16000, false, map[string]any{"customer_id": c}, "SETTLED")
	got2 := amountOf(t, money.USDT, d2.SettledAmount)
	half := money.New(money.USDT, got2.Minor/2)
	r.spend(t, m, cust, half)
	r.srv.Must(t, 200, "POST", "/v1/payments/sandbox/deposits/"+d2.ID+"/reverse", key, nil)
	rest, _ := got2.Sub(half)
	if b := r.balance(t, m, cust, money.USDT); !b.IsZero() {
		t.Fatalf("customer balance %s", b)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Receivable), money.USDT); b.Cmp(half.Neg()) != 0 {
		t.Fatalf("receivable %s, want -%s", b, half)
	}
	var amount string
	_ = r.pool.QueryRow(t.Context(), `select data->>'amount' from events where type = 'customer.balance.refunded' and data->>'deposit_id' = $1`, d2.ID).Scan(&amount)
	if amount != rest.String() {
		t.Fatalf("refunded event amount %s, want %s", amount, rest)
	}
	verify(t, r.pool)
}

// Compliance review: clear resumes the lifecycle to SETTLED, reject ends FAILED with the
// NGN returned; both idempotent under concurrency.
func TestReviewClearAndRejectConcurrently(t *testing.T) {
	r := newRig(t)
	m, key := r.a.ID, r.a.SandboxKey
	hammer := func(action, id string) []string {
		const n = 8
		out := make([]string, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res := r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+id+"/"+action, key, map[string]string{"reason": "reviewed"})
				if res.Status != 200 {
					out[i] = res.Message
					return
				}
				out[i] = decode[depositJSON](t, res).Status
			}(i)
		}
		wg.Wait()
		return out
	}

	f := r.deposit(t, key, 16000, true, nil, "FLAGGED")
	if r.events(t, m, events.DepositFlagged, f.ID, "FLAGGED") != 1 {
		t.Fatal("deposit.flagged")
	}
	for _, s := range hammer("clear", f.ID) {
		if s != "PENDING_FX" && s != "PENDING_WITHDRAWAL" && s != "SETTLED" {
			t.Fatalf("clear answered %s", s)
		}
	}
	settled := r.wait(t, key, f.ID, "SETTLED")
	if r.events(t, m, events.DepositSettled, f.ID, "") != 1 || r.events(t, m, events.DepositPendingWithdrawal, f.ID, "") != 1 {
		t.Fatal("events after clear")
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDT); b.Cmp(amountOf(t, money.USDT, settled.SettledAmount)) != 0 {
		t.Fatalf("merchant balance %s", b)
	}
	// Clearing again changes nothing.
	if again := decode[depositJSON](t, r.srv.Must(t, 200, "POST", "/v1/payments/sandbox/deposits/"+f.ID+"/clear", key, nil)); again.Status != "SETTLED" {
		t.Fatal(again.Status)
	}
	verify(t, r.pool)

	g := r.deposit(t, key, 16000, true, nil, "FLAGGED")
	for _, s := range hammer("reject", g.ID) {
		if s != "FAILED" {
			t.Fatalf("reject answered %s", s)
		}
	}
	failed := r.wait(t, key, g.ID, "FAILED")
	if failed.FailureReason == nil || !strings.HasPrefix(*failed.FailureReason, "REJECTED") {
		t.Fatalf("%+v", failed)
	}
	if r.ledgerTxs(t, "deposit:"+g.ID+":return") != 1 || r.events(t, m, events.DepositFailed, g.ID, "FAILED") != 1 {
		t.Fatal("reject: ledger or events")
	}
	if b := r.balance(t, m, ledger.System("incoming"), money.NGN); !b.IsZero() {
		t.Fatalf("NGN left on incoming: %s", b)
	}
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+g.ID+"/clear", key, nil), 422, "INVALID_STATE")
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits/"+g.ID+"/reverse", key, nil), 422, "INVALID_STATE")

	// Rejecting a deposit already credited reverses it.
	rev := decode[depositJSON](t, r.srv.Must(t, 200, "POST", "/v1/payments/sandbox/deposits/"+f.ID+"/reject", key, map[string]string{"reason": "late hit"}))
	if rev.Status != "REVERSED" || r.events(t, m, events.DepositFailed, f.ID, "REVERSED") != 1 {
		t.Fatalf("%+v", rev)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDT); !b.IsZero() {
		t.Fatalf("merchant balance %s after the reversal", b)
	}
	if r.audits(t, "deposit:"+g.ID, "deposit.reject") != 8 || r.audits(t, "deposit:"+f.ID, "deposit.clear") != 9 {
		t.Fatal("audit rows")
	}
	verify(t, r.pool)
}

// Tier 1 and tier 2 KYC failures in the sandbox (documented in docs/sandbox.md).
func TestMagicKYCFailures(t *testing.T) {
	r := newRig(t)
	key := r.a.SandboxKey
	c := r.customer(t, key, "kyc@example.com")
	var v struct {
		Status  string  `json:"status"`
		KYCTier string  `json:"kyc_tier"`
		Reason  *string `json:"reason"`
	}
	r.srv.Must(t, 200, "POST", "/v1/customers/"+c+"/tier1-verification", key, map[string]string{"bvn": "00012345678", "image_url": "https://x.test/a.jpg"}).Decode(t, &v)
	if v.Status != "REJECTED" || v.KYCTier != "TIER_0" || v.Reason == nil {
		t.Fatalf("tier 1: %+v", v)
	}
	r.srv.Must(t, 200, "POST", "/v1/customers/"+c+"/tier1-verification", key, map[string]string{"bvn": "12345678901", "image_url": "https://x.test/a.jpg"}).Decode(t, &v)
	if v.Status != "VERIFIED" || v.KYCTier != "TIER_1" {
		t.Fatalf("tier 1: %+v", v)
	}
	body := tier2Body()
	body["acting_as_intermediary"] = true
	r.srv.Must(t, 200, "POST", "/v1/customers/"+c+"/tier2-verification", key, body).Decode(t, &v)
	if v.Status != "REJECTED" || v.KYCTier != "TIER_1" {
		t.Fatalf("tier 2: %+v", v)
	}
	var n int
	_ = r.pool.QueryRow(t.Context(), `select count(*) from events where merchant_id = $1 and type = 'customer.tier2_rejected'`, r.a.ID).Scan(&n)
	if n != 1 {
		t.Fatalf("customer.tier2_rejected: %d", n)
	}
}

func tier2Body() map[string]any {
	return map[string]any{
		"residential_address": map[string]any{"street_line_1": "1 Marina", "city": "Lagos", "subdivision": "LA", "postal_code": "101001", "country": "NGA"},
		"nationality":         "NGA", "birth_date": "1990-04-01",
		"identifying_information": []any{map[string]any{"type": "passport", "issuing_country": "NGA", "number": "A123", "expiration": "2030-01-01",
			"image_front": "https://example.com/front.jpg"}},
		"source_of_funds": "salary", "account_purpose": "receive_salary", "expected_monthly_payments_usd": "0_4999",
		"acting_as_intermediary": false, "employment_status": "employed", "most_recent_occupation": "STEM",
		"documents": []any{map[string]any{"file": "https://example.com/bill.pdf", "purposes": []string{"proof_of_address"}}},
	}
}

// An ONCHAIN deposit's crypto has left: its reversal debits the merchant's balance, and what
// that does not cover (here all of it) is the merchant's receivable.
func TestReverseOnchainDeposit(t *testing.T) {
	r := newRig(t)
	m, key := r.a.ID, r.a.SandboxKey
	addr := "0x1111111111111111111111111111111111111111"
	d := r.deposit(t, key, 16000, false, map[string]any{"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDC",
		"chain": "POLYGON", "destination_address": addr}}, "SETTLED")
	got := amountOf(t, money.USDC, d.SettledAmount)
	out := decode[depositJSON](t, r.srv.Must(t, 200, "POST", "/v1/payments/sandbox/deposits/"+d.ID+"/reverse", key, nil))
	if out.Status != "REVERSED" || out.FailureReason == nil || *out.FailureReason != "REVERSED: sandbox simulation" {
		t.Fatalf("%+v", out)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Receivable), money.USDC); b.Cmp(got.Neg()) != 0 {
		t.Fatalf("receivable %s, want -%s", b, got)
	}
	if b := r.balance(t, m, ledger.Merchant(m, ledger.Available), money.USDC); !b.IsZero() {
		t.Fatalf("available %s", b)
	}
	if r.events(t, m, events.DepositFailed, d.ID, "REVERSED") != 1 {
		t.Fatal("deposit.failed REVERSED")
	}
	verify(t, r.pool)
}
