package withdrawals_test

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/ledger"
	"svc/payments/providers"
)

type withdrawal struct {
	ID                 string  `json:"id"`
	AmountUSD          string  `json:"amount_usd"`
	Token              string  `json:"token"`
	Chain              string  `json:"chain"`
	DestinationAddress string  `json:"destination_address"`
	Status             string  `json:"status"`
	TxHash             *string `json:"tx_hash"`
	SettledAt          *string `json:"settled_at"`
	FailureReason      *string `json:"failure_reason"`
	CreatedAt          string  `json:"created_at"`
}

type page struct {
	Items []withdrawal `json:"items"`
	Meta  struct {
		Total      int `json:"total"`
		Page       int `json:"page"`
		Limit      int `json:"limit"`
		TotalPages int `json:"total_pages"`
	} `json:"meta"`
}

const evm = "0x52908400098527886e0f7030069857d2e4169ee7"

func address(t *testing.T, chain providers.Chain) string {
	a, err := providers.NewSandbox(providers.SandboxConfig{}).Custody.DepositAddress(context.Background(),
		providers.AddressRequest{Reference: "test", Chain: chain})
	if err != nil {
		t.Fatal(err)
	}
	return a.Address
}

func body(amount string, chain providers.Chain, addr string) map[string]string {
	return map[string]string{"amount_usd": amount, "token": "USDT", "chain": string(chain), "destination_address": addr}
}

func TestWithdrawalToSettled(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	var w withdrawal
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("25.5", providers.Base, evm)).Decode(t, &w)
	if w.Status != "PENDING" || w.AmountUSD != "25.500000" || w.Token != "USDT" || w.TxHash != nil || w.SettledAt != nil {
		t.Fatalf("created %+v", w)
	}
	if a, p := r.Balance(t, r.M.ID, "sandbox", ledger.Available), r.Balance(t, r.M.ID, "sandbox", ledger.Pending); a != "74.500000" || p != "25.500000" {
		t.Fatalf("after create: available %s pending %s", a, p)
	}
	id := uuid.MustParse(w.ID)
	// First step: submitted to the chain with its hash, funds still pending.
	if _, err := r.Withdrawals.Advance(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.SandboxKey, nil).Decode(t, &w)
	if w.Status != "SUBMITTED" || w.TxHash == nil || w.SettledAt != nil {
		t.Fatalf("after submit %+v", w)
	}
	moneyouttest.Drive(t, r.Withdrawals.Advance, id)
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.SandboxKey, nil).Decode(t, &w)
	if w.Status != "SETTLED" || w.TxHash == nil || w.SettledAt == nil {
		t.Fatalf("after settle %+v", w)
	}
	if a, p := r.Balance(t, r.M.ID, "sandbox", ledger.Available), r.Balance(t, r.M.ID, "sandbox", ledger.Pending); a != "74.500000" || p != "0.000000" {
		t.Fatalf("after settle: available %s pending %s", a, p)
	}
	if ev := r.Events(t, r.M.ID, "sandbox"); !slices.Equal(ev, []string{"withdrawal.completed"}) {
		t.Fatalf("events %v", ev)
	}
	// Another step changes nothing.
	moneyouttest.Drive(t, r.Withdrawals.Advance, id)
	if ev := r.Events(t, r.M.ID, "sandbox"); len(ev) != 1 {
		t.Fatalf("events %v", ev)
	}
	r.Verify(t)
}

