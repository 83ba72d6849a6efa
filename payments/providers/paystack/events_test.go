package paystack_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
)

func sign(secret string, body []byte) string { return hex.EncodeToString(paystack.Sign(secret, body)) }

// notified is notification n (err: the contract server's) as the client parses it; the test
// fails on either error.
func notified(t *testing.T, c *paystack.Client, n paystacktest.Notification, err error) paystack.Event {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ev, err := c.ParseEvent(n.Signature, n.Body)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestVerifySignature(t *testing.T) {
	const secret = "sk_test_contract_secret"
	body := []byte(`{"event":"transfer.success","data":{}}`)
	good := sign(secret, body)
	for _, tc := range []struct {
		name, secret, sig string
		body              []byte
		want              error
	}{
		{"good", secret, good, body, nil},
		{"good, upper-case hex", secret, strings.ToUpper(good), body, nil},
		{"missing", secret, "", body, paystack.ErrSignatureMissing},
		{"signed with another key", secret, sign("sk_test_other", body), body, paystack.ErrSignatureInvalid},
		{"body changed after signing", secret, good, append([]byte(" "), body...), paystack.ErrSignatureInvalid},
		{"not hex", secret, "zz" + good[2:], body, paystack.ErrSignatureInvalid},
		{"truncated", secret, good[:64], body, paystack.ErrSignatureInvalid},
		{"SHA-256 sized", secret, good[:64], body, paystack.ErrSignatureInvalid},
		{"no secret configured", "", sign("", body), body, paystack.ErrSignatureInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := paystack.VerifySignature(tc.secret, tc.sig, tc.body)
			if !errors.Is(err, tc.want) || (tc.want != nil && !errors.Is(err, paystack.ErrBadSignature)) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if _, perr := paystack.ParseEvent(tc.secret, tc.sig, tc.body); tc.want != nil && !errors.Is(perr, paystack.ErrBadSignature) {
				t.Fatalf("ParseEvent: %v", perr)
			}
		})
	}
}

// TestNotifications parses every notification type the contract server emits, in the
// documented shapes, through a client (which maps the DVA bank to its code).
func TestNotifications(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	at := time.Date(2026, 11, 24, 10, 0, 0, 123e6, time.UTC)
	srv.SetClock(func() time.Time { return at })
	va, err := c.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "onramp:notify", AccountName: "Ada Lovelace"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("charge.success on a dedicated account", func(t *testing.T) {
		n, err := srv.Charge(va.AccountNumber, 500_075, paystacktest.Sender{Name: "RANDALL HORTON", Bank: "First City Monument Bank", AccountNumber: "0123450011", Narration: "NIP: RANDALL HORTON"})
		ev := notified(t, c, n, err)
		in := ev.Inbound
		if ev.Type != paystack.EventChargeSuccess || !strings.HasPrefix(ev.ID, "charge.success:") || in == nil || ev.Payout != nil {
			t.Fatalf("%+v", ev)
		}
		if in.EventID != ev.ID || in.AccountNumber != va.AccountNumber || in.BankCode != va.BankCode || in.Amount != ngn(500_075) ||
			!in.PaidAt.Equal(at) || in.SenderName != "RANDALL HORTON" || in.SenderAccount != "XXXXXX0011" || in.ProviderReference == "" {
			t.Fatalf("%+v", in)
		}
		// The same notification twice has the same id (the route's idempotency key).
		again, _ := c.ParseEvent(n.Signature, n.Body)
		if again.ID != ev.ID {
			t.Fatal("unstable id")
		}
		if _, err := c.ParseEvent(sign("sk_test_forged", n.Body), n.Body); !errors.Is(err, paystack.ErrSignatureInvalid) {
			t.Fatalf("forged: %v", err)
		}
	})

	t.Run("the API confirms a notified charge before value is given", func(t *testing.T) {
		n, err := srv.Charge(va.AccountNumber, 250_000, paystacktest.Sender{Name: "GRACE HOPPER", Bank: "Access Bank", AccountNumber: "0690000031"})
		ev := notified(t, c, n, err)
		got, err := c.VerifyInbound(ctx, ev.Inbound.ProviderReference)
		if err != nil || got != *ev.Inbound {
			t.Fatalf("%+v %v, notified %+v", got, err, *ev.Inbound)
		}
		if _, err := c.VerifyInbound(ctx, "dva_0"); !errors.Is(err, paystack.ErrChargeNotFound) {
			t.Fatalf("unknown: %v", err)
		}
		if err := srv.Reverse(ev.Inbound.ProviderReference); err != nil {
			t.Fatal(err)
		}
		if _, err := c.VerifyInbound(ctx, ev.Inbound.ProviderReference); !errors.Is(err, paystack.ErrChargeNotPaid) {
			t.Fatalf("reversed: %v", err)
		}
	})

	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	for _, tc := range []struct {
		status, typ, want string
	}{
		{"success", paystack.EventTransferSuccess, providers.PayoutSettled},
		{"failed", paystack.EventTransferFailed, providers.PayoutFailed},
		{"reversed", paystack.EventTransferReversed, providers.PayoutReversed},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			ref := "payout:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f8" + tc.status[:1]
			res, err := c.Payout(ctx, providers.PayoutRequest{Reference: ref, Rail: providers.RailNGN, Amount: ngn(120_000), BankCode: "058", AccountNumber: "0123456789"})
			if err != nil {
				t.Fatal(err)
			}
			pref, _ := paystack.EncodeReference(ref)
			n, err := srv.Finish(pref, tc.status, "")
			ev := notified(t, c, n, err)
			p := ev.Payout
			if ev.Type != tc.typ || p == nil || ev.Inbound != nil || p.EventID != ev.ID || !strings.HasPrefix(ev.ID, tc.typ+":") {
				t.Fatalf("%+v", ev)
			}
			if p.Reference != ref || p.Status != tc.want || p.ProviderReference != res.ProviderReference || p.Amount != ngn(120_000) ||
				!p.At.Equal(at) || (tc.want != providers.PayoutSettled) != (p.FailureReason != "") {
				t.Fatalf("%+v", p)
			}
		})
	}
}

