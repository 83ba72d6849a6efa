package offramps_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
)

type offramp struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	Status         string `json:"status"`
	CustomerID     string `json:"customer_id"`
	Chain          string `json:"chain"`
	Asset          string `json:"asset"`
	DepositAddress string `json:"deposit_address"`
	Settlement     struct {
		Mode            string            `json:"mode"`
		RateID          *string           `json:"rate_id"`
		Rate            *string           `json:"rate"`
		DestinationBank map[string]string `json:"destination_bank"`
	} `json:"settlement"`
	ExpiresAt *string `json:"expires_at"`
}

type deposit struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Status    string  `json:"status"`
	OfframpID string  `json:"offramp_id"`
	Amount    string  `json:"amount"`
	Currency  string  `json:"currency"`
	Rate      *string `json:"rate"`
	AmountNGN *string `json:"amount_ngn"`
	Payout    *struct {
		ID     string `json:"id"`
		Amount string `json:"amount"`
		Status string `json:"status"`
	} `json:"payout"`
}

var bank = map[string]any{"account_name": "Ada Obi", "account_number": "0123456789", "bank_code": "058"}

func internal(customer map[string]any, chain, asset string) map[string]any {
	return map[string]any{"type": "PERMANENT", "customer": customer, "chain": chain, "asset": asset,
		"settlement": map[string]any{"mode": "INTERNAL_BALANCE"}}
}

func payout(typ string, customer map[string]any, asset, rateID string, b map[string]any) map[string]any {
	return map[string]any{"type": typ, "customer": customer, "chain": "TRON", "asset": asset,
		"settlement": map[string]any{"mode": "NGN_PAYOUT", "rate_id": rateID, "destination_bank": b}}
}

func TestOfframpCreateGetAndCustomers(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()
	for _, chain := range providers.WalletChains {
		var o offramp
		r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(map[string]any{"customer_id": cust}, string(chain), "USDT")).Decode(t, &o)
		if err := providers.ValidateAddress(chain, o.DepositAddress); err != nil || o.Status != "ACTIVE" || o.CustomerID != cust ||
			o.Settlement.Mode != "INTERNAL_BALANCE" || o.Settlement.RateID != nil || o.ExpiresAt != nil {
			t.Fatalf("%s: %+v %v", chain, o, err)
		}
		var got offramp
		r.Srv.Must(t, 200, "GET", "/v1/payments/offramps/"+o.ID, r.M.SandboxKey, nil).Decode(t, &got)
		if got.ID != o.ID || got.DepositAddress != o.DepositAddress {
			t.Fatalf("get %+v", got)
		}
		r.Srv.Must(t, 404, "GET", "/v1/payments/offramps/"+o.ID, r.Other.SandboxKey, nil)
		r.Srv.Must(t, 404, "GET", "/v1/payments/offramps/"+o.ID, r.M.LiveKey, nil)
	}
	// By email: looked up when the customer exists, created (customer.created) when not.
	var o offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(map[string]any{"email": "ADA@example.com"}, "BASE", "USDC")).Decode(t, &o)
	if o.CustomerID != cust {
		t.Fatalf("existing customer not found by email: %+v", o)
	}
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(map[string]any{"email": "new@example.com", "first_name": "Chidi"}, "BASE", "USDC")).Decode(t, &o)
	var first, last string
	if err := r.Pool.QueryRow(context.Background(), `select first_name, last_name from customers where id = $1 and merchant_id = $2`, o.CustomerID, r.M.ID).
		Scan(&first, &last); err != nil || first != "Chidi" || last != "Customer" {
		t.Fatalf("created customer %q %q %v", first, last, err)
	}
	var again offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(map[string]any{"email": "new@example.com"}, "BASE", "USDC")).Decode(t, &again)
	if again.CustomerID != o.CustomerID {
		t.Fatalf("second lookup made another customer")
	}
	if ev := r.Events(t, r.M.ID, "sandbox"); slices.Index(ev, "customer.created") < 0 {
		t.Fatalf("events %v", ev)
	}
	// Another merchant's customer, or one of live, is not found.
	others := r.Customer(t, r.Other.ID, "sandbox", "o@example.com").String()
	live := r.Customer(t, r.M.ID, "live", "l@example.com").String()
	for _, c := range []string{others, live, uuid.NewString()} {
		r.Srv.Must(t, 404, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(map[string]any{"customer_id": c}, "BASE", "USDT"))
	}
	// Live without a custodian: 503.
	if res := r.Srv.Must(t, 503, "POST", "/v1/payments/offramps", r.M.LiveKey, internal(map[string]any{"customer_id": live}, "BASE", "USDT")); res.Message != "PROVIDER_UNAVAILABLE" {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 404, "GET", "/v1/payments/offramps/nope", r.M.SandboxKey, nil)
}

