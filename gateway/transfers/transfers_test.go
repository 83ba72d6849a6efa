package transfers_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/google/uuid"

	"svc/gateway/withdrawals/moneyouttest"
	"svc/payments/ledger"
)

type transfer struct {
	ID          string         `json:"id"`
	Currency    string         `json:"currency"`
	Amount      string         `json:"amount"`
	Reference   string         `json:"reference"`
	Status      string         `json:"status"`
	Rail        string         `json:"rail"`
	RecipientID *string        `json:"recipient_id"`
	Destination map[string]any `json:"destination"`
	OnBehalfOf  *struct {
		CustomerID string `json:"customer_id"`
	} `json:"on_behalf_of"`
	Quote struct {
		SourceCurrency string `json:"source_currency"`
		SourceAmount   string `json:"source_amount"`
		Rate           string `json:"rate"`
	} `json:"quote"`
	FailureReason *string `json:"failure_reason"`
	SettledAt     *string `json:"settled_at"`
}

func addr(country string) map[string]any {
	return map[string]any{"line1": "1 Main St", "country": country}
}

func domestic(account string) map[string]any {
	return map[string]any{"account_number": account, "bank_code": "058", "account_name": "Ada Obi"}
}

func usBank(scheme string) map[string]any {
	return map[string]any{"account_owner_name": "Ada Obi", "account_number": "123456789", "routing_number": "021000021",
		"bank_name": "Chase", "account_type": "savings", "payout_scheme": scheme, "address": addr("USA")}
}

func swift(iban string) map[string]any {
	return map[string]any{"account_owner_name": "Acme Ltd", "account_owner_type": "business", "account_country": "GBR",
		"iban": iban, "category": "supplier", "purpose_of_funds": []string{"invoice_for_goods_and_services", "intra_group_transfer"},
		"short_business_description": "Parts", "address": addr("GBR"), "bank_address": addr("GBR")}
}

func dest(typ string, obj map[string]any) map[string]any {
	key := map[string]string{"BANK_ACCOUNT": "bank_account", "US_BANK_ACCOUNT": "us_bank_account", "SWIFT_BANK_ACCOUNT": "swift_bank_account"}[typ]
	return map[string]any{"type": typ, key: obj}
}

func TestTransfersByDestinationAndByRecipientOfEveryKind(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "1000")
	cust := r.Customer(t, r.M.ID, "sandbox", "ada@example.com").String()
	kinds := []struct {
		currency, amount, typ string
		obj                   map[string]any
		rail, source, rate    string
	}{
		{"NGN", "16000", "BANK_ACCOUNT", domestic("0123456789"), "NGN", "10.050252", "1592.00"}, // 16000 / (1600 x 0.995), rounded up
		{"USD", "100", "US_BANK_ACCOUNT", usBank("ach"), "US_ACH", "100.000000", "1.00"},
		{"USD", "50.25", "US_BANK_ACCOUNT", usBank("wire"), "US_WIRE", "50.250000", "1.00"},
		{"USD", "10", "SWIFT_BANK_ACCOUNT", swift("GB82WEST12345698765432"), "SWIFT", "10.000000", "1.00"},
	}
	for i, k := range kinds {
		for _, byRecipient := range []bool{false, true} {
			body := map[string]any{"currency": k.currency, "amount": k.amount, "reference": uuid.NewString()}
			var recipientID string
			if byRecipient {
				rb := dest(k.typ, k.obj)
				if k.typ != "BANK_ACCOUNT" {
					rb["customer_id"] = cust
				}
				var rc struct {
					ID string `json:"id"`
				}
				r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, rb).Decode(t, &rc)
				recipientID = rc.ID
				body["recipient_id"] = rc.ID
			} else {
				body["destination"] = dest(k.typ, k.obj)
				body["on_behalf_of"] = map[string]any{"customer_id": cust}
			}
			var tr transfer
			r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body).Decode(t, &tr)
			if tr.Status != "PROCESSING" || tr.Rail != k.rail || tr.Quote.SourceAmount != k.source || tr.Quote.Rate != k.rate ||
				tr.Quote.SourceCurrency != "USDT" || tr.Destination["type"] != k.typ {
				t.Fatalf("kind %d (by recipient %v): %+v", i, byRecipient, tr)
			}
			if byRecipient && (tr.RecipientID == nil || *tr.RecipientID != recipientID || tr.OnBehalfOf != nil) {
				t.Fatalf("recipient not kept: %+v", tr)
			}
			if !byRecipient && (tr.RecipientID != nil || tr.OnBehalfOf == nil || tr.OnBehalfOf.CustomerID != cust) {
				t.Fatalf("on_behalf_of not kept: %+v", tr)
			}
			moneyouttest.Drive(t, r.Transfers.Advance, uuid.MustParse(tr.ID))
			r.Srv.Must(t, 200, "GET", "/v1/payments/transfers/"+tr.ID, r.M.SandboxKey, nil).Decode(t, &tr)
			if tr.Status != "SETTLED" || tr.SettledAt == nil {
				t.Fatalf("not settled: %+v", tr)
			}
		}
	}
	if p := r.Balance(t, r.M.ID, "sandbox", ledger.Pending); p != "0.000000" {
		t.Fatalf("pending %s", p)
	}
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "659.399496" { // 1000 - 2 x (10.050252 + 100 + 50.25 + 10)
		t.Fatalf("available %s", a)
	}
	ev := r.Events(t, r.M.ID, "sandbox")
	var completed, payouts int
	for _, e := range ev {
		switch e {
		case "transfer.completed":
			completed++
		case "payout.completed":
			payouts++
		}
	}
	if completed != 8 || payouts != 2 {
		t.Fatalf("events %v", ev)
	}
	var p struct {
		Items []transfer `json:"items"`
		Meta  struct {
			Total int `json:"total"`
		} `json:"meta"`
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/transfers?currency=NGN", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 2 || len(p.Items) != 2 || p.Items[0].Currency != "NGN" {
		t.Fatalf("NGN list %+v", p)
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/transfers?status=SETTLED&currency=USD&limit=5", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 6 || len(p.Items) != 5 {
		t.Fatalf("USD list %+v", p)
	}
	r.Srv.Must(t, 200, "GET", "/v1/payments/transfers?status=PROCESSING", r.M.SandboxKey, nil).Decode(t, &p)
	if p.Meta.Total != 0 {
		t.Fatalf("processing %+v", p)
	}
	for _, q := range []string{"?status=DONE", "?currency=EUR", "?limit=101", "?page=0"} {
		r.Srv.Must(t, 400, "GET", "/v1/payments/transfers"+q, r.M.SandboxKey, nil)
	}
	r.Verify(t)
}

