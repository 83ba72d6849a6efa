package partners_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	gwpartners "svc/gateway/partners"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/persistence/postgres/pgtest"
)

const secret = "route-test-secret"

func TestPartnerEventsRoute(t *testing.T) {
	pool, _ := pgtest.New(t)
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := partners.New(pool, partners.Config{
		Partners: []partners.Partner{partners.SandboxBankPartner(secret)}, Jobs: inserter, Events: events.NewRecorder(inserter),
		Providers: providers.Default(providers.SandboxConfig{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := gatewaytest.New(t, pool, gwpartners.New(svc, gwpartners.Config{PerMinute: 8, BodyLimit: 4096}))
	now := time.Now()
	body, sig, _ := partners.SandboxNotification(secret, "evt_"+uuid.NewString(), partners.TypeInboundTransfer, now, partners.SandboxInbound{
		Reference: "r1", BankCode: "999", AccountNumber: "0123456789", Amount: 100, Currency: "NGN", PaidAt: now.UTC().Format(time.RFC3339)})
	path := "/v1/partners/sandbox-bank/events"
	cases := []struct {
		name    string
		path    string
		body    string
		headers []string
		status  int
		code    string
		dup     bool
	}{
		{name: "no signature", path: path, body: string(body), status: 401, code: "UNAUTHORIZED"},
		{name: "forged", path: path, body: string(body), headers: []string{partners.SandboxSignatureHeader, partners.SandboxSign("guess", body)}, status: 401, code: "UNAUTHORIZED"},
		{name: "unknown partner", path: "/v1/partners/acme/events", body: string(body), headers: []string{partners.SandboxSignatureHeader, sig}, status: 404, code: "NOT_FOUND"},
		{name: "too large", path: path, body: `{"pad":"` + strings.Repeat("x", 5000) + `"}`, status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "stored", path: path, body: string(body), headers: []string{partners.SandboxSignatureHeader, sig}, status: 200},
		{name: "repeat", path: path, body: string(body), headers: []string{partners.SandboxSignatureHeader, sig}, status: 200, dup: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := srv.Do(t, "POST", c.path, "", c.body, c.headers...)
			if r.Status != c.status || (c.code != "" && r.Message != c.code) {
				t.Fatalf("%s", r)
			}
			if c.status == 200 {
				var got struct {
					Status    string `json:"status"`
					Duplicate bool   `json:"duplicate"`
				}
				r.Decode(t, &got)
				if got.Status != partners.Received || got.Duplicate != c.dup {
					t.Fatalf("%+v", got)
				}
			}
		})
	}
	var n int
	if err := pool.QueryRow(context.Background(), `select count(*) from partner_events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d stored, want 1 (%v)", n, err)
	}
	// Per-address limit: 8 a minute, 6 used above.
	var last int
	for range 4 {
		last = srv.Do(t, "POST", path, "", string(body), partners.SandboxSignatureHeader, sig).Status
	}
	if last != 429 {
		t.Fatalf("after the limit: %d, want 429", last)
	}
}

func TestSandboxCryptoDeposits(t *testing.T) {
	pool, _ := pgtest.New(t)
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	envs := providers.Default(providers.SandboxConfig{})
	svc, err := partners.New(pool, partners.Config{
		Partners: []partners.Partner{partners.SandboxCustodyPartner(secret)}, Jobs: inserter, Events: events.NewRecorder(inserter), Providers: envs,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := gatewaytest.New(t, pool, gwpartners.New(svc, gwpartners.Config{Crypto: partners.CustodySimulator{Partners: svc, Secret: secret}}))
	m := authtest.New(t, pool)
	addr, err := envs.Sandbox.Custody.DepositAddress(context.Background(), providers.AddressRequest{Reference: "merchant:" + m.ID.String(), Chain: providers.Base, Asset: money.USDT})
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"chain": "BASE", "asset": "USDT", "address": addr.Address, "amount": "25.5"}
	var got struct {
		Status, Outcome string
	}
	srv.Must(t, 201, "POST", gwpartners.SimulatePath, m.SandboxKey, body).Decode(t, &got)
	if got.Status != partners.Processed {
		t.Fatalf("%+v", got)
	}
	bs, err := ledger.OwnerBalances(context.Background(), pool, m.ID, "sandbox", ledger.OwnerMerchant, m.ID)
	if err != nil || len(bs) != 1 || bs[0].Amount != money.New(money.USDT, 25_500_000) {
		t.Fatalf("merchant balances %+v %v", bs, err)
	}
	if r := srv.Do(t, "POST", gwpartners.SimulatePath, m.LiveKey, body); r.Status != 403 || r.Message != "SANDBOX_ONLY" {
		t.Fatalf("live key: %s", r)
	}
	other := authtest.New(t, pool)
	if r := srv.Do(t, "POST", gwpartners.SimulatePath, other.SandboxKey, body); r.Status != 404 {
		t.Fatalf("another merchant's address: %s", r)
	}
	bad := map[string]any{"chain": "BASE", "asset": "NGN", "address": "nope", "amount": "-1"}
	if r := srv.Do(t, "POST", gwpartners.SimulatePath, m.SandboxKey, bad); r.Status != 400 {
		t.Fatalf("bad body: %s", r)
	}
}