func TestOfframpRates(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := map[string]any{"customer_id": r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()}
	rate := r.SellRate(t, r.M.ID, "sandbox", money.USDT).String()
	var o offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, payout("TEMPORARY", cust, "USDT", rate, bank)).Decode(t, &o)
	if o.Settlement.RateID == nil || *o.Settlement.RateID != rate || o.Settlement.Rate == nil || *o.Settlement.Rate != "1592.00" ||
		o.ExpiresAt == nil || o.Settlement.DestinationBank["account_number"] != "0123456789" {
		t.Fatalf("%+v", o)
	}
	exp, _ := time.Parse(time.RFC3339, *o.ExpiresAt)
	if d := time.Until(exp); d < 24*time.Minute || d > 26*time.Minute {
		t.Fatalf("expires in %v", d)
	}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/offramps", r.M.SandboxKey, payout("PERMANENT", cust, "USDT", rate, bank)); res.Message != "RATE_ALREADY_USED" {
		t.Fatalf("%s", res)
	}
	expired := r.SellRate(t, r.M.ID, "sandbox", money.USDT)
	if _, err := r.Pool.Exec(context.Background(), `update rate_quotes set expires_at = now() - interval '1 second' where id = $1`, expired); err != nil {
		t.Fatal(err)
	}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/offramps", r.M.SandboxKey, payout("TEMPORARY", cust, "USDT", expired.String(), bank)); res.Message != "RATE_EXPIRED" {
		t.Fatalf("%s", res)
	}
	// A USDC rate for a USDT offramp, another merchant's rate, an unknown one: 400 on rate_id.
	usdc := r.SellRate(t, r.M.ID, "sandbox", money.USDC).String()
	others := r.SellRate(t, r.Other.ID, "sandbox", money.USDT).String()
	for _, id := range []string{usdc, others, uuid.NewString()} {
		res := r.Srv.Must(t, 400, "POST", "/v1/payments/offramps", r.M.SandboxKey, payout("TEMPORARY", cust, "USDT", id, bank))
		if !slices.Equal(res.Fields(), []string{"rate_id"}) {
			t.Fatalf("%s", res)
		}
	}
	// The refused offramps did not take the USDC rate: it still works for a USDC offramp.
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, payout("PERMANENT", cust, "USDC", usdc, bank))
}

