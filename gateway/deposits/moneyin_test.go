package deposits_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/engine"
	"svc/gateway/gatewaytest"
	gwrates "svc/gateway/rates"
	"svc/payments/balance"
	"svc/payments/deposits"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

func wantCode(t testing.TB, r gatewaytest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Message != code {
		t.Fatalf("got %s, want %d %s", r, status, code)
	}
}

func wantFields(t testing.TB, r gatewaytest.Response, fields ...string) {
	t.Helper()
	if r.Status != 400 {
		t.Fatalf("status %s, want 400 on %v", r, fields)
	}
	got := "," + strings.Join(r.Fields(), ",") + ","
	for _, f := range fields {
		if !strings.Contains(got, ","+f+",") {
			t.Fatalf("errors %v lack %s: %s", r.Fields(), f, r.Body)
		}
	}
}

// place rests a limit order of qty (whole units) at price (NGN) on symbol in env.
func (r *rig) place(t testing.TB, env, symbol string, side engine.Side, price, qty int64) {
	t.Helper()
	eng := r.engines[env]
	acct := engine.AccountID(uuid.New())
	for _, f := range []struct {
		a engine.Asset
		v int64
	}{{engine.NGN, 1 << 50}, {engine.USDT, 1 << 50}, {engine.USDC, 1 << 50}, {engine.USD, 1 << 50}} {
		if res, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: acct, Asset: f.a, Amount: f.v, TransferID: engine.TransferID(uuid.New())}); err != nil || res.Code != engine.OK {
			t.Fatal(res.Code, err)
		}
	}
	res, err := eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: acct, Symbol: symbol, OrderID: engine.OrderID(uuid.New()),
		Side: side, Type: engine.Limit, Price: engine.Price(price * 100), Qty: engine.Qty(qty * 100)})
	if err != nil || res.Code != engine.OK {
		t.Fatal(res.Code, err)
	}
}

func TestRates(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey

	t.Run("reference prices when the books are empty", func(t *testing.T) {
		rs := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates", key, nil))
		if len(rs) != 4 {
			t.Fatalf("%d rates, want USDT and USDC x buy and sell", len(rs))
		}
		for _, q := range rs {
			if q.Source != "reference" || q.From != "NGN" || q.TTLSeconds != 60 {
				t.Fatalf("%+v", q)
			}
			// 1600 x 1.005 = 1608 to buy, 1600 x 0.995 = 1592 to sell.
			if (q.Side == "buy" && q.Price != "1608.00") || (q.Side == "sell" && q.Price != "1592.00") {
				t.Fatalf("%+v", q)
			}
		}
	})
	t.Run("book prices plus or minus the spread", func(t *testing.T) {
		// Within the +-2% band around the 1600 reference, deep enough for the default
		// 100-unit quote size (payments/rates).
		r.place(t, "sandbox", "USDT-NGN", engine.Sell, 1601, 200)
		r.place(t, "sandbox", "USDT-NGN", engine.Buy, 1590, 200)
		rs := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?from=NGN&to=USDT", key, nil))
		for _, q := range rs {
			switch {
			case q.Side == "buy" && (q.Price != "1609.01" || q.Source != "orderbook" || q.Rate != "0.000621500177" || q.Pair != "NGN/USDT"):
				t.Fatalf("%+v", q)
			case q.Side == "sell" && q.Price != "1582.05":
				t.Fatalf("%+v", q)
			}
		}
		q := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?from=USDT&side=sell", key, nil))
		if len(q) != 1 || q[0].Rate != "1582.05" || q[0].Pair != "USDT/NGN" {
			t.Fatalf("%+v", q)
		}
		// live has its own, empty, books.
		l := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?to=USDT&side=buy", r.a.LiveKey, nil))
		if len(l) != 1 || l[0].Source != "reference" {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("an order far off the market neither moves a quote nor is quoted", func(t *testing.T) {
		// Issue 15: one 1-unit buy at 10x the market on an empty side used to move the sell
		// rate by 91%. Issue 27: it lies outside the band and is ignored as if absent, so the
		// side prices as an empty one (the reference), never from it; on a side with depth
		// it is skipped.
		r.place(t, "sandbox", "USDC-NGN", engine.Buy, 16000, 1)
		q0 := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?to=USDC&side=sell", key, nil))
		if len(q0) != 1 || q0[0].Source != "reference" || q0[0].Price != "1592.00" {
			t.Fatalf("%+v", q0)
		}
		r.place(t, "sandbox", "USDT-NGN", engine.Sell, 16000, 1)
		q := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?to=USDT&side=buy&amount=100000", key, nil))
		if len(q) != 1 || q[0].Price != "1609.01" {
			t.Fatalf("%+v", q)
		}
		// 200 units at 1601 are about 320,200 NGN: a larger size is refused as too thin.
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/rates?to=USDT&side=buy&amount=400000", key, nil), 503, "RATE_UNAVAILABLE")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/rates?to=USDT&amount=-1", key, nil), "amount")
	})
	t.Run("validation", func(t *testing.T) {
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/rates?from=EUR", key, nil), "from")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/rates?to=BTC", key, nil), "to")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/rates?from=USDT&to=USDC", key, nil), "to")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/rates?side=hold", key, nil), "side")
		if rr := r.srv.Do(t, "GET", "/v1/payments/rates", "", nil); rr.Status != 401 {
			t.Fatal(rr)
		}
	})
	t.Run("a rate id is locked once, before it expires, by its merchant", func(t *testing.T) {
		quote := func(key, side string) string {
			return decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates?to=USDT&side="+side, key, nil))[0].ID
		}
		id := quote(key, "buy")
		o := r.temporary(t, key, 16080, "rate_id", id)
		if o.Rate == nil || *o.Rate != "1609.01" || o.RateID == nil || *o.RateID != id {
			t.Fatalf("%+v", o)
		}
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": id}), 422, "RATE_ALREADY_USED")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/onramps", r.b.SandboxKey, map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": quote(key, "buy")}), "rate_id")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": quote(key, "sell")}), "rate_id")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/onramps", r.a.LiveKey, map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": quote(key, "buy")}), "rate_id")
		old := quote(key, "buy")
		r.clock.Advance(60 * time.Second)
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": old}), 422, "RATE_EXPIRED")
	})
}

