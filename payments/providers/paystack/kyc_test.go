package paystack_test

import (
	"context"
	"errors"
	"testing"

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
			srv, c := setup(t)
			req := providers.IdentifyRequest{Reference: "0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88", FirstName: "Ada", LastName: "Lovelace",
				BVN: "22222222222", BankCode: "058", AccountNumber: "0123456789"}
			sess, err := c.Identify(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Reference != "kyc:"+req.Reference || sess.Status != "PENDING" || sess.ExpiresAt.IsZero() {
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
			if err != nil {
				t.Fatal(err)
			}
			ev, err := c.ParseEvent(n.Signature, n.Body)
			if err != nil {
				t.Fatal(err)
			}
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
	// A bank Paystack does not know: refused by the contract server, answered unavailable.
	req := good
	req.BankCode = "999"
	_, err := c.Identify(ctx, req)
	var ue *providers.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("refused identification: %v", err)
	}
	// A malformed identification notification is refused as malformed.
	if _, err := srv.FinishIdentification("CUS_none", true, ""); err == nil {
		t.Fatal("finished an unknown identification")
	}
}
