package customers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	gwidem "svc/gateway/idempotency"
	gwva "svc/gateway/virtualaccounts"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/virtualaccounts"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

type env struct {
	srv         *gatewaytest.Server
	pool        *pgxpool.Pool
	m, other    authtest.Merchant
	sandboxBank string
}

func setup(t *testing.T) *env {
	t.Helper()
	pool, _ := pgtest.New(t)
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(client)
	envs := providers.Default(providers.SandboxConfig{BankCode: "999", BankName: "Svc Sandbox Bank"})
	idem := gwidem.Middleware(idempotency.New(pool, idempotency.Config{}))
	srv := gatewaytest.New(t, pool,
		gwcustomers.New(customers.NewService(pool, rec, envs, nil), idem),
		gwva.New(virtualaccounts.NewService(pool, rec, envs, nil), idem))
	return &env{srv: srv, pool: pool, m: authtest.New(t, pool), other: authtest.New(t, pool), sandboxBank: "999"}
}

func (e *env) events(t *testing.T, m authtest.Merchant, typ events.Type) int {
	var n int
	if err := e.pool.QueryRow(context.Background(), `select count(*) from events where merchant_id = $1 and type = $2`, m.ID, string(typ)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

type customer struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	KYCTier   string `json:"kyc_tier"`
	CreatedAt string `json:"created_at"`
}

func (e *env) create(t *testing.T, key, email string) customer {
	t.Helper()
	var c customer
	e.srv.Must(t, 201, "POST", "/v1/customers", key, map[string]string{"email": email, "first_name": "Ada", "last_name": "Obi"}).Decode(t, &c)
	return c
}

func wantFields(t *testing.T, r gatewaytest.Response, fields ...string) {
	t.Helper()
	if r.Status != 400 {
		t.Fatalf("status %s, want 400 on %v", r, fields)
	}
	got := strings.Join(r.Fields(), ",")
	for _, f := range fields {
		if !strings.Contains(","+got+",", ","+f+",") {
			t.Fatalf("errors %v lack %s: %s", r.Fields(), f, r.Body)
		}
	}
}

func TestCreateGetPatch(t *testing.T) {
	e := setup(t)
	c := e.create(t, e.m.SandboxKey, "Ada@Example.com")
	if c.Email != "ada@example.com" || c.KYCTier != "TIER_0" || !strings.HasSuffix(c.CreatedAt, "Z") || len(c.CreatedAt) != 24 {
		t.Fatalf("customer = %+v", c)
	}
	if id, err := uuid.Parse(c.ID); err != nil || id.Version() != 7 {
		t.Fatalf("id %s is not a UUIDv7", c.ID)
	}
	if n := e.events(t, e.m, events.CustomerCreated); n != 1 {
		t.Fatalf("%d customer.created events", n)
	}

	t.Run("validation failures", func(t *testing.T) {
		long := strings.Repeat("a", 101)
		for _, tc := range []struct {
			body   any
			fields []string
		}{
			{map[string]any{}, []string{"email", "first_name", "last_name"}},
			{map[string]any{"email": "not-an-email", "first_name": "A", "last_name": "B"}, []string{"email"}},
			{map[string]any{"email": "x@example.com", "first_name": long, "last_name": "B"}, []string{"first_name"}},
			{map[string]any{"email": "x@example.com", "first_name": "A", "last_name": ""}, []string{"last_name"}},
			{map[string]any{"email": "x@example.com", "first_name": 5, "last_name": "B"}, []string{"first_name"}},
		} {
			wantFields(t, e.srv.Do(t, "POST", "/v1/customers", e.m.SandboxKey, tc.body), tc.fields...)
		}
		if r := e.srv.Do(t, "POST", "/v1/customers", e.m.SandboxKey, "{not json"); r.Status != 400 || r.Message != "INVALID_JSON" {
			t.Fatal(r)
		}
		if r := e.srv.Do(t, "POST", "/v1/customers", "", map[string]string{}); r.Status != 401 {
			t.Fatal(r)
		}
	})

	t.Run("email unique per merchant and environment", func(t *testing.T) {
		r := e.srv.Must(t, 409, "POST", "/v1/customers", e.m.SandboxKey, map[string]string{"email": "ADA@example.com", "first_name": "A", "last_name": "B"})
		if r.Message != "CUSTOMER_EXISTS" {
			t.Fatal(r)
		}
		e.create(t, e.m.LiveKey, "ada@example.com")
		e.create(t, e.other.SandboxKey, "ada@example.com")
	})

	t.Run("get", func(t *testing.T) {
		var got customer
		e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID, e.m.SandboxKey, nil).Decode(t, &got)
		if got != c {
			t.Fatalf("%+v != %+v", got, c)
		}
		for _, key := range []string{e.other.SandboxKey, e.m.LiveKey} {
			if r := e.srv.Must(t, 404, "GET", "/v1/customers/"+c.ID, key, nil); r.Message != "NOT_FOUND" {
				t.Fatal(r)
			}
		}
		e.srv.Must(t, 404, "GET", "/v1/customers/not-a-uuid", e.m.SandboxKey, nil)
		e.srv.Must(t, 404, "GET", "/v1/customers/"+uuid.NewString(), e.m.SandboxKey, nil)
	})

	t.Run("patch", func(t *testing.T) {
		var got customer
		e.srv.Must(t, 200, "PATCH", "/v1/customers/"+c.ID, e.m.SandboxKey, map[string]string{"last_name": "Okafor"}).Decode(t, &got)
		if got.LastName != "Okafor" || got.FirstName != "Ada" {
			t.Fatalf("%+v", got)
		}
		wantFields(t, e.srv.Do(t, "PATCH", "/v1/customers/"+c.ID, e.m.SandboxKey, map[string]string{}), "first_name")
		wantFields(t, e.srv.Do(t, "PATCH", "/v1/customers/"+c.ID, e.m.SandboxKey, map[string]string{"first_name": ""}), "first_name")
		wantFields(t, e.srv.Do(t, "PATCH", "/v1/customers/"+c.ID, e.m.SandboxKey, map[string]string{"last_name": strings.Repeat("x", 101)}), "last_name")
		e.srv.Must(t, 404, "PATCH", "/v1/customers/"+c.ID, e.other.SandboxKey, map[string]string{"first_name": "Eve"})
		e.srv.Must(t, 404, "PATCH", "/v1/customers/"+c.ID, e.m.LiveKey, map[string]string{"first_name": "Eve"})
	})

	t.Run("idempotent create", func(t *testing.T) {
		body := map[string]string{"email": "idem@example.com", "first_name": "I", "last_name": "D"}
		a := e.srv.Must(t, 201, "POST", "/v1/customers", e.m.SandboxKey, body, "X-Idempotency-Key", "cust-1")
		b := e.srv.Must(t, 201, "POST", "/v1/customers", e.m.SandboxKey, body, "X-Idempotency-Key", "cust-1")
		if string(a.Body) != string(b.Body) || b.Header["Idempotent-Replayed"] != "true" {
			t.Fatalf("%s / %s", a.Body, b.Body)
		}
	})
}