func TestOnramps(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey
	o := r.temporary(t, key, "25000.50", "reference", "order-17")
	created, _ := time.Parse(time.RFC3339, o.CreatedAt)
	exp, _ := time.Parse(time.RFC3339, *o.ExpiresAt)
	if o.Type != "TEMPORARY" || o.Status != "ACTIVE" || len(o.AccountNumber) != 10 || o.BankName == "" ||
		*o.Amount != "25000.50" || *o.Rate != "1608.00" || exp.Sub(created) != 25*time.Minute ||
		o.Settlement.Mode != "INTERNAL_BALANCE" || o.Settlement.Asset != "USDT" || *o.Reference != "order-17" ||
		!strings.HasPrefix(o.AccountName, "Test Merchant") {
		t.Fatalf("%+v", o)
	}
	var n int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from events where type = 'onramp.completed' and merchant_id = $1`, r.a.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d onramp.completed events (%v)", n, err)
	}

	t.Run("validation failures", func(t *testing.T) {
		post := func(body any) gatewaytest.Response { return r.srv.Do(t, "POST", "/v1/payments/onramps", key, body) }
		cust := uuid.NewString()
		for _, tc := range []struct {
			body   any
			fields []string
		}{
			{map[string]any{}, []string{"type"}},
			{map[string]any{"type": "FOREVER"}, []string{"type"}},
			{map[string]any{"type": "TEMPORARY"}, []string{"amount"}},
			{map[string]any{"type": "TEMPORARY", "amount": 0}, []string{"amount"}},
			{map[string]any{"type": "TEMPORARY", "amount": -5}, []string{"amount"}},
			{map[string]any{"type": "TEMPORARY", "amount": "1.234"}, []string{"amount"}},
			{map[string]any{"type": "TEMPORARY", "amount": true}, []string{"amount"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "rate_id": "nope"}, []string{"rate_id"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "customer_id": "nope"}, []string{"customer_id"}},
			{map[string]any{"type": "PERMANENT"}, []string{"customer_id"}},
			{map[string]any{"type": "PERMANENT", "customer_id": cust, "amount": 100}, []string{"amount"}},
			{map[string]any{"type": "PERMANENT", "customer_id": cust, "rate_id": uuid.NewString()}, []string{"rate_id"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{}}, []string{"settlement.mode", "settlement.asset"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "CASH", "asset": "BTC"}}, []string{"settlement.mode", "settlement.asset"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT"}}, []string{"settlement.chain"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "BITCOIN", "destination_address": "x"}}, []string{"settlement.chain"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "TRON"}}, []string{"settlement.destination_address"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "ETHEREUM", "destination_address": "0x123"}}, []string{"settlement.destination_address"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "settlement": map[string]any{"mode": "INTERNAL_BALANCE", "asset": "USDT", "chain": "TRON"}}, []string{"settlement.chain"}},
			{map[string]any{"type": "TEMPORARY", "amount": 100, "reference": strings.Repeat("r", 201)}, []string{"reference"}},
			{map[string]any{"type": 7}, []string{"type"}},
		} {
			wantFields(t, post(tc.body), tc.fields...)
		}
		wantCode(t, post("{"), 400, "INVALID_JSON")
		if rr := r.srv.Do(t, "POST", "/v1/payments/onramps", "", map[string]any{}); rr.Status != 401 {
			t.Fatal(rr)
		}
	})
	t.Run("onchain settlement", func(t *testing.T) {
		rr := r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 5000,
			"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDC", "chain": "BASE", "destination_address": "0x" + strings.Repeat("ab", 20)}})
		got := decode[onrampJSON](t, rr)
		if *got.Settlement.Chain != "BASE" || got.Settlement.Asset != "USDC" {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("get, another merchant's id, the other environment", func(t *testing.T) {
		got := decode[onrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+o.ID, key, nil))
		if got.ID != o.ID || got.AccountNumber != o.AccountNumber {
			t.Fatalf("%+v", got)
		}
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/onramps/"+o.ID, r.b.SandboxKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/onramps/"+o.ID, r.a.LiveKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/onramps/not-a-uuid", key, nil), 404, "NOT_FOUND")
	})
	t.Run("live without a bank partner changes nothing", func(t *testing.T) {
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", r.a.LiveKey, map[string]any{"type": "TEMPORARY", "amount": 100}), 503, "PROVIDER_UNAVAILABLE")
		var n int
		_ = r.pool.QueryRow(context.Background(), `select count(*) from onramps where environment = 'live'`).Scan(&n)
		if n != 0 {
			t.Fatalf("%d live onramps", n)
		}
	})
	t.Run("permanent: customer and tier", func(t *testing.T) {
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "PERMANENT", "customer_id": uuid.NewString()}), 404, "NOT_FOUND")
		c := r.customer(t, key, "perm@example.com")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "PERMANENT", "customer_id": c}), 422, "KYC_TIER_REQUIRED")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", r.b.SandboxKey, map[string]any{"type": "PERMANENT", "customer_id": c}), 404, "NOT_FOUND")
		r.tier1(t, key, c)
		p := decode[onrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, map[string]any{"type": "PERMANENT", "customer_id": c,
			"settlement": map[string]any{"mode": "INTERNAL_BALANCE", "asset": "USDC"}}))
		if p.ExpiresAt != nil || p.Amount != nil || p.Rate != nil || *p.CustomerID != c || !strings.HasSuffix(p.AccountName, "Ada Obi") {
			t.Fatalf("%+v", p)
		}
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "PERMANENT", "customer_id": c}), 409, "CONFLICT")
		// A temporary onramp for a customer needs no tier.
		r.temporary(t, key, 100, "customer_id", r.customer(t, key, "temp@example.com"))
	})
	t.Run("list", func(t *testing.T) {
		rr := r.srv.Must(t, 200, "GET", "/v1/payments/onramps?limit=2", key, nil)
		page := decode[struct {
			Items []onrampJSON `json:"items"`
			Meta  struct {
				Total, Page, Limit, TotalPages int
			} `json:"meta"`
		}](t, rr)
		if len(page.Items) != 2 || page.Meta.Total != 4 || page.Meta.Limit != 2 || page.Items[0].CreatedAt < page.Items[1].CreatedAt {
			t.Fatalf("%s", rr.Body)
		}
		p := decode[struct {
			Items []onrampJSON `json:"items"`
		}](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps?status=ACTIVE&limit=100", r.b.SandboxKey, nil))
		if len(p.Items) != 0 {
			t.Fatalf("other merchant sees %d", len(p.Items))
		}
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/onramps?limit=101", key, nil), "limit")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/onramps?status=DONE", key, nil), "status")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/onramps?page=0", key, nil), "page")
	})
}

// customer creates a customer through the customers routes and returns its id.
func (r *rig) customer(t testing.TB, key, email string) string {
	t.Helper()
	var c struct {
		ID string `json:"id"`
	}
	r.srv.Must(t, 201, "POST", "/v1/customers", key, map[string]string{"email": email, "first_name": "Ada", "last_name": "Obi"}).Decode(t, &c)
	return c.ID
}

func (r *rig) tier1(t testing.TB, key, id string) {
	t.Helper()
	r.srv.Must(t, 200, "POST", "/v1/customers/"+id+"/tier1-verification", key, map[string]string{"bvn": "12345678901", "image_url": "https://example.com/me.jpg"})
}

// eventsOf lists the event types of the merchant whose data id is id (or every one when
// id is ""), oldest first.
func (r *rig) eventsOf(t testing.TB, merchant uuid.UUID, id string) []string {
	t.Helper()
	return pgtest.Strings(t, r.pool, `select type from events where merchant_id = $1
		and ($2 = '' or data->>'id' = $2 or data->>'deposit_id' = $2) order by created_at, id`, merchant, id)
}

func TestFullFlowCustomerPermanentAccountSettles(t *testing.T) {
	r := newRig(t, rigOptions{})
	key := r.a.SandboxKey
	r.endpoint(t, r.a.ID)
	c := r.customer(t, key, "flow@example.com")
	r.tier1(t, key, c)
	var va struct {
		ID            string `json:"id"`
		AccountNumber string `json:"accountNumber"`
	}
	r.srv.Must(t, 201, "POST", "/v1/customers/"+c+"/ngn-virtual-account", key, nil).Decode(t, &va)

	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": va.ID, "amount": "16080.00"}))
	if d.Status != "PENDING_FX" || d.Amount != "16080.00" || d.Currency != "NGN" || d.VirtualAccount.AccountNumber != va.AccountNumber {
		t.Fatalf("%+v", d)
	}
	got := r.waitDeposit(t, key, d.ID, "SETTLED")
	// 16,080.00 NGN at 1,608.00 NGN per USDT (reference 1,600 + 0.5 %) = 10 USDT.
	if *got.SettledAmount != "10.000000" || *got.Settlement.Rate != "1608.00" || got.Customer.ID != c ||
		*got.Customer.Email != "flow@example.com" || *got.Customer.Name != "Ada Obi" || got.SettledAt == nil {
		t.Fatalf("%+v", got)
	}
	if usd := r.customerUSD(t, key, c); usd != "10.00" {
		t.Fatalf("customer balance %s", usd)
	}
	want := []string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled", "customer.balance.credited"}
	if ev := r.eventsOf(t, r.a.ID, d.ID); strings.Join(ev, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", ev, want)
	}
	// One delivery per event to the endpoint, enqueued with it, in the same order.
	rows, err := r.pool.Query(context.Background(), `select e.type from river_job j join events e on e.id = (j.args->>'event_id')::uuid
		where j.kind = 'webhook_delivery' and e.merchant_id = $1 order by j.id`, r.a.ID)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	if all := r.eventsOf(t, r.a.ID, ""); strings.Join(jobs, " ") != strings.Join(all, " ") || !strings.Contains(strings.Join(all, " "), strings.Join(want, " ")) {
		t.Fatalf("deliveries %v, events %v", jobs, all)
	}
	// The merchant's own balance is untouched: the customer was credited.
	b := r.merchantBalance(t, key)
	if b.Available != "0.000000" {
		t.Fatalf("%+v", b)
	}
	mustVerify(t, r)
}

func mustVerify(t testing.TB, r *rig) {
	t.Helper()
	v, err := ledger.Verify(context.Background(), r.pool)
	if err != nil || len(v) > 0 {
		t.Fatalf("ledger verify: %v %v", v, err)
	}
}

type balanceJSON struct {
	Available string `json:"available"`
	Pending   string `json:"pending"`
	Currency  string `json:"currency"`
}

func (r *rig) merchantBalance(t testing.TB, key string) balanceJSON {
	return decode[balanceJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance", key, nil))
}

// customerUSD is the customer's balance as GET /v1/customers/{id}/balance answers it.
func (r *rig) customerUSD(t testing.TB, key, customer string) string {
	t.Helper()
	var bal struct {
		USD string `json:"usd"`
	}
	r.srv.Must(t, 200, "GET", "/v1/customers/"+customer+"/balance", key, nil).Decode(t, &bal)
	return bal.USD
}

// creditedBalances is the balance each customer.balance.credited event of the customer
// announced, in the events' order.
func (r *rig) creditedBalances(t testing.TB, customer string) []string {
	t.Helper()
	return pgtest.Strings(t, r.pool, `select data->>'balance' from events
		where type = 'customer.balance.credited' and data->>'customer_id' = $1 order by id`, customer)
}

func TestTemporaryOnrampExpiresAt25Minutes(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey
	o := r.temporary(t, key, 1000)
	id := uuid.MustParse(o.ID)
	r.clock.Advance(25*time.Minute - time.Second)
	if n, err := r.onramps.ExpireDue(context.Background(), r.clock.Now()); err != nil || n != 0 {
		t.Fatalf("sweep early: %d expired, %v", n, err)
	}
	if got := decode[onrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+o.ID, key, nil)); got.Status != "ACTIVE" {
		t.Fatalf("%+v", got)
	}
	r.clock.Advance(time.Second)
	// Reads say EXPIRED from expires_at before the sweep has stored it, and refuse money;
	// after the sweep they say and do the same.
	for _, swept := range []bool{false, true} {
		var status string
		_ = r.pool.QueryRow(context.Background(), `select status from onramps where id = $1`, id).Scan(&status)
		if want := map[bool]string{false: "ACTIVE", true: "EXPIRED"}[swept]; status != want {
			t.Fatalf("swept %v: stored %s, want %s", swept, status, want)
		}
		if got := decode[onrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+o.ID, key, nil)); got.Status != "EXPIRED" {
			t.Fatalf("swept %v: %+v", swept, got)
		}
		for _, filter := range []string{"EXPIRED", "ACTIVE"} {
			p := decode[struct {
				Items []onrampJSON `json:"items"`
			}](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps?status="+filter, key, nil))
			if found := len(p.Items) == 1 && p.Items[0].ID == o.ID; found != (filter == "EXPIRED") {
				t.Fatalf("swept %v: status=%s lists %+v", swept, filter, p)
			}
		}
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}), 422, "ONRAMP_NOT_ACTIVE")
		if !swept {
			if n, err := r.onramps.ExpireDue(context.Background(), r.clock.Now()); err != nil || n != 1 {
				t.Fatalf("sweep: %d expired, %v", n, err)
			}
		}
	}
	// Creating the onramp enqueued no job (issue 27: the sweep replaced the job per onramp).
	var n int
	if err := r.pool.QueryRow(context.Background(), `select count(*) from river_job where kind = 'onramp_expire'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d expiry jobs (%v)", n, err)
	}
}