func TestWithdrawalRejectedByTheChainReturnsTheFunds(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	var w withdrawal
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("40", providers.Ethereum, moneyouttest.FailAddress)).Decode(t, &w)
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(w.ID))
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.SandboxKey, nil).Decode(t, &w)
	if w.Status != "FAILED" || w.FailureReason == nil || w.SettledAt != nil {
		t.Fatalf("%+v", w)
	}
	if a, p := r.Balance(t, r.M.ID, "sandbox", ledger.Available), r.Balance(t, r.M.ID, "sandbox", ledger.Pending); a != "100.000000" || p != "0.000000" {
		t.Fatalf("funds not returned: available %s pending %s", a, p)
	}
	if ev := r.Events(t, r.M.ID, "sandbox"); len(ev) != 1 || ev[0] != "withdrawal.failed" { // issue 11: the failure's event
		t.Fatalf("events %v", ev)
	}
	// The sandbox's documented magic address (issue 11) is refused the same way.
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("30", providers.Polygon, providers.SendRejectedEVM)).Decode(t, &w)
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(w.ID))
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.SandboxKey, nil).Decode(t, &w)
	if w.Status != "FAILED" || r.Balance(t, r.M.ID, "sandbox", ledger.Available) != "100.000000" {
		t.Fatalf("%+v", w)
	}
	r.Verify(t)
}

func TestWithdrawalWorkedByTheJobQueue(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{Work: true})
	r.Fund(t, r.M.ID, "sandbox", "10")
	var w withdrawal
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("10", providers.Solana, address(t, providers.Solana))).Decode(t, &w)
	deadline := time.Now().Add(15 * time.Second)
	for w.Status != "SETTLED" {
		if time.Now().After(deadline) {
			t.Fatalf("not settled by the jobs: %+v", w)
		}
		time.Sleep(50 * time.Millisecond)
		r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.SandboxKey, nil).Decode(t, &w)
	}
	if p := r.Balance(t, r.M.ID, "sandbox", ledger.Pending); p != "0.000000" {
		t.Fatalf("pending %s", p)
	}
	r.Verify(t)
}

func TestWithdrawalValidation(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "1000")
	for _, chain := range providers.WalletChains { // a valid address of every chain is accepted
		r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("1", chain, address(t, chain)))
	}
	aptos := address(t, providers.Aptos)
	cases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"empty body", map[string]string{}, []string{"amount_usd", "token", "chain", "destination_address"}},
		{"zero amount", body("0", providers.Base, evm), []string{"amount_usd"}},
		{"negative amount", body("-5", providers.Base, evm), []string{"amount_usd"}},
		{"seven places", body("1.0000001", providers.Base, evm), []string{"amount_usd"}},
		{"exponent", body("1e3", providers.Base, evm), []string{"amount_usd"}},
		{"amount as a number", map[string]any{"amount_usd": 5, "token": "USDT", "chain": "BASE", "destination_address": evm}, []string{"amount_usd"}},
		{"token USDC", map[string]string{"amount_usd": "1", "token": "USDC", "chain": "BASE", "destination_address": evm}, []string{"token"}},
		{"unknown chain", body("1", "BITCOIN", evm), []string{"chain"}},
		{"recipient-only chain", body("1", providers.Arbitrum, evm), []string{"chain"}},
		{"evm too short", body("1", providers.Ethereum, evm[:41]), []string{"destination_address"}},
		{"evm not hex", body("1", providers.Polygon, "0xZZ908400098527886e0f7030069857d2e4169ee7"), []string{"destination_address"}},
		{"evm without 0x", body("1", providers.Celo, evm[2:]+"00"), []string{"destination_address"}},
		{"aptos address on evm", body("1", providers.Base, aptos), []string{"destination_address"}},
		{"evm address on aptos", body("1", providers.Aptos, evm), []string{"destination_address"}},
		{"evm address on solana", body("1", providers.Solana, evm), []string{"destination_address"}},
		{"solana with a 0", body("1", providers.Solana, "0"+address(t, providers.Solana)[1:]), []string{"destination_address"}},
		{"evm address on tron", body("1", providers.Tron, evm), []string{"destination_address"}},
		{"tron bad checksum", body("1", providers.Tron, address(t, providers.Tron)[:33]+"1"), []string{"destination_address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := r.Srv.Must(t, 400, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, c.body)
			got := res.Fields()
			sort.Strings(got)
			want := slices.Clone(c.fields)
			sort.Strings(want)
			if res.Message != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Fatalf("%s", res)
			}
		})
	}
	r.Srv.Must(t, 400, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, "{not json")
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "993.000000" {
		t.Fatalf("available %s", a)
	}
}