func TestListCursor(t *testing.T) {
	e := setup(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, e.create(t, e.m.SandboxKey, fmt.Sprintf("c%d@example.com", i)).ID)
	}
	e.create(t, e.m.LiveKey, "live@example.com")
	e.create(t, e.other.SandboxKey, "other@example.com")
	type page struct {
		Items      []customer `json:"items"`
		NextCursor *string    `json:"next_cursor"`
	}
	var got []string
	path := "/v1/customers?limit=2"
	for pages := 0; ; pages++ {
		var p page
		e.srv.Must(t, 200, "GET", path, e.m.SandboxKey, nil).Decode(t, &p)
		for _, c := range p.Items {
			got = append(got, c.ID)
		}
		if p.NextCursor == nil {
			break
		}
		if pages > 5 {
			t.Fatal("too many pages")
		}
		path = "/v1/customers?limit=2&cursor=" + *p.NextCursor
	}
	if len(got) != 5 || got[0] != ids[4] || got[4] != ids[0] {
		t.Fatalf("pages gave %v, want newest first of %v", got, ids)
	}
	var p page
	e.srv.Must(t, 200, "GET", "/v1/customers?email=C3@example.com", e.m.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 1 || p.Items[0].ID != ids[3] || p.NextCursor != nil {
		t.Fatalf("email filter: %+v", p)
	}
	e.srv.Must(t, 200, "GET", "/v1/customers?email=c3@example", e.m.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 0 {
		t.Fatal("email filter is not an exact match")
	}
	e.srv.Must(t, 200, "GET", "/v1/customers?kyc_tier=UNVERIFIED&limit=200", e.m.SandboxKey, nil).Decode(t, &p)
	if len(p.Items) != 5 {
		t.Fatalf("kyc_tier filter: %d", len(p.Items))
	}
	e.srv.Must(t, 200, "GET", "/v1/customers", e.m.LiveKey, nil).Decode(t, &p)
	if len(p.Items) != 1 || p.Items[0].Email != "live@example.com" {
		t.Fatalf("live list: %+v", p)
	}
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?limit=201", e.m.SandboxKey, nil), "limit")
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?limit=0", e.m.SandboxKey, nil), "limit")
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?cursor=%%%", e.m.SandboxKey, nil), "cursor")
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?cursor=bm90LWEtdXVpZA", e.m.SandboxKey, nil), "cursor")
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers?kyc_tier=GOLD", e.m.SandboxKey, nil), "kyc_tier")
}

type verification struct {
	ID              *string   `json:"id"`
	Tier            string    `json:"tier"`
	Status          string    `json:"status"`
	Reason          *string   `json:"reason"`
	KYCTier         string    `json:"kyc_tier"`
	Customer        *customer `json:"customer"`
	VerificationURL string    `json:"verification_url"`
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

func TestKYC(t *testing.T) {
	e := setup(t)
	c := e.create(t, e.m.SandboxKey, "kyc@example.com")
	t1 := "/v1/customers/" + c.ID + "/tier1-verification"
	t2 := "/v1/customers/" + c.ID + "/tier2-verification"

	t.Run("tier 1 validation", func(t *testing.T) {
		wantFields(t, e.srv.Do(t, "POST", t1, e.m.SandboxKey, map[string]string{}), "bvn", "image_url")
		wantFields(t, e.srv.Do(t, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "1234567890", "image_url": "https://x.test/a.jpg"}), "bvn")
		wantFields(t, e.srv.Do(t, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "1234567890a", "image_url": "https://x.test/a.jpg"}), "bvn")
		wantFields(t, e.srv.Do(t, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "12345678901", "image_url": "ftp://x.test/a.jpg"}), "image_url")
		wantFields(t, e.srv.Do(t, "POST", t1, e.m.SandboxKey, map[string]any{"bvn": 12345678901, "image_url": "https://x.test/a.jpg"}), "bvn")
	})
	t.Run("tier 2 before tier 1", func(t *testing.T) {
		if r := e.srv.Must(t, 422, "POST", t2, e.m.SandboxKey, tier2Body()); r.Message != "KYC_TIER_REQUIRED" {
			t.Fatal(r)
		}
		if r := e.srv.Must(t, 422, "POST", "/v1/customers/"+c.ID+"/tier2-kyc/initiate", e.m.SandboxKey, nil); r.Message != "KYC_TIER_REQUIRED" {
			t.Fatal(r)
		}
	})
	t.Run("tier 1 BVN failure", func(t *testing.T) {
		var v verification
		e.srv.Must(t, 200, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "00012345678", "image_url": "https://x.test/a.jpg"}).Decode(t, &v)
		if v.Status != "REJECTED" || v.Reason == nil || v.KYCTier != "TIER_0" || e.events(t, e.m, events.CustomerTier1Verified) != 0 {
			t.Fatalf("%+v", v)
		}
	})
	t.Run("tenancy and live without a KYC provider", func(t *testing.T) {
		e.srv.Must(t, 404, "POST", t1, e.other.SandboxKey, map[string]string{"bvn": "12345678901", "image_url": "https://x.test/a.jpg"})
		lc := e.create(t, e.m.LiveKey, "live-kyc@example.com")
		r := e.srv.Must(t, 503, "POST", "/v1/customers/"+lc.ID+"/tier1-verification", e.m.LiveKey, map[string]string{"bvn": "12345678901", "image_url": "https://x.test/a.jpg"})
		if r.Message != "PROVIDER_UNAVAILABLE" {
			t.Fatal(r)
		}
		e.srv.Must(t, 503, "POST", "/v1/customers/"+lc.ID+"/kyc/initiate", e.m.LiveKey, nil)
		var n int
		_ = e.pool.QueryRow(context.Background(), `select count(*) from kyc_verifications where customer_id = $1`, lc.ID).Scan(&n)
		if n != 0 {
			t.Fatalf("%d verifications written in live without a provider", n)
		}
	})
	t.Run("tier 1 passes", func(t *testing.T) {
		var v verification
		e.srv.Must(t, 200, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "22212345678", "image_url": "https://x.test/a.jpg"}).Decode(t, &v)
		if v.Status != "VERIFIED" || v.KYCTier != "TIER_1" || v.Customer.KYCTier != "TIER_1" || e.events(t, e.m, events.CustomerTier1Verified) != 1 {
			t.Fatalf("%+v", v)
		}
		e.srv.Must(t, 200, "POST", t1, e.m.SandboxKey, map[string]string{"bvn": "22212345678", "image_url": "https://x.test/a.jpg"}).Decode(t, &v)
		if v.Status != "VERIFIED" || e.events(t, e.m, events.CustomerTier1Verified) != 1 {
			t.Fatalf("second submission: %+v", v)
		}
		var bvn string
		_ = e.pool.QueryRow(context.Background(), `select coalesce(string_agg(coalesce(bvn_last4, ''), ','), '') from kyc_verifications where customer_id = $1`, c.ID).Scan(&bvn)
		if strings.Contains(bvn, "222123") {
			t.Fatal("full BVN stored")
		}
	})
	t.Run("tier 2 validation", func(t *testing.T) {
		mut := func(f func(b map[string]any)) map[string]any { b := tier2Body(); f(b); return b }
		cases := []struct {
			body   map[string]any
			fields []string
		}{
			{map[string]any{}, []string{"residential_address", "nationality", "birth_date", "identifying_information", "source_of_funds",
				"account_purpose", "expected_monthly_payments_usd", "acting_as_intermediary", "employment_status"}},
			{mut(func(b map[string]any) { b["nationality"] = "NG" }), []string{"nationality"}},
			{mut(func(b map[string]any) { b["nationality"] = "XYZ" }), []string{"nationality"}},
			{mut(func(b map[string]any) { b["birth_date"] = "1990-13-01" }), []string{"birth_date"}},
			{mut(func(b map[string]any) {
				b["residential_address"] = map[string]any{"street_line_1": "x", "country": "NGA"}
			}),
				[]string{"residential_address.city", "residential_address.subdivision", "residential_address.postal_code"}},
			{mut(func(b map[string]any) { b["identifying_information"] = []any{} }), []string{"identifying_information"}},
			{mut(func(b map[string]any) {
				b["identifying_information"] = []any{map[string]any{"type": "visa", "issuing_country": "nga", "expiration": "soon", "image_front": "nope"}}
			}), []string{"identifying_information[0].type", "identifying_information[0].issuing_country", "identifying_information[0].expiration", "identifying_information[0].image_front"}},
			{mut(func(b map[string]any) { b["source_of_funds"] = "lottery" }), []string{"source_of_funds"}},
			{mut(func(b map[string]any) { b["account_purpose"] = "fun" }), []string{"account_purpose"}},
			{mut(func(b map[string]any) { b["expected_monthly_payments_usd"] = "1000000" }), []string{"expected_monthly_payments_usd"}},
			{mut(func(b map[string]any) { b["acting_as_intermediary"] = "no" }), []string{"acting_as_intermediary"}},
			{mut(func(b map[string]any) { b["employment_status"] = "busy" }), []string{"employment_status"}},
			{mut(func(b map[string]any) { b["most_recent_occupation"] = "PILOT" }), []string{"most_recent_occupation"}},
			{mut(func(b map[string]any) {
				b["documents"] = []any{map[string]any{"file": "x", "purposes": []string{"selfie"}}}
			}),
				[]string{"documents[0].file", "documents[0].purposes"}},
		}
		for i, tc := range cases {
			t.Run(fmt.Sprint(i), func(t *testing.T) { wantFields(t, e.srv.Do(t, "POST", t2, e.m.SandboxKey, tc.body), tc.fields...) })
		}
	})
	t.Run("tier 2 rejected then verified", func(t *testing.T) {
		var v verification
		b := tier2Body()
		delete(b, "most_recent_occupation")
		e.srv.Must(t, 200, "POST", t2, e.m.SandboxKey, b).Decode(t, &v)
		if v.Status != "REJECTED" || v.KYCTier != "TIER_1" || e.events(t, e.m, events.CustomerTier2Rejected) != 1 {
			t.Fatalf("missing occupation: %+v", v)
		}
		b = tier2Body()
		b["acting_as_intermediary"] = true
		e.srv.Must(t, 200, "POST", t2, e.m.SandboxKey, b).Decode(t, &v)
		if v.Status != "REJECTED" || e.events(t, e.m, events.CustomerTier2Rejected) != 2 {
			t.Fatalf("intermediary: %+v", v)
		}
		e.srv.Must(t, 200, "POST", t2, e.m.SandboxKey, tier2Body()).Decode(t, &v)
		if v.Status != "VERIFIED" || v.KYCTier != "TIER_2" || e.events(t, e.m, events.CustomerTier2Verified) != 1 {
			t.Fatalf("%+v", v)
		}
	})
	t.Run("initiate", func(t *testing.T) {
		var v verification
		e.srv.Must(t, 201, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", e.m.SandboxKey, map[string]string{"bvn": "12345678901"}).Decode(t, &v)
		if v.Status != "PENDING" || !strings.HasPrefix(v.VerificationURL, "https://") || v.Tier != "TIER_1" {
			t.Fatalf("%+v", v)
		}
		e.srv.Must(t, 201, "POST", "/v1/customers/"+c.ID+"/tier2-kyc/initiate", e.m.SandboxKey, nil).Decode(t, &v)
		if v.Status != "PENDING" || v.Tier != "TIER_2" {
			t.Fatalf("%+v", v)
		}
		wantFields(t, e.srv.Do(t, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", e.m.SandboxKey, map[string]string{"bvn": "12"}), "bvn")
		wantFields(t, e.srv.Do(t, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", e.m.SandboxKey, map[string]string{"redirect_url": "javascript:x"}), "redirect_url")
		e.srv.Must(t, 404, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", e.other.SandboxKey, nil)
	})
}

func TestWalletsAndFunding(t *testing.T) {
	e := setup(t)
	c := e.create(t, e.m.SandboxKey, "w@example.com")
	p := "/v1/customers/" + c.ID + "/crypto-wallet"
	good := map[string]string{
		"ETHEREUM": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
		"BASE":     "0xdac17f958d2ee523a2206206994597c13d831ec7",
		"SOLANA":   "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
		"TRON":     "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		"APTOS":    "0x" + strings.Repeat("ab", 32),
	}
	for chain, addr := range good {
		e.srv.Must(t, 201, "POST", p, e.m.SandboxKey, map[string]string{"chain": chain, "asset": "USDT", "address": addr})
	}
	if r := e.srv.Must(t, 409, "POST", p, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT", "address": good["TRON"]}); r.Message != "CONFLICT" {
		t.Fatal(r)
	}
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{}), "chain", "asset", "address")
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{"chain": "BITCOIN", "asset": "BTC", "address": "x"}), "chain", "asset")
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{"chain": "ETHEREUM", "asset": "USDT", "address": good["SOLANA"]}), "address")
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{"chain": "SOLANA", "asset": "USDT", "address": good["ETHEREUM"]}), "address")
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT", "address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"}), "address")
	wantFields(t, e.srv.Do(t, "POST", p, e.m.SandboxKey, map[string]string{"chain": "APTOS", "asset": "USDT", "address": good["ETHEREUM"]}), "address")
	e.srv.Must(t, 404, "POST", p, e.other.SandboxKey, map[string]string{"chain": "BASE", "asset": "USDC", "address": good["BASE"]})

	r := e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/crypto-wallets?limit=2", e.m.SandboxKey, nil)
	var ws []map[string]any
	r.Decode(t, &ws)
	if len(ws) != 2 || !strings.Contains(string(r.Meta), `"total":5`) {
		t.Fatalf("wallets %s meta %s", r.Data, r.Meta)
	}
	e.srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/crypto-wallets", e.m.LiveKey, nil)

	f := "/v1/customers/" + c.ID + "/crypto-funding"
	var fr map[string]any
	e.srv.Must(t, 201, "POST", f, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT", "amount": "25.5"}).Decode(t, &fr)
	if fr["status"] != "PENDING" || fr["amount"] != "25.500000" || providers.ValidateAddress(providers.Tron, fr["deposit_address"].(string)) != nil {
		t.Fatalf("%v", fr)
	}
	var again map[string]any
	e.srv.Must(t, 201, "POST", f, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT"}).Decode(t, &again)
	if again["deposit_address"] != fr["deposit_address"] || again["amount"] != nil {
		t.Fatalf("address not stable: %v %v", again, fr)
	}
	wantFields(t, e.srv.Do(t, "POST", f, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT", "amount": "1.0000001"}), "amount")
	wantFields(t, e.srv.Do(t, "POST", f, e.m.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT", "amount": "-1"}), "amount")
	wantFields(t, e.srv.Do(t, "POST", f, e.m.SandboxKey, map[string]string{"chain": "ARBITRUM", "asset": "USDT"}), "chain")
	e.srv.Must(t, 404, "POST", f, e.other.SandboxKey, map[string]string{"chain": "TRON", "asset": "USDT"})
	lc := e.create(t, e.m.LiveKey, "live-w@example.com")
	if r := e.srv.Must(t, 503, "POST", "/v1/customers/"+lc.ID+"/crypto-funding", e.m.LiveKey, map[string]string{"chain": "TRON", "asset": "USDT"}); r.Message != "PROVIDER_UNAVAILABLE" {
		t.Fatal(r)
	}
}

func TestBalanceAndLedger(t *testing.T) {
	e := setup(t)
	c := e.create(t, e.m.SandboxKey, "b@example.com")
	var b map[string]any
	e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/balance", e.m.SandboxKey, nil).Decode(t, &b)
	if b["ngn"] != "0.00" || b["usd"] != "0.00" || b["updated_at"] == "" {
		t.Fatalf("%v", b)
	}
	cid := uuid.MustParse(c.ID)
	ctx := context.Background()
	postTx := func(ref string, ps []ledger.Posting) {
		err := postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: e.m.ID, Environment: "sandbox", Reference: ref, Description: "test " + ref, Postings: ps})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	postTx("ngn", ledger.Move(ledger.System(ledger.External), ledger.Customer(cid, ledger.Available), money.MustParse(money.NGN, "5000.50")))
	postTx("usdt", ledger.Move(ledger.System(ledger.External), ledger.Customer(cid, ledger.Available), money.MustParse(money.USDT, "10.123456")))
	postTx("usdc", ledger.Move(ledger.System(ledger.External), ledger.Customer(cid, ledger.Available), money.MustParse(money.USDC, "2.5")))
	postTx("spend", ledger.Move(ledger.Customer(cid, ledger.Available), ledger.System(ledger.External), money.MustParse(money.NGN, "0.50")))
	e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/balance", e.m.SandboxKey, nil).Decode(t, &b)
	if b["ngn"] != "5000.00" || b["usd"] != "12.62" {
		t.Fatalf("%v", b)
	}
	r := e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/ledger?limit=3", e.m.SandboxKey, nil)
	var entries []map[string]any
	r.Decode(t, &entries)
	if len(entries) != 3 || !strings.Contains(string(r.Meta), `"total":4`) {
		t.Fatalf("%s %s", r.Data, r.Meta)
	}
	if entries[0]["type"] != "DEBIT" || entries[0]["amount"] != "0.50" || entries[0]["currency"] != "NGN" || entries[0]["description"] != "test spend" {
		t.Fatalf("newest entry %v", entries[0])
	}
	r = e.srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/ledger?page=2&limit=3", e.m.SandboxKey, nil)
	r.Decode(t, &entries)
	if len(entries) != 1 || entries[0]["type"] != "CREDIT" || entries[0]["amount"] != "5000.50" {
		t.Fatalf("page 2 %v", entries)
	}
	wantFields(t, e.srv.Do(t, "GET", "/v1/customers/"+c.ID+"/ledger?limit=101", e.m.SandboxKey, nil), "limit")
	e.srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/ledger", e.other.SandboxKey, nil)
	e.srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/balance", e.m.LiveKey, nil)
}

type issuing struct {
	ID            string  `json:"id"`
	AccountNumber string  `json:"accountNumber"`
	BankName      string  `json:"bankName"`
	AccountName   string  `json:"accountName"`
	Status        string  `json:"status"`
	Type          string  `json:"type"`
	CustomerID    *string `json:"customerId"`
}

func (e *env) tier1(t *testing.T, key, id string) {
	e.srv.Must(t, 200, "POST", "/v1/customers/"+id+"/tier1-verification", key, map[string]string{"bvn": "12345678901", "image_url": "https://x.test/a.jpg"})
}

func TestVirtualAccounts(t *testing.T) {
	e := setup(t)
	c := e.create(t, e.m.SandboxKey, "va@example.com")
	p := "/v1/customers/" + c.ID + "/ngn-virtual-account"
	if r := e.srv.Must(t, 422, "POST", p, e.m.SandboxKey, nil); r.Message != "KYC_TIER_REQUIRED" {
		t.Fatal(r)
	}
	e.srv.Must(t, 404, "GET", p, e.m.SandboxKey, nil)
	e.tier1(t, e.m.SandboxKey, c.ID)

	var a issuing
	e.srv.Must(t, 201, "POST", p, e.m.SandboxKey, nil).Decode(t, &a)
	if !providers.ValidNUBAN(e.sandboxBank, a.AccountNumber) || a.BankName != "Svc Sandbox Bank" || a.AccountName != "Ada Obi" ||
		a.Status != "ACTIVE" || a.Type != "PERMANENT" || a.CustomerID == nil || *a.CustomerID != c.ID {
		t.Fatalf("%+v", a)
	}
	if e.events(t, e.m, events.VirtualAccountCreated) != 1 {
		t.Fatal("no virtual_account.created")
	}
	var again issuing
	e.srv.Must(t, 200, "POST", p, e.m.SandboxKey, nil).Decode(t, &again)
	e.srv.Must(t, 200, "GET", p, e.m.SandboxKey, nil).Decode(t, &again)
	if again.ID != a.ID || again.AccountNumber != a.AccountNumber || e.events(t, e.m, events.VirtualAccountCreated) != 1 {
		t.Fatalf("second issue: %+v", again)
	}
	for _, key := range []string{e.other.SandboxKey, e.m.LiveKey} {
		e.srv.Must(t, 404, "POST", p, key, nil)
		e.srv.Must(t, 404, "GET", p, key, nil)
		e.srv.Must(t, 404, "GET", "/v1/virtual-accounts/"+a.ID, key, nil)
		e.srv.Must(t, 404, "GET", "/v1/customers/"+c.ID+"/virtual-accounts", key, nil)
	}

	var concept map[string]any
	e.srv.Must(t, 200, "GET", "/v1/virtual-accounts/"+a.ID, e.m.SandboxKey, nil).Decode(t, &concept)
	if concept["account_number"] != a.AccountNumber || concept["status"] != "active" || concept["type"] != "PERMANENT" ||
		concept["expires_at"] != nil || concept["amount"] != nil || concept["currency"] != "NGN" || concept["customer_id"] != c.ID {
		t.Fatalf("%v", concept)
	}
	e.srv.Must(t, 404, "GET", "/v1/virtual-accounts/"+uuid.NewString(), e.m.SandboxKey, nil)
	e.srv.Must(t, 404, "GET", "/v1/virtual-accounts/nope", e.m.SandboxKey, nil)

	// A second customer's account, for the filters.
	c2 := e.create(t, e.m.SandboxKey, "va2@example.com")
	e.tier1(t, e.m.SandboxKey, c2.ID)
	var a2 issuing
	e.srv.Must(t, 201, "POST", "/v1/customers/"+c2.ID+"/ngn-virtual-account", e.m.SandboxKey, nil).Decode(t, &a2)
	if a2.AccountNumber == a.AccountNumber {
		t.Fatal("two customers got the same account number")
	}
	list := func(path string) ([]map[string]any, string) {
		r := e.srv.Must(t, 200, "GET", path, e.m.SandboxKey, nil)
		var out []map[string]any
		r.Decode(t, &out)
		return out, string(r.Meta)
	}
	if all, meta := list("/v1/virtual-accounts"); len(all) != 2 || !strings.Contains(meta, `"total":2`) {
		t.Fatalf("%v %s", all, meta)
	}
	if one, _ := list("/v1/virtual-accounts?customer_id=" + c2.ID); len(one) != 1 || one[0]["id"] != a2.ID {
		t.Fatalf("%v", one)
	}
	if one, _ := list("/v1/customers/" + c.ID + "/virtual-accounts"); len(one) != 1 || one[0]["id"] != a.ID {
		t.Fatalf("%v", one)
	}
	if act, _ := list("/v1/virtual-accounts?status=active"); len(act) != 2 {
		t.Fatalf("%v", act)
	}
	if _, err := e.pool.Exec(context.Background(), `update onramps set status = 'INACTIVE' where id = $1`, a2.ID); err != nil {
		t.Fatal(err)
	}
	if in, _ := list("/v1/virtual-accounts?status=inactive"); len(in) != 1 || in[0]["id"] != a2.ID || in[0]["status"] != "inactive" {
		t.Fatalf("%v", in)
	}
	wantFields(t, e.srv.Do(t, "GET", "/v1/virtual-accounts?status=open", e.m.SandboxKey, nil), "status")
	wantFields(t, e.srv.Do(t, "GET", "/v1/virtual-accounts?customer_id=x", e.m.SandboxKey, nil), "customer_id")
	wantFields(t, e.srv.Do(t, "GET", "/v1/virtual-accounts?limit=101", e.m.SandboxKey, nil), "limit")
	if r := e.srv.Must(t, 200, "GET", "/v1/virtual-accounts", e.other.SandboxKey, nil); string(r.Data) != "[]" {
		t.Fatalf("other merchant sees %s", r.Data)
	}
}

func TestVirtualAccountLiveWithoutBankAndConcurrentIssue(t *testing.T) {
	e := setup(t)
	lc := e.create(t, e.m.LiveKey, "live-va@example.com")
	if _, err := e.pool.Exec(context.Background(), `update customers set kyc_tier = 'TIER_1' where id = $1`, lc.ID); err != nil {
		t.Fatal(err)
	}
	r := e.srv.Must(t, 503, "POST", "/v1/customers/"+lc.ID+"/ngn-virtual-account", e.m.LiveKey, nil)
	if r.Message != "PROVIDER_UNAVAILABLE" {
		t.Fatal(r)
	}
	var n int
	_ = e.pool.QueryRow(context.Background(), `select (select count(*) from onramps) + (select count(*) from events where type = 'virtual_account.created')`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows written in live without a bank", n)
	}

	c := e.create(t, e.m.SandboxKey, "race@example.com")
	e.tier1(t, e.m.SandboxKey, c.ID)
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	numbers := make([]string, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.srv.Do(t, "POST", "/v1/customers/"+c.ID+"/ngn-virtual-account", e.m.SandboxKey, nil)
			statuses[i] = r.Status
			var a issuing
			if r.Status < 300 {
				r.Decode(t, &a)
			}
			numbers[i] = a.AccountNumber
		}()
	}
	wg.Wait()
	created := 0
	for i, s := range statuses {
		if s == 201 {
			created++
		} else if s != 200 {
			t.Fatalf("status %d", s)
		}
		if numbers[i] != numbers[0] {
			t.Fatalf("different accounts: %v", numbers)
		}
	}
	_ = e.pool.QueryRow(context.Background(), `select count(*) from onramps where customer_id = $1`, c.ID).Scan(&n)
	if created != 1 || n != 1 {
		t.Fatalf("%d created, %d rows", created, n)
	}
}