func TestTransferRejectedByTheBankReturnsTheFunds(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	for _, body := range []map[string]any{
		{"currency": "NGN", "amount": "1592", "reference": "fail-ngn", "destination": dest("BANK_ACCOUNT", domestic(moneyouttest.FailAccount))},
		{"currency": "USD", "amount": "20", "reference": "fail-swift", "destination": dest("SWIFT_BANK_ACCOUNT", swift("GB33BUKB20201555555555"))},
	} {
		var tr transfer
		r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body).Decode(t, &tr)
		moneyouttest.Drive(t, r.Transfers.Advance, uuid.MustParse(tr.ID))
		r.Srv.Must(t, 200, "GET", "/v1/payments/transfers/"+tr.ID, r.M.SandboxKey, nil).Decode(t, &tr)
		if tr.Status != "FAILED" || tr.FailureReason == nil || tr.SettledAt != nil {
			t.Fatalf("%+v", tr)
		}
	}
	if a, p := r.Balance(t, r.M.ID, "sandbox", ledger.Available), r.Balance(t, r.M.ID, "sandbox", ledger.Pending); a != "100.000000" || p != "0.000000" {
		t.Fatalf("available %s pending %s", a, p)
	}
	if ev := r.Events(t, r.M.ID, "sandbox"); len(ev) != 2 || ev[0] != "transfer.failed" || ev[1] != "transfer.failed" { // issue 11: one per failure
		t.Fatalf("events %v", ev)
	}
	r.Verify(t)
}

