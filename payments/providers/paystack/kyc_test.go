package paystack_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
)

func TestIdentify(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		success bool
		reason  string
	}{
		{"success", true, ""},
		{"failed", false, "BVN does not match the account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			srv, c := setup(t, func(cfg *paystack.Config) { cfg.Now = func() time.Time { return now } })
			req := providers.IdentifyRequest{Reference: "0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88", FirstName: "Ada", LastName: "Lovelace",
				BVN: "22222222222", BankCode: "058", AccountNumber: "0123456789"}
			sess, err := c.Identify(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Reference != "kyc:"+req.Reference || sess.Status != "PENDING" || !sess.ExpiresAt.Equal(now.Add(24*time.Hour)) {
				t.Fatalf("session %+v", sess)
			}
			// A retry uses the same Paystack customer.
			if _, err := c.Identify(ctx, req); err != nil {
				t.Fatal(err)
			}
			ids := srv.Identifications()
			if len(ids) != 1 || ids[0].BVN != req.BVN || ids[0].BankCode != "058" || ids[0].AccountNumber != req.AccountNumber {
				t.Fatalf("identifications %+v", ids)
			}
			n, err := srv.FinishIdentification(ids[0].CustomerCode, tc.success, tc.reason)
			ev := notified(t, c, n, err)
			o := ev.Identity
			if o == nil || ev.Inbound != nil || ev.Payout != nil {
				t.Fatalf("event %+v", ev)
			}
			if o.Reference != sess.Reference || o.ProviderReference != ids[0].CustomerCode || o.Approved != tc.success ||
				o.Reason != tc.reason || o.EventID != ev.ID || ev.ID == "" {
				t.Fatalf("outcome %+v (event id %q)", o, ev.ID)
			}
			// Signature checked as for every notification.
			if _, err := c.ParseEvent(n.Signature, append(n.Body[:len(n.Body):len(n.Body)], ' ')); !errors.Is(err, paystack.ErrBadSignature) {
				t.Fatalf("altered body: %v", err)
			}
			if _, err := paystack.ParseEvent("sk_other", n.Signature, n.Body); !errors.Is(err, paystack.ErrBadSignature) {
				t.Fatalf("other key: %v", err)
			}
		})
	}
}

func TestIdentifyRefusals(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	good := providers.IdentifyRequest{Reference: "r-1", FirstName: "Ada", LastName: "Lovelace", BVN: "22222222222", BankCode: "058", AccountNumber: "0123456789"}
	for name, tweak := range map[string]func(*providers.IdentifyRequest){
		"short bvn":      func(r *providers.IdentifyRequest) { r.BVN = "123" },
		"letters in acc": func(r *providers.IdentifyRequest) { r.AccountNumber = "01234567ab" },
		"no last name":   func(r *providers.IdentifyRequest) { r.LastName = "" },
		"no bank":        func(r *providers.IdentifyRequest) { r.BankCode = "" },
	} {
		req := good
		tweak(&req)
		if _, err := c.Identify(ctx, req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if srv.Requests(paystacktest.RouteIdentify) != 0 {
		t.Fatal("an invalid request reached Paystack")
	}
	// A bank Paystack does not know: Paystack refuses the evidence (invalid_params), which
	// is bad input, not the partner being down.
	req := good
	req.BankCode = "999"
	_, err := c.Identify(ctx, req)
	var ee *providers.EvidenceError
	if !errors.As(err, &ee) || ee.Field != "bank_account" || ee.Reason != "Unknown bank code" {
		t.Fatalf("refused identification: %v", err)
	}
	// Paystack down: unavailable.
	srv.Inject(paystacktest.Fault{Route: paystacktest.RouteIdentify, Status: 503, Times: 5})
	_, err = c.Identify(ctx, good)
	var ue *providers.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("identification while Paystack is down: %v", err)
	}
	// A malformed identification notification is refused as malformed.
	if _, err := srv.FinishIdentification("CUS_none", true, ""); err == nil {
		t.Fatal("finished an unknown identification")
	}
}

// TestKYCProvider: the live KYC provider over Paystack starts tier 1 as an identification
// with the customer's names and evidence, says which evidence it needs, and answers
// unavailable for what Paystack does not offer (tier 2, synchronous tier 1).
func TestKYCProvider(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	k := c.KYC()
	er, ok := k.(providers.EvidenceRequirer)
	if !ok || er.InitiateEvidence(1) != (providers.Evidence{BVN: true, BankAccount: true}) || er.InitiateEvidence(2) != (providers.Evidence{}) {
		t.Fatalf("evidence: %v %+v", ok, er)
	}
	if !providers.Configured(k) {
		t.Fatal("the Paystack KYC provider reads as unconfigured")
	}
	sess, err := k.Initiate(ctx, providers.InitiateRequest{Reference: "0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f89", Tier: 1, Email: "ada@example.test",
		BVN: "22222222222", FirstName: "Ada", MiddleName: "King", LastName: "Lovelace", BankCode: "058", AccountNumber: "0123456789"})
	if err != nil || sess.Reference != "kyc:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f89" || sess.VerificationURL != "" {
		t.Fatalf("initiate: %+v %v", sess, err)
	}
	ids := srv.Identifications()
	if len(ids) != 1 || ids[0].FirstName != "Ada" || ids[0].MiddleName != "King" || ids[0].LastName != "Lovelace" || ids[0].AccountNumber != "0123456789" {
		t.Fatalf("identifications %+v", ids)
	}
	for name, call := range map[string]func() error{
		"tier 2 initiate": func() error {
			_, err := k.Initiate(ctx, providers.InitiateRequest{Reference: "r-2", Tier: 2})
			return err
		},
		"tier 1 submission": func() error { _, err := k.VerifyTier1(ctx, providers.Tier1Request{Reference: "r-3"}); return err },
		"tier 2 submission": func() error { _, err := k.VerifyTier2(ctx, providers.Tier2Request{Reference: "r-4"}); return err },
	} {
		if err := call(); !errors.Is(err, providers.ErrProviderUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(srv.Identifications()) != 1 {
		t.Fatal("an unsupported call reached Paystack")
	}
}