func TestOfframpValidation(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := map[string]any{"customer_id": uuid.NewString()}
	rate := uuid.NewString()
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"empty", map[string]any{}, []string{"type", "customer", "chain", "asset", "settlement"}},
		{"both customer ways", internal(map[string]any{"customer_id": uuid.NewString(), "email": "a@example.com"}, "BASE", "USDT"), []string{"customer"}},
		{"no customer way", internal(map[string]any{"first_name": "A"}, "BASE", "USDT"), []string{"customer"}},
		{"bad email", internal(map[string]any{"email": "not-an-email"}, "BASE", "USDT"), []string{"customer.email"}},
		{"customer id not a uuid", internal(map[string]any{"customer_id": "c1"}, "BASE", "USDT"), []string{"customer.customer_id"}},
		{"long first name", internal(map[string]any{"email": "a@example.com", "first_name": string(make([]byte, 101))}, "BASE", "USDT"), []string{"customer.first_name"}},
		{"bad enums", map[string]any{"type": "DAILY", "customer": cust, "chain": "ARBITRUM", "asset": "DAI", "settlement": map[string]any{"mode": "ONCHAIN"}},
			[]string{"type", "chain", "asset", "settlement.mode"}},
		{"payout without rate and bank", map[string]any{"type": "TEMPORARY", "customer": cust, "chain": "BASE", "asset": "USDT", "settlement": map[string]any{"mode": "NGN_PAYOUT"}},
			[]string{"settlement.rate_id", "settlement.destination_bank"}},
		{"bank lengths", payout("TEMPORARY", cust, "USDT", rate, map[string]any{"account_name": "", "account_number": "12345", "bank_code": "12"}),
			[]string{"settlement.destination_bank.account_name", "settlement.destination_bank.account_number", "settlement.destination_bank.bank_code"}},
		{"bank too long", payout("TEMPORARY", cust, "USDT", rate, map[string]any{"account_name": "A", "account_number": "123456789012345678901234567890123", "bank_code": "12345678901234567"}),
			[]string{"settlement.destination_bank.account_number", "settlement.destination_bank.bank_code"}},
		{"rate not a uuid", payout("TEMPORARY", cust, "USDT", "r1", bank), []string{"settlement.rate_id"}},
		{"internal with payout fields", map[string]any{"type": "PERMANENT", "customer": cust, "chain": "BASE", "asset": "USDT",
			"settlement": map[string]any{"mode": "INTERNAL_BALANCE", "rate_id": rate, "destination_bank": bank}}, []string{"settlement.rate_id", "settlement.destination_bank"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := r.Srv.Must(t, 400, "POST", "/v1/payments/offramps", r.M.SandboxKey, c.body)
			got := res.Fields()
			sort.Strings(got)
			want := slices.Clone(c.fields)
			sort.Strings(want)
			if res.Message != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Fatalf("%s", res)
			}
		})
	}
}

func TestOfframpListFilters(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := map[string]any{"customer_id": r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()}
	mk := func(b map[string]any) string {
		var o offramp
		r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, b).Decode(t, &o)
		return o.ID
	}
	a := mk(internal(cust, "BASE", "USDT"))
	b := mk(internal(cust, "SOLANA", "USDC"))
	c := mk(payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)) // TRON
	d := mk(payout("TEMPORARY", cust, "USDC", r.SellRate(t, r.M.ID, "sandbox", money.USDC).String(), bank))
	if _, err := r.Pool.Exec(context.Background(), `update offramps set expires_at = now() - interval '1 minute' where id = $1`, d); err != nil {
		t.Fatal(err)
	}
	ids := func(q string) []string {
		var p struct {
			Items []offramp `json:"items"`
		}
		r.Srv.Must(t, 200, "GET", "/v1/payments/offramps"+q, r.M.SandboxKey, nil).Decode(t, &p)
		var out []string
		for _, o := range p.Items {
			out = append(out, o.ID)
		}
		return out
	}
	for q, want := range map[string][]string{
		"":                            {d, c, b, a},
		"?type=PERMANENT":             {b, a},
		"?type=TEMPORARY":             {d, c},
		"?chain=SOLANA":               {b},
		"?chain=TRON":                 {d, c},
		"?asset=USDC":                 {d, b},
		"?status=EXPIRED":             {d},
		"?status=ACTIVE":              {c, b, a},
		"?status=INACTIVE":            nil,
		"?settlement_mode=NGN_PAYOUT": {d, c},
		"?settlement_mode=INTERNAL_BALANCE&asset=USDT": {a},
		"?limit=1&page=2": {c},
		"?limit=200":      {d, c, b, a},
	} {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("%s: got %v want %v", q, got, want)
		}
	}
	for _, q := range []string{"?limit=201", "?type=X", "?chain=ARBITRUM", "?asset=NGN", "?status=DONE", "?settlement_mode=ONCHAIN"} {
		r.Srv.Must(t, 400, "GET", "/v1/payments/offramps"+q, r.M.SandboxKey, nil)
	}
	if got := ids("?status=EXPIRED"); len(got) != 1 {
		t.Fatal(got)
	}
	var p struct {
		Items []offramp `json:"items"`
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/offramps", r.Other.SandboxKey, nil).Decode(t, &p)
	r.Srv.Must(t, 200, "GET", "/v1/payments/offramps", r.M.LiveKey, nil).Decode(t, &p)
	if len(p.Items) != 0 {
		t.Fatalf("%+v", p)
	}
}

