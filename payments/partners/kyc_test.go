package partners_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/gatewaytest"
	gwpartners "svc/gateway/partners"
	"svc/payments"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
	"svc/persistence/postgres/pgtest"
)

// TestLiveKYCThroughPaystackIdentification: a live verification started through the Paystack
// adapter (the live KYC provider svcd wires, paystack.Client.KYC, with the customer's bank
// account given at initiate) completes from the contract server's signed customeridentification.* notification,
// through the partner intake and its processing: status, tier and event once; a failure rejects.
func TestLiveKYCThroughPaystackIdentification(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	inserter, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := paystacktest.New("sk_test_kyc_contract")
	t.Cleanup(srv.Close)
	c, err := paystack.New(paystack.Config{SecretKey: srv.Secret, BaseURL: srv.URL, CustomerEmailDomain: "kyc.example.com",
		Phone: "+2348000000000", Timeout: 2 * time.Second, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	envs := providers.Environments{Sandbox: providers.NewSandbox(providers.SandboxConfig{}),
		Live: providers.Set{KYC: c.KYC()}.Complete()}
	rec := events.NewRecorder(inserter)
	cs := customers.NewService(pool, rec, envs, nil)
	svc, err := partners.New(pool, partners.Config{Partners: []partners.Partner{partners.PaystackPartner(c)},
		Jobs: inserter, Events: rec, Providers: envs, Verifications: cs})
	if err != nil {
		t.Fatal(err)
	}
	merchant := uuid.New()
	live := payments.Tenant{MerchantID: merchant, Environment: payments.Live}

	// Notifications arrive over real HTTP at POST /v1/partners/paystack/events; the job's work
	// (Process) is then run for the stored row.
	gw := gatewaytest.New(t, pool, gwpartners.New(svc, gwpartners.Config{}))
	deliver := func(n paystacktest.Notification) partners.Result {
		t.Helper()
		r := gw.Do(t, "POST", "/v1/partners/paystack/events", "", string(n.Body), paystack.SignatureHeader, n.Signature)
		if r.Status != http.StatusOK {
			t.Fatalf("intake: %s", r)
		}
		var id uuid.UUID
		if err := pool.QueryRow(ctx, `select id from partner_events where provider = 'paystack' and body = $1`, n.Body).Scan(&id); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Process(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A forged notification is refused and changes nothing.
	if r := gw.Do(t, "POST", "/v1/partners/paystack/events", "", `{"event":"customeridentification.success","data":{}}`,
		paystack.SignatureHeader, "00"); r.Status != http.StatusUnauthorized {
		t.Fatalf("forged: %s", r)
	}
	count := func(cust uuid.UUID, typ events.Type) int {
		var n int
		if err := pool.QueryRow(ctx, `select count(*) from events where merchant_id = $1 and environment = 'live' and type = $2
			and data->>'id' = $3`, merchant, string(typ), cust.String()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, tc := range []struct {
		name       string
		success    bool
		wantStatus string
		wantTier   string
		wantEvents int
	}{
		{"success", true, customers.Verified, customers.Tier1, 1},
		{"failed", false, customers.Rejected, customers.Tier0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cust, err := cs.Create(ctx, live, customers.CreateInput{Email: tc.name + "@example.test", FirstName: "Ada", LastName: "Lovelace"})
			if err != nil {
				t.Fatal(err)
			}
			v, err := cs.Initiate(ctx, live, cust.ID, 1, customers.InitiateInput{BVN: "22222222222", BankCode: "058", AccountNumber: "0123456789"})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != customers.Pending || v.ProviderReference != "kyc:"+v.ID.String() {
				t.Fatalf("initiated %+v", v)
			}
			var code string
			for _, id := range srv.Identifications() {
				if id.Status == "pending" {
					code = id.CustomerCode
				}
			}
			n, err := srv.FinishIdentification(code, tc.success, "")
			if err != nil {
				t.Fatal(err)
			}
			if res := deliver(n); res.Status != partners.Processed {
				t.Fatalf("processed %+v", res)
			}
			got, c2, err := cs.GetVerification(ctx, live, cust.ID, v.ID)
			if err != nil || got.Status != tc.wantStatus || c2.KYCTier != tc.wantTier {
				t.Fatalf("verification %+v customer tier %s err %v", got, c2.KYCTier, err)
			}
			// The same notification again changes nothing.
			if res := deliver(n); res.Status != partners.Processed {
				t.Fatalf("repeat %+v", res)
			}
			if n := count(cust.ID, events.CustomerTier1Verified); n != tc.wantEvents {
				t.Fatalf("%d tier1_verified events; want %d", n, tc.wantEvents)
			}
			// Another tenant does not see it.
			other := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Live}
			if _, _, err := cs.GetVerification(ctx, other, cust.ID, v.ID); err == nil {
				t.Fatal("another merchant read the verification")
			}
		})
	}
}