func mustTime(t testing.TB, s string) time.Time {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestFlaggedDepositNeverSettles(t *testing.T) {
	r := newRig(t, rigOptions{})
	key := r.a.SandboxKey
	o := r.temporary(t, key, 1608)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID, "should_flag": true}))
	r.waitDeposit(t, key, d.ID, "FLAGGED")
	// Run the step again, as a stray retry would: nothing moves.
	if err := r.deposits.Advance(context.Background(), uuid.MustParse(d.ID), deposits.PendingFX); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	got := r.waitDeposit(t, key, d.ID, "FLAGGED")
	if got.SettledAmount != nil || got.SettledAt != nil {
		t.Fatalf("%+v", got)
	}
	if ev := r.eventsOf(t, r.a.ID, d.ID); strings.Join(ev, " ") != "deposit.received deposit.flagged" {
		t.Fatal(ev)
	}
	if b := r.merchantBalance(t, key); b.Available != "0.000000" || b.Pending != "0.000000" {
		t.Fatalf("%+v", b)
	}
	// The onramp was paid its amount: INACTIVE, no second deposit.
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}), 422, "ONRAMP_NOT_ACTIVE")
	mustVerify(t, r)
}

func TestDepositsRoutes(t *testing.T) {
	r := newRig(t, rigOptions{})
	key := r.a.SandboxKey
	o := r.temporary(t, key, 16080)
	good := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	settled := r.waitDeposit(t, key, good.ID, "SETTLED")
	if *settled.SettledAmount != "10.000000" || settled.Customer != nil || settled.PaymentReference != o.AccountNumber {
		t.Fatalf("%+v", settled)
	}
	if b := r.merchantBalance(t, key); b.Available != "10.000000" || b.Currency != "USDT" {
		t.Fatalf("%+v", b)
	}
	o2 := r.temporary(t, key, 5000)
	bad := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o2.ID, "amount": 4999.99}))
	failed := r.waitDeposit(t, key, bad.ID, "FAILED")
	if failed.FailureReason == nil || !strings.HasPrefix(*failed.FailureReason, "AMOUNT_MISMATCH") {
		t.Fatalf("%+v", failed)
	}
	if ev := r.eventsOf(t, r.a.ID, bad.ID); strings.Join(ev, " ") != "deposit.received deposit.failed" {
		t.Fatal(ev)
	}
	// Still ACTIVE for the right amount.
	if got := decode[onrampJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/onramps/"+o2.ID, key, nil)); got.Status != "ACTIVE" {
		t.Fatalf("%+v", got)
	}
	onchain := decode[onrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 1608,
		"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDT", "chain": "ETHEREUM", "destination_address": "0x" + strings.Repeat("cd", 20)}}))
	oc := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": onchain.ID}))
	ocs := r.waitDeposit(t, key, oc.ID, "SETTLED")
	if ocs.Settlement.TxHash == nil || !strings.HasPrefix(*ocs.Settlement.TxHash, "0x") || *ocs.Settlement.Chain != "ETHEREUM" {
		t.Fatalf("%+v", ocs.Settlement)
	}

	t.Run("simulate refusals", func(t *testing.T) {
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", r.a.LiveKey, map[string]any{"onramp_id": o.ID}), 403, "SANDBOX_ONLY")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{}), "onramp_id")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": "x"}), "onramp_id")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o2.ID, "amount": "-1"}), "amount")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o2.ID, "should_flag": "yes"}), "should_flag")
		wantFields(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"offramp_id": uuid.NewString(), "amount": "1"}), "offramp_id")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": uuid.NewString()}), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", r.b.SandboxKey, map[string]any{"onramp_id": o2.ID}), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}), 422, "ONRAMP_NOT_ACTIVE")
	})
	t.Run("get", func(t *testing.T) {
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/deposits/"+good.ID, r.b.SandboxKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/deposits/"+good.ID, r.a.LiveKey, nil), 404, "NOT_FOUND")
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/deposits/zzz", key, nil), 404, "NOT_FOUND")
	})
	t.Run("list and filters", func(t *testing.T) {
		count := func(q string) int {
			rr := r.srv.Must(t, 200, "GET", "/v1/payments/deposits"+q, key, nil)
			return len(decode[[]depositJSON](t, rr))
		}
		for q, want := range map[string]int{
			"": 3, "?status=COMPLETED": 2, "?status=SETTLED": 2, "?status=FAILED": 1, "?status=PENDING": 0, "?status=FLAGGED": 0,
			"?type=NGN_DEPOSIT": 3, "?type=CRYPTO_DEPOSIT": 0, "?onramp_id=" + o.ID: 1, "?offramp_id=" + uuid.NewString(): 0,
			"?per_page=1": 1, "?per_page=2&page=2": 1,
		} {
			if got := count(q); got != want {
				t.Fatalf("%q: %d deposits, want %d", q, got, want)
			}
		}
		rr := r.srv.Must(t, 200, "GET", "/v1/payments/deposits?per_page=2", key, nil)
		if !strings.Contains(string(rr.Meta), `"total":3`) || !strings.Contains(string(rr.Meta), `"total_pages":2`) {
			t.Fatalf("meta %s", rr.Meta)
		}
		created := mustTime(t, good.CreatedAt)
		lagos := time.FixedZone("WAT", 3600)
		from := created.In(lagos).Format(time.RFC3339Nano)
		if got := count("?from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(created.Format(time.RFC3339Nano))); got != 1 {
			t.Fatalf("from/to: %d", got)
		}
		// An unescaped + (decoded as a space) is understood.
		if got := count("?to=" + created.Add(-time.Millisecond).In(lagos).Format("2006-01-02T15:04:05.000-07:00")); got != 0 {
			t.Fatalf("to before: %d", got)
		}
		if got := count("?to=" + strings.Replace(created.In(lagos).Add(time.Hour).Format(time.RFC3339), "+", "%2B", 1)); got != 3 {
			t.Fatalf("to after: %d", got)
		}
		if n := len(decode[[]depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits", r.b.SandboxKey, nil))); n != 0 {
			t.Fatal(n)
		}
		if n := len(decode[[]depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits", r.a.LiveKey, nil))); n != 0 {
			t.Fatal(n)
		}
		for q, f := range map[string]string{"?status=DONE": "status", "?type=X": "type", "?onramp_id=x": "onramp_id",
			"?from=yesterday": "from", "?to=2025-01-01T00:00:00": "to", "?per_page=101": "per_page", "?page=0": "page",
			"?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z": "to"} {
			wantFields(t, r.srv.Do(t, "GET", "/v1/payments/deposits"+q, key, nil), f)
		}
	})
	mustVerify(t, r)
}

func TestSettlementHookRunsInTheSettlingTransaction(t *testing.T) {
	// The hook's runs are counted in the settling transaction (countingHook): a count kept
	// outside it would also count a run PostgreSQL aborted and InTx reran.
	var o onrampJSON
	hook := &countingHook{check: func(ctx context.Context, tx pgx.Tx, d deposits.Deposit) error {
		var status string
		if err := tx.QueryRow(ctx, `select status from deposits where id = $1`, d.ID).Scan(&status); err != nil {
			return err
		}
		if status != "SETTLED" {
			return fmt.Errorf("hook sees %s", status)
		}
		if d.OnrampID.String() != o.ID || d.Amount.String() != "1608.00" {
			return fmt.Errorf("hook given %+v", d)
		}
		return nil
	}}
	r := newRig(t, rigOptions{noWorkers: true, settled: hook})
	countHookRuns(t, r)
	key := r.a.SandboxKey
	o = r.temporary(t, key, 1608)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	id := uuid.MustParse(d.ID)
	ctx := context.Background()
	if err := r.deposits.Advance(ctx, id, deposits.PendingFX); err != nil {
		t.Fatal(err)
	}
	hook.refusing.Store(id, struct{}{})
	if err := r.deposits.Advance(ctx, id, deposits.PendingWithdrawal); err == nil {
		t.Fatal("a failing hook must fail the step")
	}
	if got := r.waitDeposit(t, key, d.ID, "PENDING_WITHDRAWAL"); got.SettledAt != nil {
		t.Fatalf("rolled back step left %+v", got)
	}
	if b := r.merchantBalance(t, key); b.Available != "0.000000" || b.Pending != "1.000000" {
		t.Fatalf("%+v", b)
	}
	hook.refusing.Delete(id)
	for range 2 {
		if err := r.deposits.Advance(ctx, id, deposits.PendingWithdrawal); err != nil {
			t.Fatal(err)
		}
	}
	var ran uuid.UUID
	if runs, distinct := hookRuns(t, r); runs != 1 || distinct != 1 {
		t.Fatalf("the hook committed %d runs (%d deposits), want one", runs, distinct)
	}
	if err := r.pool.QueryRow(ctx, `select deposit_id from settle_hook_runs`).Scan(&ran); err != nil || ran != id {
		t.Fatalf("the hook ran for %s (%v), want %s", ran, err, id)
	}
	if b := r.merchantBalance(t, key); b.Available != "1.000000" || b.Pending != "0.000000" {
		t.Fatalf("%+v", b)
	}
	mustVerify(t, r)
}

// fundMerchant settles a deposit of usdt x 1608 NGN into the merchant's balance.
func (r *rig) fundMerchant(t testing.TB, key string, usdt int) {
	t.Helper()
	o := r.temporary(t, key, usdt*1608)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	r.waitDeposit(t, key, d.ID, "SETTLED")
}

type transferJSON struct {
	ID            string  `json:"id"`
	Direction     string  `json:"direction"`
	AmountUSD     string  `json:"amount_usd"`
	Status        string  `json:"status"`
	FailureReason *string `json:"failure_reason"`
}

func (r *rig) waitTransfer(t testing.TB, key, id, want string) transferJSON {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := decode[struct {
			Items []transferJSON `json:"items"`
		}](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance/transfers?limit=100", key, nil))
		for _, tr := range p.Items {
			if tr.ID == id && tr.Status == want {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %s not %s after 10 s: %+v", id, want, p.Items)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tradingUSDT(r *rig, env string, m uuid.UUID) int64 {
	return r.engines[env].Balances(engine.AccountID(m))[engine.USDT].Available
}

func TestMerchantBalanceAndTransfers(t *testing.T) {
	r := newRig(t, rigOptions{})
	key := r.a.SandboxKey
	b := r.merchantBalance(t, key)
	if b.Available != "0.000000" || b.Pending != "0.000000" || b.Currency != "USDT" {
		t.Fatalf("%+v", b)
	}
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "1"}), 422, "INSUFFICIENT_BALANCE")
	r.fundMerchant(t, key, 25)

	tr := decode[transferJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "10.5"}))
	if tr.Status != "PENDING" || tr.Direction != "to_trading" || tr.AmountUSD != "10.500000" {
		t.Fatalf("%+v", tr)
	}
	r.waitTransfer(t, key, tr.ID, "COMPLETED")
	if got := tradingUSDT(r, "sandbox", r.a.ID); got != 10_500_000 {
		t.Fatalf("trading USDT %d", got)
	}
	if b := r.merchantBalance(t, key); b.Available != "14.500000" || b.Pending != "0.000000" {
		t.Fatalf("%+v", b)
	}
	back := decode[transferJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "0.5", "direction": "to_payments"}))
	r.waitTransfer(t, key, back.ID, "COMPLETED")
	too := decode[transferJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "1000", "direction": "to_payments"}))
	failed := r.waitTransfer(t, key, too.ID, "FAILED")
	if failed.FailureReason == nil || !strings.HasPrefix(*failed.FailureReason, "INSUFFICIENT_BALANCE") {
		t.Fatalf("%+v", failed)
	}
	if got := tradingUSDT(r, "sandbox", r.a.ID); got != 10_000_000 {
		t.Fatalf("trading USDT %d", got)
	}
	if b := r.merchantBalance(t, key); b.Available != "15.000000" {
		t.Fatalf("%+v", b)
	}

	t.Run("validation", func(t *testing.T) {
		post := func(body any) gatewaytest.Response {
			return r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", key, body)
		}
		wantFields(t, post(map[string]any{}), "amount_usd")
		wantFields(t, post(map[string]any{"amount_usd": "ten"}), "amount_usd")
		wantFields(t, post(map[string]any{"amount_usd": "0"}), "amount_usd")
		wantFields(t, post(map[string]any{"amount_usd": "1.0000001"}), "amount_usd")
		wantFields(t, post(map[string]any{"amount_usd": 5}), "amount_usd")
		wantFields(t, post(map[string]any{"amount_usd": "1", "direction": "sideways"}), "direction")
	})
	t.Run("list, filter, tenancy", func(t *testing.T) {
		p := decode[struct {
			Items []transferJSON `json:"items"`
		}](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance/transfers?status=FAILED", key, nil))
		if len(p.Items) != 1 || p.Items[0].ID != too.ID {
			t.Fatalf("%+v", p)
		}
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/merchant/balance/transfers?status=LOST", key, nil), "status")
		wantFields(t, r.srv.Do(t, "GET", "/v1/payments/merchant/balance/transfers?limit=0", key, nil), "limit")
		for _, k := range []string{r.b.SandboxKey, r.a.LiveKey} {
			q := decode[struct {
				Items []transferJSON `json:"items"`
			}](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/balance/transfers", k, nil))
			if len(q.Items) != 0 {
				t.Fatalf("%+v", q)
			}
			if b := r.merchantBalance(t, k); b.Available != "0.000000" {
				t.Fatalf("%+v", b)
			}
		}
	})
	t.Run("idempotent transfer", func(t *testing.T) {
		h := []string{"X-Idempotency-Key", "move-1"}
		one := r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "1"}, h...)
		two := r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "1"}, h...)
		if string(one.Data) != string(two.Data) || two.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("%s / %s %v", one.Data, two.Data, two.Header)
		}
		wantCode(t, r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "2"}, h...), 422, "IDEMPOTENCY_KEY_REUSED")
		r.waitTransfer(t, key, decode[transferJSON](t, one).ID, "COMPLETED")
		if b := r.merchantBalance(t, key); b.Available != "14.000000" {
			t.Fatalf("%+v", b)
		}
	})
	t.Run("funding addresses", func(t *testing.T) {
		type addrs struct {
			Addresses []struct{ Chain, Asset, Address string } `json:"addresses"`
		}
		a1 := decode[addrs](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/funding", key, nil))
		a2 := decode[addrs](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/funding", key, nil))
		b1 := decode[addrs](t, r.srv.Must(t, 200, "GET", "/v1/payments/merchant/funding", r.b.SandboxKey, nil))
		if len(a1.Addresses) != 14 || fmt.Sprint(a1) != fmt.Sprint(a2) || a1.Addresses[0].Address == b1.Addresses[0].Address {
			t.Fatalf("%+v %+v", a1, b1)
		}
		wantCode(t, r.srv.Do(t, "GET", "/v1/payments/merchant/funding", r.a.LiveKey, nil), 503, "PROVIDER_UNAVAILABLE")
	})
	mustVerify(t, r)
}

// A crash after the engine journaled the credit but before the ledger committed: the job
// runs again, re-submits the same TransferID (AlreadyApplied) and completes it once.
func TestTransferCompletesExactlyOnceAcrossARestart(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey
	ctx := context.Background()
	o := r.temporary(t, key, 5*1608)
	d := decode[depositJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": o.ID}))
	for _, from := range []string{deposits.PendingFX, deposits.PendingWithdrawal} {
		if err := r.deposits.Advance(ctx, uuid.MustParse(d.ID), from); err != nil {
			t.Fatal(err)
		}
	}
	tr := decode[transferJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/merchant/balance/transfer", key, map[string]any{"amount_usd": "3"}))
	id := uuid.MustParse(tr.ID)
	if b := r.merchantBalance(t, key); b.Available != "2.000000" || b.Pending != "3.000000" {
		t.Fatalf("%+v", b)
	}
	// The first run reached the engine, then the process died.
	res, err := r.engines["sandbox"].Submit(&engine.Command{Kind: engine.CmdCredit, Account: engine.AccountID(r.a.ID), Asset: engine.USDT,
		Amount: 3_000_000, TransferID: engine.TransferID(id)})
	if err != nil || res.Code != engine.OK {
		t.Fatal(res.Code, err)
	}
	for range 3 { // the job again (and a duplicate run)
		if err := r.balance.Process(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	r.waitTransfer(t, key, tr.ID, "COMPLETED")
	if got := tradingUSDT(r, "sandbox", r.a.ID); got != 3_000_000 {
		t.Fatalf("trading USDT %d, want 3 USDT credited once", got)
	}
	if b := r.merchantBalance(t, key); b.Available != "2.000000" || b.Pending != "0.000000" {
		t.Fatalf("%+v", b)
	}
	var n int
	_ = r.pool.QueryRow(ctx, `select count(*) from river_job where kind = 'merchant_balance_transfer' and args->>'transfer_id' = $1`, tr.ID).Scan(&n)
	if n != 1 {
		t.Fatalf("%d transfer jobs", n)
	}
	mustVerify(t, r)
}

func TestFiftyParallelRequestsWithOneKeyCreateOneOnramp(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true})
	key := r.a.SandboxKey
	body := map[string]any{"type": "TEMPORARY", "amount": 2500}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[string]int{}
		code = map[int]int{}
	)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := r.srv.Do(t, "POST", "/v1/payments/onramps", key, body, "X-Idempotency-Key", "order-42")
			mu.Lock()
			defer mu.Unlock()
			code[rr.Status]++
			if rr.Status == 201 {
				ids[decode[onrampJSON](t, rr).ID]++
			} else if rr.Message != "IDEMPOTENCY_KEY_IN_USE" {
				t.Errorf("%s", rr)
			}
		}()
	}
	wg.Wait()
	var n int
	_ = r.pool.QueryRow(context.Background(), `select count(*) from onramps where merchant_id = $1`, r.a.ID).Scan(&n)
	if n != 1 || len(ids) != 1 || code[201]+code[409] != 50 {
		t.Fatalf("%d onramps, ids %v, statuses %v", n, ids, code)
	}
	rr := r.srv.Must(t, 201, "POST", "/v1/payments/onramps", key, body, "X-Idempotency-Key", "order-42")
	if rr.Header["Idempotent-Replayed"] != "true" || ids[decode[onrampJSON](t, rr).ID] == 0 {
		t.Fatalf("%s %v", rr, rr.Header)
	}
	wantCode(t, r.srv.Do(t, "POST", "/v1/payments/onramps", key, map[string]any{"type": "TEMPORARY", "amount": 2501}, "X-Idempotency-Key", "order-42"), 422, "IDEMPOTENCY_KEY_REUSED")
	// The key is the merchant's own: another merchant (or live) starts afresh.
	r.srv.Must(t, 201, "POST", "/v1/payments/onramps", r.b.SandboxKey, body, "X-Idempotency-Key", "order-42")
	var events int
	_ = r.pool.QueryRow(context.Background(), `select count(*) from events where merchant_id = $1 and type = 'onramp.completed'`, r.a.ID).Scan(&events)
	if events != 1 {
		t.Fatalf("%d onramp.completed events", events)
	}
}