func TestOfframpNGNPayoutFromASimulatedCryptoDeposit(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	custID := r.Customer(t, r.M.ID, "sandbox", "ada@example.com")
	cust := map[string]any{"customer_id": custID.String()}
	var o offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey,
		payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)).Decode(t, &o)

	var d deposit
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": "10.5"}).Decode(t, &d)
	if d.Type != "CRYPTO_DEPOSIT" || d.Status != "PENDING_WITHDRAWAL" || d.Amount != "10.500000" || d.Currency != "USDT" ||
		d.Rate == nil || *d.Rate != "1592.00" || d.AmountNGN == nil || *d.AmountNGN != "16716.00" || d.Payout == nil || d.Payout.Status != "PROCESSING" {
		t.Fatalf("%+v", d)
	}
	// A TEMPORARY offramp takes one deposit.
	r.Srv.Must(t, 200, "GET", "/v1/payments/offramps/"+o.ID, r.M.SandboxKey, nil).Decode(t, &o)
	if o.Status != "INACTIVE" {
		t.Fatalf("%+v", o)
	}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": "1"}); res.Message != "INVALID_STATE" {
		t.Fatalf("%s", res)
	}
	if p := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.NGN, ledger.Pending); p != "16716.00" {
		t.Fatalf("pending %s", p)
	}
	moneyouttest.Drive(t, r.Offramps.AdvancePayout, uuid.MustParse(d.Payout.ID))
	var status string
	_ = r.Pool.QueryRow(context.Background(), `select status from deposits where id = $1 and offramp_id = $2 and type = 'CRYPTO_DEPOSIT'`, d.ID, o.ID).Scan(&status)
	payouts, err := r.Offramps.Payouts(context.Background(), offrampsTenant(r.M.ID), uuid.MustParse(o.ID))
	if err != nil || len(payouts) != 1 || payouts[0].Status != "SETTLED" || payouts[0].SettledAt == nil || status != "SETTLED" {
		t.Fatalf("payouts %+v, deposit %s, %v", payouts, status, err)
	}
	if p := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.NGN, ledger.Pending); p != "0.00" {
		t.Fatalf("pending %s", p)
	}
	if ev := r.Events(t, r.M.ID, "sandbox"); !slices.Equal(ev, []string{"customer.created", "payout.completed", "offramp.completed"}) {
		t.Fatalf("events %v", ev)
	}
	r.Verify(t)
}