func TestWithdrawalInsufficientBalanceChangesNothing(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "10")
	res := r.Srv.Must(t, 422, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("10.000001", providers.Base, evm))
	if res.Message != "INSUFFICIENT_BALANCE" {
		t.Fatalf("%s", res)
	}
	var n int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from withdrawals`).Scan(&n)
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "10.000000" || n != 0 {
		t.Fatalf("available %s, %d withdrawals", a, n)
	}
	var jobs int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from river_job where kind = 'withdrawal_process'`).Scan(&jobs)
	if jobs != 0 {
		t.Fatalf("%d jobs", jobs)
	}
}

func TestWithdrawalTenancyAndEnvironments(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "10")
	r.Fund(t, r.M.ID, "live", "10")
	var w withdrawal
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("1", providers.Base, evm)).Decode(t, &w)
	r.Srv.Must(t, 404, "GET", "/v1/payments/withdrawals/"+w.ID, r.Other.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/payments/withdrawals/"+w.ID, r.M.LiveKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/payments/withdrawals/not-a-uuid", r.M.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/payments/withdrawals/"+uuid.NewString(), r.M.SandboxKey, nil)
	r.Srv.Must(t, 401, "GET", "/v1/payments/withdrawals/"+w.ID, "", nil)
	var p page
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals", r.Other.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 0 || p.Meta.Total != 0 {
		t.Fatalf("other merchant sees %+v", p)
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals", r.M.LiveKey, nil).Decode(t, &p)
	if len(p.Items) != 0 {
		t.Fatalf("live sees %+v", p)
	}
	// Live without a configured custodian: 503, nothing debited.
	res := r.Srv.Must(t, 503, "POST", "/v1/payments/withdrawals", r.M.LiveKey, body("1", providers.Base, evm))
	if res.Message != "PROVIDER_UNAVAILABLE" || r.Balance(t, r.M.ID, "live", ledger.Available) != "10.000000" {
		t.Fatalf("%s", res)
	}
	// The other merchant's balance is its own: nothing to withdraw.
	r.Srv.Must(t, 422, "POST", "/v1/payments/withdrawals", r.Other.SandboxKey, body("1", providers.Base, evm))
}

func TestWithdrawalListFiltersAndPaging(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	mk := func(addr string) withdrawal {
		var w withdrawal
		r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("1", providers.Base, addr)).Decode(t, &w)
		return w
	}
	pending := mk(evm)
	submitted := mk(evm)
	settled := mk(evm)
	failed := mk(moneyouttest.FailAddress)
	if _, err := r.Withdrawals.Advance(context.Background(), uuid.MustParse(submitted.ID)); err != nil {
		t.Fatal(err)
	}
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(settled.ID))
	moneyouttest.Drive(t, r.Withdrawals.Advance, uuid.MustParse(failed.ID))
	ids := func(q string) []string {
		var p page
		r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals"+q, r.M.SandboxKey, nil).Decode(t, &p)
		var out []string
		for _, w := range p.Items {
			out = append(out, w.ID)
		}
		return out
	}
	for q, want := range map[string][]string{
		"":                   {failed.ID, settled.ID, submitted.ID, pending.ID},
		"?status=PROCESSING": {submitted.ID, pending.ID},
		"?status=PENDING":    {pending.ID},
		"?status=SUBMITTED":  {submitted.ID},
		"?status=SETTLED":    {settled.ID},
		"?status=FAILED":     {failed.ID},
		"?limit=2":           {failed.ID, settled.ID},
		"?limit=2&page=2":    {submitted.ID, pending.ID},
		"?limit=2&page=3":    nil,
	} {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("%s: got %v want %v", q, got, want)
		}
	}
	var p page
	r.Srv.Must(t, 200, "GET", "/v1/payments/withdrawals?limit=3&page=2", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 4 || p.Meta.Page != 2 || p.Meta.Limit != 3 || p.Meta.TotalPages != 2 {
		t.Fatalf("meta %+v", p.Meta)
	}
	for _, q := range []string{"?status=DONE", "?limit=101", "?limit=0", "?page=0", "?page=x"} {
		r.Srv.Must(t, 400, "GET", "/v1/payments/withdrawals"+q, r.M.SandboxKey, nil)
	}
	r.Verify(t)
}