func seed(t testing.TB) uint64 {
	if s := os.Getenv("SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := uint64(time.Now().UnixNano())
	t.Logf("SEED=%d", n)
	return n
}

// A random mix of onramps, deposits (some flagged, some of the wrong amount, some
// on-chain), customer accounts and transfers both ways over two merchants, worked
// concurrently by the job workers; then every ledger invariant holds. With the deposits
// options as the rigs set them (every step a job) and as svcd sets them (converted and
// settled on receipt where it can, issue 27).
func TestRandomWorkloadThenLedgerVerify(t *testing.T) {
	for _, c := range []struct {
		name string
		o    rigOptions
	}{{"jobs", rigOptions{}}, {"svcd", rigOptions{settleInConversion: true, convertOnReceipt: true}}} {
		t.Run(c.name, func(t *testing.T) { randomWorkload(t, c.o) })
	}
}

func randomWorkload(t *testing.T, o rigOptions) {
	r := newRig(t, o)
	rng := rand.New(rand.NewPCG(seed(t), 7))
	keys := []string{r.a.SandboxKey, r.b.SandboxKey}
	var custs [2][]string
	for i, k := range keys {
		for j := range 2 {
			c := r.customer(t, k, fmt.Sprintf("c%d-%d@example.com", i, j))
			r.tier1(t, k, c)
			custs[i] = append(custs[i], c)
		}
	}
	type pending struct{ key, id string }
	var deps []pending
	for range 40 {
		m := rng.IntN(2)
		k := keys[m]
		amount := 1000 + rng.IntN(50000)
		var o onrampJSON
		switch rng.IntN(4) {
		case 0:
			o = r.temporary(t, k, amount)
		case 1:
			o = r.temporary(t, k, amount, "customer_id", custs[m][rng.IntN(2)])
		case 2:
			c := custs[m][rng.IntN(2)]
			rr := r.srv.Do(t, "POST", "/v1/payments/onramps", k, map[string]any{"type": "PERMANENT", "customer_id": c})
			if rr.Status == 409 {
				var va struct {
					ID string `json:"id"`
				}
				r.srv.Must(t, 200, "GET", "/v1/customers/"+c+"/ngn-virtual-account", k, nil).Decode(t, &va)
				o.ID = va.ID
			} else if rr.Status == 201 {
				o = decode[onrampJSON](t, rr)
			} else {
				t.Fatal(rr)
			}
		default:
			o = decode[onrampJSON](t, r.srv.Must(t, 201, "POST", "/v1/payments/onramps", k, map[string]any{"type": "TEMPORARY", "amount": amount,
				"settlement": map[string]any{"mode": "ONCHAIN", "asset": "USDC", "chain": "POLYGON", "destination_address": "0x" + strings.Repeat("0f", 20)}}))
		}
		body := map[string]any{"onramp_id": o.ID, "should_flag": rng.IntN(8) == 0}
		if rng.IntN(6) == 0 {
			body["amount"] = amount + 1
		}
		rr := r.srv.Must(t, 201, "POST", "/v1/payments/sandbox/deposits", k, body)
		deps = append(deps, pending{k, decode[depositJSON](t, rr).ID})
		if rng.IntN(4) == 0 {
			dir := []string{"to_trading", "to_payments"}[rng.IntN(2)]
			rr := r.srv.Do(t, "POST", "/v1/payments/merchant/balance/transfer", k, map[string]any{"amount_usd": fmt.Sprintf("%d.%02d", rng.IntN(5), rng.IntN(100)), "direction": dir})
			if rr.Status != 201 && rr.Message != "INSUFFICIENT_BALANCE" && !(rr.Status == 400) {
				t.Fatal(rr)
			}
		}
	}
	for _, d := range deps {
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := decode[depositJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/deposits/"+d.id, d.key, nil))
			if got.Status == "SETTLED" || got.Status == "FLAGGED" || got.Status == "FAILED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deposit %s stuck at %s", d.id, got.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var n int
		_ = r.pool.QueryRow(context.Background(), `select count(*) from merchant_balance_transfers where status = 'PENDING'`).Scan(&n)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transfers still pending", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustVerify(t, r)
	// The merchants' trading balances equal what their completed transfers moved.
	for i, m := range []uuid.UUID{r.a.ID, r.b.ID} {
		var net int64
		_ = r.pool.QueryRow(context.Background(), `select coalesce(sum(case direction when 'to_trading' then amount else -amount end), 0)
			from merchant_balance_transfers where merchant_id = $1 and status = 'COMPLETED'`, m).Scan(&net)
		if got := tradingUSDT(r, "sandbox", m); got != net {
			t.Fatalf("merchant %d: trading %d, transfers %d", i, got, net)
		}
	}
	_ = money.USDT
	_ = balance.Pending
	_ = onramps.Active
	_ = postgres.InTx
}