func TestOfframpDepositsCreditedRefusedAndGuarded(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	custID := r.Customer(t, r.M.ID, "sandbox", "ada@example.com")
	cust := map[string]any{"customer_id": custID.String()}
	// INTERNAL_BALANCE: the customer is credited in the asset at once.
	var o offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(cust, "CELO", "USDC")).Decode(t, &o)
	for i := 0; i < 2; i++ { // a PERMANENT offramp takes any number of deposits
		var d deposit
		r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": 2.25}).Decode(t, &d)
		if d.Status != "SETTLED" || d.Amount != "2.250000" || d.Payout != nil {
			t.Fatalf("%+v", d)
		}
	}
	if a := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.USDC, ledger.Available); a != "4.500000" {
		t.Fatalf("customer USDC %s", a)
	}
	// A PERMANENT NGN_PAYOUT converts at the market sell price; a refused payout returns the
	// NGN to the customer's balance.
	bad := map[string]any{"account_name": "X", "account_number": moneyouttest.FailAccount, "bank_code": "058"}
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey,
		payout("PERMANENT", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bad)).Decode(t, &o)
	var d deposit
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": "1"}).Decode(t, &d)
	if *d.AmountNGN != "1592.00" {
		t.Fatalf("%+v", d)
	}
	moneyouttest.Drive(t, r.Offramps.AdvancePayout, uuid.MustParse(d.Payout.ID))
	if a := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.NGN, ledger.Available); a != "1592.00" {
		t.Fatalf("NGN not returned to the customer: %s", a)
	}
	var status string
	_ = r.Pool.QueryRow(context.Background(), `select status from deposits where id = $1`, d.ID).Scan(&status)
	if status != "FAILED" {
		t.Fatalf("deposit %s", status)
	}
	// Guards: live keys, other merchants, bad amounts, unknown offramps, expired offramps.
	if res := r.Srv.Must(t, 403, "POST", "/v1/payments/sandbox/deposits", r.M.LiveKey, map[string]any{"offramp_id": o.ID, "amount": "1"}); res.Message != "SANDBOX_ONLY" {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 404, "POST", "/v1/payments/sandbox/deposits", r.Other.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": "1"})
	r.Srv.Must(t, 404, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": uuid.NewString(), "amount": "1"})
	r.Srv.Must(t, 400, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": "x", "amount": "1"})
	for _, amt := range []any{"0", "-1", "1.0000001", "abc", nil} {
		r.Srv.Must(t, 400, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": amt})
	}
	var tmp offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, map[string]any{"type": "TEMPORARY", "customer": cust, "chain": "BASE",
		"asset": "USDT", "settlement": map[string]any{"mode": "INTERNAL_BALANCE"}}).Decode(t, &tmp)
	if _, err := r.Pool.Exec(context.Background(), `update offramps set expires_at = now() - interval '1 second' where id = $1`, tmp.ID); err != nil {
		t.Fatal(err)
	}
	r.Srv.Must(t, 422, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": tmp.ID, "amount": "1"})
	// Bodies without offramp_id are not ours (the deposits edge answers them).
	r.Srv.Must(t, 404, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"onramp_id": uuid.NewString()})
	r.Verify(t)
}

func TestOfframpIdempotency(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	cust := map[string]any{"customer_id": r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()}
	b := payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)
	first := r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, b, "X-Idempotency-Key", "o-1")
	again := r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, b, "X-Idempotency-Key", "o-1")
	if string(first.Body) != string(again.Body) || again.Header["Idempotent-Replayed"] != "true" {
		t.Fatalf("%s / %s", first.Body, again.Body)
	}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(cust, "BASE", "USDT"), "X-Idempotency-Key", "o-1"); res.Message != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("%s", res)
	}
	// Without the key the same body is a new request: the rate is already used.
	r.Srv.Must(t, 422, "POST", "/v1/payments/offramps", r.M.SandboxKey, b)
	var n int
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from offramps`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d offramps", n)
	}
	// A crash after the offramp's writes (its rate locked), before the response: nothing
	// stays, the rate is still usable, and the keyed retry creates it once.
	r.OfframpRoutes.AfterCreate = moneyouttest.CrashAfter(1)
	b2 := payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)
	if res := r.Srv.Do(t, "POST", "/v1/payments/offramps", r.M.SandboxKey, b2, "X-Idempotency-Key", "o-crash"); res.Status != 500 {
		t.Fatalf("%s", res)
	}
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from offramps`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d offramps after the crash", n)
	}
	retry := r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, b2, "X-Idempotency-Key", "o-crash")
	replay := r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, b2, "X-Idempotency-Key", "o-crash")
	if string(retry.Body) != string(replay.Body) {
		t.Fatalf("%s / %s", retry.Body, replay.Body)
	}
	// A crash after the deposit's conversion (its payout job enqueued), before the response:
	// nothing stays; the keyed retry converts once.
	var o struct {
		ID string `json:"id"`
	}
	first.Decode(t, &o)
	r.Jobs.Crashes.Store(1)
	dep := map[string]any{"offramp_id": o.ID, "amount": "3"}
	if res := r.Srv.Do(t, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, dep, "X-Idempotency-Key", "d-1"); res.Status != 500 {
		t.Fatalf("%s", res)
	}
	_ = r.Pool.QueryRow(context.Background(), `select count(*) from deposits`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d deposits after the crash", n)
	}
	r.Verify(t)
}

