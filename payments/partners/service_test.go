package partners_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
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
)

type harness struct {
	pool     *pgxpool.Pool
	svc      *partners.Service
	envs     providers.Environments
	mu       sync.Mutex
	advanced []uuid.UUID
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	pool, _ := paymentstest.New(t)
	rec, inserter := paymentstest.Recorder(t, pool)
	h := &harness{pool: pool, envs: providers.Default(providers.SandboxConfig{})}
	advance := func(_ context.Context, id uuid.UUID) (time.Duration, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.advanced = append(h.advanced, id)
		return 0, nil
	}
	var err error
	h.svc, err = partners.New(pool, partners.Config{
		Partners: []partners.Partner{partners.SandboxBankPartner(secret), partners.SandboxCustodyPartner(secret)},
		Jobs:     inserter, Events: rec, Providers: h.envs,
		Offramps: offramps.New(pool, offramps.Config{Deps: moneyout.Deps{Providers: h.envs, Events: rec, Jobs: inserter}}),
		Payouts:  map[string]partners.PayoutAdvancer{"payout": advance, "transfer": advance},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func incoming(body []byte, sig string) partners.Incoming {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer must-not-be-stored")
	if sig != "" {
		h.Set(partners.SandboxSignatureHeader, sig)
	}
	return partners.Incoming{Header: h, Body: body, RemoteAddr: "127.0.0.1"}
}

// deliver receives a signed custody notification and processes it at once, as its job would.
func (h *harness) deliver(t *testing.T, body []byte, sig string) partners.Result {
	t.Helper()
	ctx := context.Background()
	r, err := h.svc.Receive(ctx, partners.SandboxCustody, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.svc.Process(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// count is how many notifications are stored.
func (h *harness) count(t *testing.T) int {
	return h.scalar(t, `select count(*) from partner_events`)
}

// queued is how many notification jobs are queued.
func (h *harness) queued(t *testing.T) int {
	return h.scalar(t, `select count(*) from river_job where kind = 'partner_event'`)
}

func (h *harness) scalar(t *testing.T, sql string) int {
	t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReceiveStoresOnceAndRefusesForgeries(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "evt_"+uuid.NewString(), partners.TypePayoutSettled, now,
		partners.SandboxPayout{Reference: "transfer:" + uuid.NewString(), Amount: 100, Currency: "NGN", At: stamp(now)})

	if _, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(body, partners.SandboxSign("forged", body))); !errors.Is(err, partners.ErrBadSignature) {
		t.Fatalf("forged: %v", err)
	}
	if _, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(body, "")); !errors.Is(err, partners.ErrBadSignature) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := h.svc.Receive(ctx, "acme-bank", incoming(body, sig)); !errors.Is(err, partners.ErrUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	if n := h.count(t); n != 0 {
		t.Fatalf("refused notifications stored: %d rows", n)
	}

	r1, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil || r1.Status != partners.Received || r1.Duplicate {
		t.Fatalf("first: %+v %v", r1, err)
	}
	r2, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil || !r2.Duplicate || r2.ID != r1.ID {
		t.Fatalf("repeat: %+v %v", r2, err)
	}
	if h.count(t) != 1 || h.queued(t) != 1 {
		t.Fatalf("rows %d, jobs %d; want 1 and 1", h.count(t), h.queued(t))
	}
	var stored []byte
	var headers map[string]string
	if err := h.pool.QueryRow(ctx, `select body, headers from partner_events where id = $1`, r1.ID).Scan(&stored, &headers); err != nil {
		t.Fatal(err)
	}
	if string(stored) != string(body) || headers[partners.SandboxSignatureHeader] != sig || headers["Authorization"] != "" {
		t.Fatalf("stored body %q headers %v", stored, headers)
	}

	// Processing advances the transfer once, however often it runs.
	for range 3 {
		res, err := h.svc.Process(ctx, r1.ID)
		if err != nil || res.Status != partners.Processed {
			t.Fatalf("process: %+v %v", res, err)
		}
	}
	if len(h.advanced) != 1 {
		t.Fatalf("advanced %d times", len(h.advanced))
	}
}

func TestReceiveMalformedAndIgnored(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	bad := []byte(`{"id":"e1","type":"inbound_transfer","data":{"amount":1.5}}`)
	r, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(bad, partners.SandboxSign(secret, bad)))
	if err != nil || r.Status != partners.Malformed {
		t.Fatalf("malformed: %+v %v", r, err)
	}
	other, sig, _ := partners.SandboxNotification(secret, "e2", "account.updated", time.Now(), map[string]any{})
	r, err = h.svc.Receive(ctx, partners.SandboxBank, incoming(other, sig))
	if err != nil || r.Status != partners.Ignored {
		t.Fatalf("ignored: %+v %v", r, err)
	}
	if h.count(t) != 2 || h.queued(t) != 0 {
		t.Fatalf("rows %d jobs %d", h.count(t), h.queued(t))
	}
}

func TestInboundToAnUnknownAccountIsRejected(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "in_1", partners.TypeInboundTransfer, now, partners.SandboxInbound{
		Reference: "r", BankCode: "999", AccountNumber: "0000000001", Amount: 100, Currency: "NGN", PaidAt: stamp(now)})
	r, err := h.svc.Receive(ctx, partners.SandboxBank, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.svc.Process(ctx, r.ID)
	if err != nil || res.Status != partners.Rejected || res.DepositID != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestCustodyCreditsMerchantAndCustomerFunding(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	now := time.Now()
	merchant, customer := uuid.New(), uuid.New()
	custody := h.envs.Sandbox.Custody
	maddr, err := custody.DepositAddress(ctx, providers.AddressRequest{Reference: "merchant:" + merchant.String(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		t.Fatal(err)
	}
	caddr, _ := custody.DepositAddress(ctx, providers.AddressRequest{Reference: "customer:" + customer.String() + ":USDC", Chain: providers.Base, Asset: money.USDC})
	if _, err := h.pool.Exec(ctx, `insert into customers (id, merchant_id, environment, email, first_name, last_name, created_at, updated_at)
		values ($1, $2, 'sandbox', 'c@example.test', 'Ada', 'Lovelace', now(), now())`, customer, merchant); err != nil {
		t.Fatal(err)
	}
	request := uuid.New()
	if _, err := h.pool.Exec(ctx, `insert into crypto_funding_requests (id, merchant_id, environment, customer_id, chain, asset, amount,
		deposit_address, status, expires_at, created_at) values ($1, $2, 'sandbox', $3, 'BASE', 'USDC', 7000000, $4, 'PENDING', now() + interval '1 day', now())`,
		request, merchant, customer, caddr.Address); err != nil {
		t.Fatal(err)
	}
	deliver := func(id, ref, addr, asset string, amount int64) partners.Result {
		t.Helper()
		body, sig, _ := partners.SandboxNotification(secret, id, partners.TypeDepositConfirmed, now, partners.SandboxCrypto{
			Reference: ref, Chain: "BASE", Asset: asset, Address: addr, Amount: amount, TxHash: "0x" + id, ConfirmedAt: stamp(now)})
		return h.deliver(t, body, sig)
	}
	if res := deliver("d1", "merchant:"+merchant.String(), maddr.Address, "USDT", 25_000_000); res.Status != partners.Processed {
		t.Fatalf("merchant: %+v", res)
	}
	if res := deliver("d1", "merchant:"+merchant.String(), maddr.Address, "USDT", 25_000_000); res.Status != partners.Processed {
		t.Fatalf("merchant repeat: %+v", res)
	}
	if res := deliver("d2", "merchant:"+merchant.String(), caddr.Address, "USDT", 1); res.Status != partners.Rejected {
		t.Fatalf("someone else's address: %+v", res)
	}
	if res := deliver("d3", "customer:"+customer.String()+":USDC", caddr.Address, "USDC", 7_000_000); res.Status != partners.Processed {
		t.Fatalf("customer: %+v", res)
	}
	bal := func(owner ledger.OwnerType, id uuid.UUID, asset money.Asset) money.Amount {
		return paymentstest.Available(t, h.pool, payments.Tenant{MerchantID: merchant, Environment: payments.Sandbox}, owner, id, asset)
	}
	if got := bal(ledger.OwnerMerchant, merchant, money.USDT); got != money.New(money.USDT, 25_000_000) {
		t.Fatalf("merchant balance %v (credited once)", got)
	}
	if got := bal(ledger.OwnerCustomer, customer, money.USDC); got != money.New(money.USDC, 7_000_000) {
		t.Fatalf("customer balance %v", got)
	}
	var status string
	if err := h.pool.QueryRow(ctx, `select status from crypto_funding_requests where id = $1`, request).Scan(&status); err != nil || status != "COMPLETED" {
		t.Fatalf("funding request %s %v", status, err)
	}
	var credited int
	if err := h.pool.QueryRow(ctx, `select count(*) from events where type = 'customer.balance.credited' and merchant_id = $1`, merchant).Scan(&credited); err != nil || credited != 1 {
		t.Fatalf("customer.balance.credited events %d %v", credited, err)
	}
	// The merchant is told of its funding credit (extension event), once, in the credit's transaction.
	var mb []events.MerchantBalance
	rows, err := h.pool.Query(ctx, `select data from events where type = 'merchant.balance.credited' and merchant_id = $1 and environment = 'sandbox'`, merchant)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d events.MerchantBalance
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		mb = append(mb, d)
	}
	if rows.Err() != nil || len(mb) != 1 || mb[0] != (events.MerchantBalance{Asset: "USDT", Amount: "25.000000", Balance: "25.000000",
		Chain: "BASE", Address: maddr.Address, TxHash: "0xd1"}) {
		t.Fatalf("merchant.balance.credited events %+v %v", mb, rows.Err())
	}
}

func TestCustodySettlesAnOfframpDeposit(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	now := time.Now()
	merchant, customer, offramp := uuid.New(), uuid.New(), uuid.New()
	addr, err := h.envs.Sandbox.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "offramp:" + offramp.String(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(ctx, `insert into offramps (id, merchant_id, environment, type, status, customer_id, chain, asset, deposit_address,
		settlement_mode, created_at, updated_at) values ($1, $2, 'sandbox', 'PERMANENT', 'ACTIVE', $3, 'BASE', 'USDT', $4, 'INTERNAL_BALANCE', now(), now())`,
		offramp, merchant, customer, addr.Address); err != nil {
		t.Fatal(err)
	}
	deliver := func(id, asset string) partners.Result {
		t.Helper()
		body, sig, _ := partners.SandboxNotification(secret, id, partners.TypeDepositConfirmed, now, partners.SandboxCrypto{
			Reference: "offramp:" + offramp.String(), Chain: "BASE", Asset: asset, Address: addr.Address, Amount: 12_500_000,
			TxHash: "0x" + id, ConfirmedAt: stamp(now)})
		return h.deliver(t, body, sig)
	}
	if res := deliver("o1", "USDT"); res.Status != partners.Processed {
		t.Fatalf("offramp deposit: %+v", res)
	}
	if res := deliver("o1", "USDT"); res.Status != partners.Processed {
		t.Fatalf("repeat: %+v", res)
	}
	if res := deliver("o2", "USDC"); res.Status != partners.Rejected {
		t.Fatalf("another asset: %+v", res)
	}
	var n int
	var hash string
	if err := h.pool.QueryRow(ctx, `select count(*), max(tx_hash) from deposits where offramp_id = $1 and status = 'SETTLED'`, offramp).Scan(&n, &hash); err != nil || n != 1 || hash != "0xo1" {
		t.Fatalf("offramp deposits %d %s %v", n, hash, err)
	}
	bs, err := ledger.OwnerBalances(ctx, h.pool, merchant, "sandbox", ledger.OwnerCustomer, customer)
	if err != nil || len(bs) != 1 || bs[0].Amount != money.New(money.USDT, 12_500_000) {
		t.Fatalf("customer balances %+v %v", bs, err)
	}
}

// TestProcessRacesApplyOnce: the job and the sandbox simulation (or two job attempts) may
// process one notification at the same moment; the money moves once.
func TestProcessRacesApplyOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	now := time.Now()
	merchant := uuid.New()
	addr, err := h.envs.Sandbox.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "merchant:" + merchant.String(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		t.Fatal(err)
	}
	body, sig, _ := partners.SandboxNotification(secret, "race", partners.TypeDepositConfirmed, now, partners.SandboxCrypto{
		Reference: "merchant:" + merchant.String(), Chain: "BASE", Asset: "USDT", Address: addr.Address, Amount: 1_000_000, TxHash: "0xrace", ConfirmedAt: stamp(now)})
	r, err := h.svc.Receive(ctx, partners.SandboxCustody, incoming(body, sig))
	if err != nil {
		t.Fatal(err)
	}
	if err := paymentstest.Race(8, func(int) error {
		res, err := h.svc.Process(ctx, r.ID)
		if err == nil && res.Status != partners.Processed {
			err = errors.New("status " + res.Status)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bs, err := ledger.OwnerBalances(ctx, h.pool, merchant, "sandbox", ledger.OwnerMerchant, merchant)
	if err != nil || len(bs) != 1 || bs[0].Amount != money.New(money.USDT, 1_000_000) {
		t.Fatalf("credited %+v %v, want once", bs, err)
	}
}