func TestTransferRules(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	r.Fund(t, r.M.ID, "live", "100")
	r.Fund(t, r.Other.ID, "sandbox", "100")
	ngn := func(ref string) map[string]any {
		return map[string]any{"currency": "NGN", "amount": "1000", "reference": ref, "destination": dest("BANK_ACCOUNT", domestic("0123456789"))}
	}
	var first transfer
	r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, ngn("inv-1")).Decode(t, &first)
	// The reference is the merchant's: another merchant may use it, the merchant may not again.
	res := r.Srv.Must(t, 409, "POST", "/v1/payments/transfers", r.M.SandboxKey, ngn("inv-1"))
	if res.Message != "REFERENCE_IN_USE" {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.Other.SandboxKey, ngn("inv-1"))
	// Tenancy and environments.
	r.Srv.Must(t, 404, "GET", "/v1/payments/transfers/"+first.ID, r.Other.SandboxKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/payments/transfers/"+first.ID, r.M.LiveKey, nil)
	r.Srv.Must(t, 404, "GET", "/v1/payments/transfers/x", r.M.SandboxKey, nil)
	// Live without a bank partner: 503, nothing debited.
	res = r.Srv.Must(t, 503, "POST", "/v1/payments/transfers", r.M.LiveKey, ngn("live-1"))
	if res.Message != "PROVIDER_UNAVAILABLE" || r.Balance(t, r.M.ID, "live", ledger.Available) != "100.000000" {
		t.Fatalf("%s", res)
	}
	// Insufficient balance: 422, nothing written.
	big := map[string]any{"currency": "USD", "amount": "1000", "reference": "big", "destination": dest("US_BANK_ACCOUNT", usBank("ach"))}
	if res := r.Srv.Must(t, 422, "POST", "/v1/payments/transfers", r.M.SandboxKey, big); res.Message != "INSUFFICIENT_BALANCE" {
		t.Fatalf("%s", res)
	}
	big["amount"] = "10"
	r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, big) // the refused reference was not kept
	// Recipients and customers must be the merchant's, in the environment.
	othersCustomer := r.Customer(t, r.Other.ID, "sandbox", "o@example.com").String()
	obo := ngn("obo")
	obo["on_behalf_of"] = map[string]any{"customer_id": othersCustomer}
	r.Srv.Must(t, 404, "POST", "/v1/payments/transfers", r.M.SandboxKey, obo)
	var rc struct {
		ID string `json:"id"`
	}
	r.Srv.Must(t, 201, "POST", "/v1/recipients", r.Other.SandboxKey, dest("BANK_ACCOUNT", domestic("0123456789"))).Decode(t, &rc)
	byOthers := map[string]any{"currency": "NGN", "amount": "1000", "reference": "r1", "recipient_id": rc.ID}
	r.Srv.Must(t, 404, "POST", "/v1/payments/transfers", r.M.SandboxKey, byOthers)
	r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, map[string]any{"type": "CRYPTO_ADDRESS",
		"crypto_address": map[string]any{"asset": "USDT", "chain": "BASE", "address": "0x52908400098527886e0f7030069857d2e4169ee7"}}).Decode(t, &rc)
	res = r.Srv.Must(t, 400, "POST", "/v1/payments/transfers", r.M.SandboxKey, map[string]any{"currency": "USD", "amount": "1", "reference": "r2", "recipient_id": rc.ID})
	if !slices.Equal(res.Fields(), []string{"recipient_id"}) {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 201, "POST", "/v1/recipients", r.M.SandboxKey, dest("BANK_ACCOUNT", domestic("0123456789"))).Decode(t, &rc)
	r.Srv.Must(t, 200, "DELETE", "/v1/recipients/"+rc.ID, r.M.SandboxKey, nil)
	r.Srv.Must(t, 404, "POST", "/v1/payments/transfers", r.M.SandboxKey, map[string]any{"currency": "NGN", "amount": "1", "reference": "r3", "recipient_id": rc.ID})
	// A currency the destination does not take.
	res = r.Srv.Must(t, 400, "POST", "/v1/payments/transfers", r.M.SandboxKey, map[string]any{"currency": "USD", "amount": "1", "reference": "r4",
		"destination": dest("BANK_ACCOUNT", domestic("0123456789"))})
	if !slices.Equal(res.Fields(), []string{"currency"}) {
		t.Fatalf("%s", res)
	}
	r.Srv.Must(t, 400, "POST", "/v1/payments/transfers", r.M.SandboxKey, map[string]any{"currency": "NGN", "amount": "1", "reference": "r5",
		"destination": dest("SWIFT_BANK_ACCOUNT", swift("GB82WEST12345698765432"))})
	r.Verify(t)
}