func offrampsTenant(m uuid.UUID) payments.Tenant {
	return payments.Tenant{MerchantID: m, Environment: "sandbox"}
}

// The sandbox offramp deposit is the sandbox custodian's signed deposit.confirmed
// notification, stored in partner_events and processed through the partner path; the
// request's idempotency key names the notification, so a repeat credits once.
func TestOfframpSimulationThroughSandboxCustody(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	ctx := context.Background()
	custID := r.Customer(t, r.M.ID, "sandbox", "ada@example.com")
	cust := map[string]any{"customer_id": custID.String()}
	var o offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey, internal(cust, "BASE", "USDT")).Decode(t, &o)

	body := map[string]any{"offramp_id": o.ID, "amount": "2.5"}
	var d deposit
	first := r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, body, "Idempotency-Key", "sim-1")
	first.Decode(t, &d)
	var (
		status, typ, eventID string
		depositID            *uuid.UUID
		data                 map[string]any
	)
	if err := r.Pool.QueryRow(ctx, `select status, event_type, event_id, deposit_id, convert_from(body, 'UTF8')::jsonb->'data' from partner_events
		where provider = 'sandbox-custody' and environment = 'sandbox'`).Scan(&status, &typ, &eventID, &depositID, &data); err != nil {
		t.Fatal(err)
	}
	if status != "PROCESSED" || typ != "deposit.confirmed" || depositID == nil || depositID.String() != d.ID ||
		data["reference"] != "offramp:"+o.ID || data["chain"] != "BASE" || data["asset"] != "USDT" || data["address"] != o.DepositAddress ||
		data["amount"] != float64(2_500_000) {
		t.Fatalf("stored notification %s %s %s %v %v; deposit %+v", status, typ, eventID, depositID, data, d)
	}
	// The same key again (either header): the stored notification answers, nothing is credited twice.
	for _, h := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
		var again deposit
		r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, body, h, "sim-1").Decode(t, &again)
		if again.ID != d.ID || again.Status != "SETTLED" || again.Amount != "2.500000" {
			t.Fatalf("repeat %+v, first %+v", again, d)
		}
	}
	// The key with another amount is refused; another key is another deposit.
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, map[string]any{"offramp_id": o.ID, "amount": "3"},
		"Idempotency-Key", "sim-1"); res.Message != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("%s", res)
	}
	if a := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.USDT, ledger.Available); a != "2.500000" {
		t.Fatalf("customer USDT %s after repeats", a)
	}
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, body, "Idempotency-Key", "sim-2")
	if a := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.USDT, ledger.Available); a != "5.000000" {
		t.Fatalf("customer USDT %s after a second key", a)
	}
	// The same key from several clients at once: one deposit, every answer names it.
	ids := make(chan string, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := r.Srv.Do(t, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, body, "Idempotency-Key", "sim-3")
			var d deposit
			if res.Status == 201 && json.Unmarshal(res.Data, &d) == nil {
				ids <- d.ID
			} else {
				ids <- res.String()
			}
		}()
	}
	wg.Wait()
	close(ids)
	var got []string
	for id := range ids {
		got = append(got, id)
	}
	if len(got) != 4 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 1 {
		t.Fatalf("concurrent answers %v", got)
	}
	if a := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.USDT, ledger.Available); a != "7.500000" {
		t.Fatalf("customer USDT %s after concurrent repeats", a)
	}
	var n int
	_ = r.Pool.QueryRow(ctx, `select count(*) from partner_events where provider = 'sandbox-custody'`).Scan(&n)
	if n != 3 {
		t.Fatalf("%d notifications", n)
	}

	// A crash after the conversion's writes (its payout job enqueued), before the answer: the
	// notification stays stored and unprocessed; the keyed retry converts it once.
	var po offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey,
		payout("TEMPORARY", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)).Decode(t, &po)
	r.Jobs.Crashes.Store(1)
	dep := map[string]any{"offramp_id": po.ID, "amount": "3"}
	if res := r.Srv.Do(t, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, dep, "X-Idempotency-Key", "crash-1"); res.Status != 500 {
		t.Fatalf("%s", res)
	}
	_ = r.Pool.QueryRow(ctx, `select count(*) from deposits where offramp_id = $1`, po.ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d deposits after the crash", n)
	}
	var retry deposit
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, dep, "X-Idempotency-Key", "crash-1").Decode(t, &retry)
	if retry.Status != "PENDING_WITHDRAWAL" || retry.AmountNGN == nil || *retry.AmountNGN != "4776.00" || retry.Payout == nil {
		t.Fatalf("%+v", retry)
	}
	var replay deposit
	r.Srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, dep, "X-Idempotency-Key", "crash-1").Decode(t, &replay)
	if replay.ID != retry.ID || replay.Payout == nil || replay.Payout.ID != retry.Payout.ID {
		t.Fatalf("replay %+v, retry %+v", replay, retry)
	}
	// Without the key the TEMPORARY offramp, now INACTIVE, refuses another deposit.
	r.Srv.Must(t, 422, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, dep)
	_ = r.Pool.QueryRow(ctx, `select count(*) from payouts where source_id = $1`, po.ID).Scan(&n)
	if n != 1 {
		t.Fatalf("%d payouts", n)
	}
	if p := r.CustomerBalance(t, r.M.ID, "sandbox", custID, money.NGN, ledger.Pending); p != "4776.00" {
		t.Fatalf("pending %s", p)
	}

	// What only the domain step refuses (too little to pay out in NGN) answers as before (400
	// on amount) and leaves the notification REJECTED; a repeat of its key is refused too.
	var small offramp
	r.Srv.Must(t, 201, "POST", "/v1/payments/offramps", r.M.SandboxKey,
		payout("PERMANENT", cust, "USDT", r.SellRate(t, r.M.ID, "sandbox", money.USDT).String(), bank)).Decode(t, &small)
	tiny := map[string]any{"offramp_id": small.ID, "amount": "0.000001"}
	if res := r.Srv.Must(t, 400, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, tiny, "X-Idempotency-Key", "tiny"); !slices.Equal(res.Fields(), []string{"amount"}) {
		t.Fatalf("%s", res)
	}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/sandbox/deposits", r.M.SandboxKey, tiny, "X-Idempotency-Key", "tiny"); res.Message != "INVALID_STATE" {
		t.Fatalf("%s", res)
	}
	_ = r.Pool.QueryRow(ctx, `select count(*) from partner_events where provider = 'sandbox-custody' and status = 'REJECTED'`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d rejected notifications", n)
	}
	_ = r.Pool.QueryRow(ctx, `select count(*) from deposits where offramp_id = $1`, small.ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d deposits of a refused amount", n)
	}
	r.Verify(t)
}