// 100 withdrawals of 1 USDT at once against a balance of 60: exactly 60 are taken, 40 are
// refused, and the balance never goes below zero.
func TestHundredParallelWithdrawalsAgainstSixty(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "60")
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[int]int{}
		codes  = map[string]int{}
	)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := r.Srv.Do(t, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("1", providers.Base, evm))
			mu.Lock()
			counts[res.Status]++
			codes[res.Message]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[201] != 60 || counts[422] != 40 || codes["INSUFFICIENT_BALANCE"] != 40 {
		t.Fatalf("statuses %v codes %v", counts, codes)
	}
	if a, p := r.Balance(t, r.M.ID, "sandbox", ledger.Available), r.Balance(t, r.M.ID, "sandbox", ledger.Pending); a != "0.000000" || p != "60.000000" {
		t.Fatalf("available %s pending %s", a, p)
	}
	var negative int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from ledger_entries e join ledger_accounts a on a.id = e.account_id
		where e.balance_after < 0 and a.owner_type <> 'system'`).Scan(&negative)
	if negative != 0 {
		t.Fatalf("%d entries left a negative balance", negative)
	}
	r.Verify(t)
}

func TestWithdrawalIdempotency(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	b := body("5", providers.Base, evm)
	first := r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, b, "X-Idempotency-Key", "w-1")
	again := r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, b, "X-Idempotency-Key", "w-1")
	if string(first.Body) != string(again.Body) || again.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("replay: %s / %s %v", first.Body, again.Body, again.Header)
	}
	res := r.Srv.Must(t, 422, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("6", providers.Base, evm), "X-Idempotency-Key", "w-1")
	if res.Message != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("%s", res)
	}
	// The same key in live or for another merchant is another key.
	r.Srv.Must(t, 422, "POST", "/v1/payments/withdrawals", r.Other.SandboxKey, b, "X-Idempotency-Key", "w-1")
	// A refusal is stored too: the retry gets the same 422 even after funding.
	r.Srv.Must(t, 422, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("1000", providers.Base, evm), "X-Idempotency-Key", "w-2")
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "95.000000" {
		t.Fatalf("available %s", a)
	}

	// A crash after the debit, before the response: nothing committed; the retry debits once.
	r.WithdrawalRoutes.AfterCreate = moneyouttest.CrashAfter(1)
	crashed := r.Srv.Do(t, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("7", providers.Base, evm), "X-Idempotency-Key", "w-crash")
	if crashed.Status != 500 || r.Balance(t, r.M.ID, "sandbox", ledger.Available) != "95.000000" {
		t.Fatalf("crashed request: %s, available %s", crashed, r.Balance(t, r.M.ID, "sandbox", ledger.Available))
	}
	retry := r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("7", providers.Base, evm), "X-Idempotency-Key", "w-crash")
	replay := r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("7", providers.Base, evm), "X-Idempotency-Key", "w-crash")
	if string(retry.Body) != string(replay.Body) || r.Balance(t, r.M.ID, "sandbox", ledger.Available) != "88.000000" {
		t.Fatalf("after crash and retries: %s / %s", retry.Body, replay.Body)
	}
	// A crash in the middle of the writes leaves nothing either.
	r.Jobs.Crashes.Store(1)
	if res := r.Srv.Do(t, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("9", providers.Base, evm), "X-Idempotency-Key", "w-mid"); res.Status != 500 {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 201, "POST", "/v1/payments/withdrawals", r.M.SandboxKey, body("9", providers.Base, evm), "X-Idempotency-Key", "w-mid")
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "79.000000" {
		t.Fatalf("available %s", a)
	}
	var n int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from withdrawals where merchant_id = $1`, r.M.ID).Scan(&n)
	if n != 3 {
		t.Fatalf("%d withdrawals", n)
	}
	r.Verify(t)
}
