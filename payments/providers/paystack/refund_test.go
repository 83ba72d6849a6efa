package paystack_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
)

// chargeInto issues a dedicated account and records a charge of kobo into it; it answers the
// charge's reference.
func chargeInto(t *testing.T, srv *paystacktest.Server, c *paystack.Client, kobo int64) string {
	t.Helper()
	va, err := c.CreateVirtualAccount(context.Background(), providers.VirtualAccountRequest{
		Reference: "onramp:0190d5e4-0000-7000-8000-00000000000a", AccountName: "Ada Lovelace", Type: "PERMANENT"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := srv.Charge(va.AccountNumber, kobo, paystacktest.Sender{Name: "MALLORY"})
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Data struct {
			Reference string `json:"reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(n.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Data.Reference
}

func TestRefund(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	charge := chargeInto(t, srv, c, 250_000)
	before := srv.Balance()
	req := providers.RefundRequest{Reference: "refund:0190d5e4-0000-7000-8000-0000000000r1", ProviderReference: charge, Amount: ngn(250_000),
		Reason: "no active account"}

	res, err := c.Refund(ctx, req)
	if err != nil || res.Status != providers.RefundPending || res.ProviderReference == "" {
		t.Fatalf("%+v %v", res, err)
	}
	rs := srv.Refunds()
	if len(rs) != 1 || rs[0].Amount != 250_000 || rs[0].Reference != charge || srv.Balance() != before-250_000 {
		t.Fatalf("refunds %+v, balance %d (was %d)", rs, srv.Balance(), before)
	}
	t.Run("asking again answers the same refund", func(t *testing.T) {
		again, err := c.Refund(ctx, req)
		if err != nil || again != res || len(srv.Refunds()) != 1 || srv.Requests(paystacktest.RouteCreateRefund) != 1 {
			t.Fatalf("%+v %v (refunds %d)", again, err, len(srv.Refunds()))
		}
	})
	t.Run("processed", func(t *testing.T) {
		n, err := srv.FinishRefund(charge, "processed")
		if err != nil {
			t.Fatal(err)
		}
		ev, err := c.ParseEvent(n.Signature, n.Body)
		if err != nil || ev.Refund == nil || ev.Refund.ProviderReference != charge || ev.Refund.Status != "processed" ||
			ev.ID != "refund.processed:"+charge {
			t.Fatalf("refund.processed parsed %+v %+v %v", ev, ev.Refund, err)
		}
		if _, err := c.ParseEvent(n.Signature, []byte(strings.Replace(string(n.Body), charge, "other", 1))); !errors.Is(err, paystack.ErrBadSignature) {
			t.Fatalf("altered refund notification: %v", err)
		}
		done, err := c.Refund(ctx, req)
		if err != nil || done.Status != providers.RefundProcessed || done.ProviderReference != res.ProviderReference {
			t.Fatalf("%+v %v", done, err)
		}
	})
	t.Run("another amount under the charge is never this refund", func(t *testing.T) {
		r := req
		r.Amount = ngn(100)
		if _, err := c.Refund(ctx, r); err == nil {
			t.Fatal("accepted")
		}
	})
	t.Run("an unknown charge is a failed refund, not an error", func(t *testing.T) {
		r := req
		r.ProviderReference = "dva_nope"
		out, err := c.Refund(ctx, r)
		if err != nil || out.Status != providers.RefundFailed {
			t.Fatalf("%+v %v", out, err)
		}
	})
}

func TestRefundLostAnswerRefundsOnce(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	charge := chargeInto(t, srv, c, 90_000)
	srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateRefund, Times: 1, Status: 502, After: true})
	res, err := c.Refund(ctx, providers.RefundRequest{Reference: "refund:x", ProviderReference: charge, Amount: ngn(90_000)})
	if err != nil || res.Status != providers.RefundPending || len(srv.Refunds()) != 1 {
		t.Fatalf("%+v %v (refunds %d)", res, err, len(srv.Refunds()))
	}
}

func TestRefundUnavailable(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	charge := chargeInto(t, srv, c, 90_000)
	srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateRefund, Times: 10, Status: 503})
	_, err := c.Refund(ctx, providers.RefundRequest{Reference: "refund:x", ProviderReference: charge, Amount: ngn(90_000)})
	if !errors.Is(err, providers.ErrProviderUnavailable) || len(srv.Refunds()) != 0 {
		t.Fatalf("%v (refunds %d)", err, len(srv.Refunds()))
	}
}

func TestVerifyPayout(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	if _, err := c.VerifyPayout(ctx, payoutRef); !errors.Is(err, paystack.ErrTransferNotFound) {
		t.Fatalf("before any transfer: %v", err)
	}
	req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(150075), BankCode: "058", AccountNumber: "0123456789"}
	if _, err := c.Payout(ctx, req); err != nil {
		t.Fatal(err)
	}
	ref, _ := paystack.EncodeReference(payoutRef)
	for _, step := range []struct{ status, want string }{
		{"", providers.PayoutSubmitted}, {"success", providers.PayoutSettled}, {"reversed", providers.PayoutReversed},
	} {
		if step.status != "" {
			if _, err := srv.Finish(ref, step.status, "Account closed"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.VerifyPayout(ctx, payoutRef)
		if err != nil || got.Status != step.want || got.Amount != ngn(150075) || got.Reference != payoutRef || got.ProviderReference == "" {
			t.Fatalf("after %q: %+v %v", step.status, got, err)
		}
	}
}