func TestParseEventBodies(t *testing.T) {
	const secret = "sk_test_contract_secret"
	parse := func(body string) (paystack.Event, error) {
		return paystack.ParseEvent(secret, sign(secret, []byte(body)), []byte(body))
	}
	charge := func(amount, extra string) string {
		return `{"event":"charge.success","data":{"id":302961,"domain":"live","status":"success","reference":"qTPrJoy9Bx",
			"amount":` + amount + `,"currency":"NGN","channel":"dedicated_nuban","paid_at":"2026-11-24T10:00:00.000Z",
			"metadata":{"receiver_account_number":"9930000737","receiver_bank":"Wema Bank"},
			"authorization":{"channel":"dedicated_nuban","receiver_bank_account_number":"9930000737","receiver_bank":"Wema Bank"` + extra + `}}}`
	}
	t.Run("a documented DVA charge without the client maps the bank to its slug", func(t *testing.T) {
		ev, err := parse(charge("10000", ""))
		if err != nil || ev.Inbound == nil || ev.Inbound.BankCode != "wema-bank" || ev.Inbound.Amount != ngn(10000) || ev.ID != "charge.success:302961" || ev.Domain != "live" {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	t.Run("an integer amount in quotes is still exact", func(t *testing.T) {
		ev, err := parse(charge(`"10000"`, ""))
		if err != nil || ev.Inbound.Amount != ngn(10000) {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	t.Run("the receiving account from metadata when authorization lacks it", func(t *testing.T) {
		body := strings.Replace(charge("10000", ""), `"receiver_bank_account_number":"9930000737",`, "", 1)
		ev, err := parse(body)
		if err != nil || ev.Inbound.AccountNumber != "9930000737" {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	t.Run("a card payment is acknowledged, not money in", func(t *testing.T) {
		ev, err := parse(`{"event":"charge.success","data":{"id":7,"status":"success","reference":"r","amount":5800,"currency":"NGN","channel":"card","metadata":0,"authorization":{"channel":"card"}}}`)
		if err != nil || ev.Inbound != nil || ev.Payout != nil || ev.ID != "charge.success:7" {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	t.Run("an unknown event type is acknowledged", func(t *testing.T) {
		ev, err := parse(`{"event":"subscription.create","data":{"id":12}}`)
		if err != nil || ev.Inbound != nil || ev.Payout != nil || ev.ID != "subscription.create:12" {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	t.Run("a transfer we did not make has no reference of ours", func(t *testing.T) {
		ev, err := parse(`{"event":"transfer.success","data":{"id":860703114,"amount":100000,"currency":"NGN","reference":"acv_9ee55786-2323-4760-98e2-6380c9cb3f68","status":"success","transfer_code":"TRF_v5tip3zx8nna9o78","transferred_at":null,"updatedAt":"2025-08-04T10:32:40.000Z","gateway_response":null}}`)
		if err != nil || ev.Payout == nil || ev.Payout.Reference != "" || ev.Payout.Status != providers.PayoutSettled || ev.Payout.At.IsZero() {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	for _, tc := range []struct{ name, body string }{
		{"fractional amount", charge("100.5", "")},
		{"amount in exponent form", charge("1e5", "")},
		{"amount as a decimal string", charge(`"100.00"`, "")},
		{"negative amount", charge("-100", "")},
		{"zero amount", charge("0", "")},
		{"amount beyond int64", charge("9223372036854775808", "")},
		{"another currency", strings.Replace(charge("100", ""), `"NGN"`, `"USD"`, 1)},
		{"no receiving account", `{"event":"charge.success","data":{"id":1,"status":"success","amount":100,"currency":"NGN","channel":"dedicated_nuban","paid_at":"2026-11-24T10:00:00Z"}}`},
		{"bad paid_at", strings.Replace(charge("100", ""), "2026-11-24T10:00:00.000Z", "yesterday", 1)},
		{"failed status", strings.Replace(charge("100", ""), `"status":"success"`, `"status":"failed"`, 1)},
		{"no id", `{"event":"transfer.failed","data":{"amount":100,"currency":"NGN","reference":"x"}}`},
		{"fractional id", `{"event":"transfer.failed","data":{"id":1.5,"amount":100,"currency":"NGN"}}`},
		{"no event type", `{"data":{}}`},
		{"not JSON", `{"event":`},
		{"trailing data", `{"event":"x","data":{}} {}`},
	} {
		t.Run("malformed: "+tc.name, func(t *testing.T) {
			if _, err := parse(tc.body); !errors.Is(err, paystack.ErrMalformedEvent) {
				t.Fatalf("%v", err)
			}
		})
	}
}

// FuzzParseEvent: whatever the body, a correctly signed notification never panics, and what
// parses holds its promises (exact positive NGN amounts, an id, a known status); a body under
// another key's signature never parses.
func FuzzParseEvent(f *testing.F) {
	srv := paystacktest.New("sk_test_fuzz")
	defer srv.Close()
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	c, err := paystack.New(paystack.Config{SecretKey: srv.Secret, BaseURL: srv.URL, CustomerEmailDomain: "dva.example.com", Phone: "+2348000000000"})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	va, err := c.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "onramp:fuzz", AccountName: "Ada Lovelace"})
	if err != nil {
		f.Fatal(err)
	}
	if n, err := srv.Charge(va.AccountNumber, 12345, paystacktest.Sender{Name: "A"}); err == nil {
		f.Add(n.Body)
	}
	for i, status := range []string{"success", "failed", "reversed"} {
		ref := "payout:fuzz-000000000000" + string(rune('a'+i))
		if _, err := c.Payout(ctx, providers.PayoutRequest{Reference: ref, Rail: providers.RailNGN, Amount: ngn(100), BankCode: "058", AccountNumber: "0123456789"}); err != nil {
			f.Fatal(err)
		}
		pref, _ := paystack.EncodeReference(ref)
		if n, err := srv.Finish(pref, status, ""); err == nil {
			f.Add(n.Body)
		}
	}
	f.Add([]byte(`{"event":"charge.success","data":{"id":1,"amount":1.5}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := paystack.ParseEvent("sk_test_fuzz", sign("sk_test_other", body), body); !errors.Is(err, paystack.ErrBadSignature) {
			t.Fatalf("parsed under another key's signature: %v", err)
		}
		ev, err := paystack.ParseEvent("sk_test_fuzz", sign("sk_test_fuzz", body), body)
		if err != nil {
			if !errors.Is(err, paystack.ErrMalformedEvent) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if ev.Type == "" || ev.ID == "" {
			t.Fatalf("%+v", ev)
		}
		if in := ev.Inbound; in != nil {
			if in.Amount.Asset != "NGN" || in.Amount.Minor <= 0 || in.AccountNumber == "" || in.EventID != ev.ID {
				t.Fatalf("%+v", in)
			}
		}
		if p := ev.Payout; p != nil {
			if p.Amount.Asset != "NGN" || p.Amount.Minor <= 0 || p.EventID != ev.ID ||
				(p.Status != providers.PayoutSettled && p.Status != providers.PayoutFailed && p.Status != providers.PayoutReversed) {
				t.Fatalf("%+v", p)
			}
		}
	})
}

func BenchmarkParseEvent(b *testing.B) {
	const secret = "sk_test_bench"
	body := []byte(`{"event":"charge.success","data":{"id":302961,"domain":"live","status":"success","reference":"qTPrJoy9Bx",` +
		`"amount":500075,"currency":"NGN","channel":"dedicated_nuban","paid_at":"2026-11-24T10:00:00.000Z",` +
		`"authorization":{"channel":"dedicated_nuban","sender_name":"RANDALL HORTON","receiver_bank_account_number":"9930000737","receiver_bank":"Wema Bank"}}}`)
	sig := sign(secret, body)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := paystack.ParseEvent(secret, sig, body); err != nil {
			b.Fatal(err)
		}
	}
}