func TestTransferValidation(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	d := dest("BANK_ACCOUNT", domestic("0123456789"))
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'r'
	}
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"empty", map[string]any{}, []string{"currency", "amount", "reference", "recipient_id"}},
		{"bad currency", map[string]any{"currency": "EUR", "amount": "1", "reference": "a", "destination": d}, []string{"currency"}},
		{"three places", map[string]any{"currency": "NGN", "amount": "1.001", "reference": "a", "destination": d}, []string{"amount"}},
		{"zero", map[string]any{"currency": "USD", "amount": "0", "reference": "a", "destination": d}, []string{"amount"}},
		{"long reference", map[string]any{"currency": "NGN", "amount": "1", "reference": string(long), "destination": d}, []string{"reference"}},
		{"both", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": d, "recipient_id": uuid.NewString()}, []string{"recipient_id"}},
		{"neither", map[string]any{"currency": "NGN", "amount": "1", "reference": "a"}, []string{"recipient_id"}},
		{"recipient not a uuid", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "recipient_id": "r-1"}, []string{"recipient_id"}},
		{"no destination type", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": map[string]any{"bank_account": domestic("0123456789")}}, []string{"destination.type"}},
		{"crypto destination", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": map[string]any{"type": "CRYPTO_ADDRESS"}}, []string{"destination.type"}},
		{"domestic missing object", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": map[string]any{"type": "BANK_ACCOUNT"}}, []string{"destination.bank_account"}},
		{"domestic bad fields", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": dest("BANK_ACCOUNT", map[string]any{"account_number": "1", "bank_code": ""})}, []string{"destination.bank_account.account_number", "destination.bank_account.bank_code"}},
		{"us bad routing and scheme", map[string]any{"currency": "USD", "amount": "1", "reference": "a", "destination": dest("US_BANK_ACCOUNT", map[string]any{
			"account_owner_name": "A", "account_number": "1234", "routing_number": "123456789", "bank_name": "B", "account_type": "checking", "payout_scheme": "sepa", "address": addr("USA")})},
			[]string{"destination.us_bank_account.routing_number", "destination.us_bank_account.payout_scheme"}},
		{"us missing everything", map[string]any{"currency": "USD", "amount": "1", "reference": "a", "destination": dest("US_BANK_ACCOUNT", map[string]any{})},
			[]string{"destination.us_bank_account.account_owner_name", "destination.us_bank_account.account_number", "destination.us_bank_account.routing_number",
				"destination.us_bank_account.bank_name", "destination.us_bank_account.account_type", "destination.us_bank_account.payout_scheme", "destination.us_bank_account.address"}},
		{"swift bad iban and country", map[string]any{"currency": "USD", "amount": "1", "reference": "a", "destination": dest("SWIFT_BANK_ACCOUNT",
			func() map[string]any { s := swift("GB82WEST12345698765431"); s["account_country"] = "GB"; return s }())},
			[]string{"destination.swift_bank_account.iban", "destination.swift_bank_account.account_country"}},
		{"on_behalf_of without customer", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": d, "on_behalf_of": map[string]any{}}, []string{"on_behalf_of.customer_id"}},
		{"on_behalf_of not a uuid", map[string]any{"currency": "NGN", "amount": "1", "reference": "a", "destination": d, "on_behalf_of": map[string]any{"customer_id": "c"}}, []string{"on_behalf_of.customer_id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := r.Srv.Must(t, 400, "POST", "/v1/payments/transfers", r.M.SandboxKey, c.body)
			got := res.Fields()
			sort.Strings(got)
			want := slices.Clone(c.fields)
			sort.Strings(want)
			if res.Message != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Fatalf("%s", res)
			}
		})
	}
	r.Srv.Must(t, 400, "POST", "/v1/payments/transfers", r.M.SandboxKey, map[string]any{"currency": "NGN", "amount": 100, "reference": "a", "destination": d})
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "100.000000" {
		t.Fatalf("available %s", a)
	}
}

func TestTransferIdempotency(t *testing.T) {
	r := moneyouttest.New(t, moneyouttest.Options{})
	r.Fund(t, r.M.ID, "sandbox", "100")
	body := map[string]any{"currency": "USD", "amount": "10", "reference": "idem-1", "destination": dest("US_BANK_ACCOUNT", usBank("wire"))}
	for _, header := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
		key := "k-" + header
		body["reference"] = key
		first := r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body, header, key)
		again := r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body, header, key)
		if string(first.Body) != string(again.Body) || again.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("%s: %s / %s", header, first.Body, again.Body)
		}
	}
	// Without a key, the reference still refuses the duplicate.
	r.Srv.Must(t, 409, "POST", "/v1/payments/transfers", r.M.SandboxKey, body)
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "80.000000" {
		t.Fatalf("available %s", a)
	}
	// Crash between the debit and the response.
	r.TransferRoutes.AfterCreate = moneyouttest.CrashAfter(1)
	body["reference"] = "crash"
	if res := r.Srv.Do(t, "POST", "/v1/payments/transfers", r.M.SandboxKey, body, "Idempotency-Key", "crash"); res.Status != 500 {
		t.Fatalf("%s", res)
	}
	if a := r.Balance(t, r.M.ID, "sandbox", ledger.Available); a != "80.000000" {
		t.Fatalf("debit survived the crash: %s", a)
	}
	first := r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body, "Idempotency-Key", "crash")
	again := r.Srv.Must(t, 201, "POST", "/v1/payments/transfers", r.M.SandboxKey, body, "Idempotency-Key", "crash")
	if string(first.Body) != string(again.Body) || r.Balance(t, r.M.ID, "sandbox", ledger.Available) != "70.000000" {
		t.Fatalf("after the crash: %s / %s", first.Body, again.Body)
	}
	r.Verify(t)
}
