package paystack_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"svc/payments/money"
	"svc/payments/paymentstest"
	"svc/payments/providers"
	"svc/payments/providers/paystack"
	"svc/payments/providers/paystack/paystacktest"
)

// Contract tests: the adapter against the in-process Paystack contract server.

const payoutRef = "payout:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88"

func setup(t *testing.T, tweak ...func(*paystack.Config)) (*paystacktest.Server, *paystack.Client) {
	t.Helper()
	srv := paystacktest.New("sk_test_contract_secret")
	t.Cleanup(srv.Close)
	cfg := paystack.Config{
		SecretKey: srv.Secret, BaseURL: srv.URL, CustomerEmailDomain: "dva.example.com", Phone: "+2348000000000",
		Timeout: 2 * time.Second, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := paystack.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func ngn(kobo int64) money.Amount { return money.New(money.NGN, kobo) }

func TestNewChecksConfig(t *testing.T) {
	ok := paystack.Config{SecretKey: "sk_test_x", CustomerEmailDomain: "dva.example.com", Phone: "+2348000000000"}
	for _, tc := range []struct {
		name string
		edit func(*paystack.Config)
	}{
		{"no secret key", func(c *paystack.Config) { c.SecretKey = " " }},
		{"no email domain", func(c *paystack.Config) { c.CustomerEmailDomain = "" }},
		{"email domain with @", func(c *paystack.Config) { c.CustomerEmailDomain = "a@b.com" }},
		{"no phone", func(c *paystack.Config) { c.Phone = "" }},
		{"relative base URL", func(c *paystack.Config) { c.BaseURL = "api.paystack.co" }},
		{"plain http to another host", func(c *paystack.Config) { c.BaseURL = "http://api.paystack.co" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			if _, err := paystack.New(cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := paystack.New(ok); err != nil {
		t.Fatal(err)
	}
}

func TestCreateVirtualAccount(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	req := providers.VirtualAccountRequest{Reference: "onramp:0190d5e4-0000-7000-8000-000000000001", AccountName: "Ada Lovelace", Type: "PERMANENT"}
	va, err := c.CreateVirtualAccount(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if va.BankCode != "035" || va.BankName != "Wema Bank" || len(va.AccountNumber) != 10 || !providers.ValidNUBAN("035", va.AccountNumber) ||
		va.AccountName != "SVC/ADA LOVELACE" || !strings.HasPrefix(va.ProviderReference, "CUS_") {
		t.Fatalf("account %+v", va)
	}
	t.Run("the same reference and attempt give the same account", func(t *testing.T) {
		again, err := c.CreateVirtualAccount(ctx, req)
		if err != nil || again != va || srv.DedicatedAccounts() != 1 {
			t.Fatalf("%+v %v (%d accounts)", again, err, srv.DedicatedAccounts())
		}
	})
	t.Run("the next attempt gives another account", func(t *testing.T) {
		r := req
		r.Attempt = 1
		other, err := c.CreateVirtualAccount(ctx, r)
		if err != nil || other.AccountNumber == va.AccountNumber || other.ProviderReference == va.ProviderReference {
			t.Fatalf("%+v %v", other, err)
		}
	})
	t.Run("a long reference with any characters", func(t *testing.T) {
		r := req
		r.Reference = "merchant:" + strings.Repeat("Ünïcode/ and spaces ", 5)
		first, err := c.CreateVirtualAccount(ctx, r)
		if err != nil || first.AccountNumber == va.AccountNumber {
			t.Fatalf("%+v %v", first, err)
		}
		if again, err := c.CreateVirtualAccount(ctx, r); err != nil || again != first {
			t.Fatalf("%+v %v", again, err)
		}
	})
	t.Run("another reference gives another account", func(t *testing.T) {
		r := req
		r.Reference = "onramp:0190d5e4-0000-7000-8000-000000000002"
		other, err := c.CreateVirtualAccount(ctx, r)
		if err != nil || other.AccountNumber == va.AccountNumber {
			t.Fatalf("%+v %v", other, err)
		}
	})
}

func TestCreateVirtualAccountLostAnswer(t *testing.T) {
	srv, c := setup(t)
	// The first POST issues the account but its answer is lost; the retry is refused (the
	// customer has one); the adapter finds the account it made.
	srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateDVA, Status: 502, After: true})
	va, err := c.CreateVirtualAccount(context.Background(), providers.VirtualAccountRequest{Reference: "onramp:lost", AccountName: "Acme"})
	if err != nil || va.AccountNumber == "" || srv.DedicatedAccounts() != 1 {
		t.Fatalf("%+v %v (%d accounts)", va, err, srv.DedicatedAccounts())
	}
}

func TestCreateVirtualAccountRefusedIsUnavailable(t *testing.T) {
	srv, c := setup(t, func(cfg *paystack.Config) { cfg.PreferredBank = "no-such-bank" })
	_, err := c.CreateVirtualAccount(context.Background(), providers.VirtualAccountRequest{Reference: "onramp:x", AccountName: "Acme"})
	var ue *providers.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "preferred bank") {
		t.Fatalf("%v", err)
	}
	if n := srv.Requests(paystacktest.RouteCreateDVA); n != 1 {
		t.Fatalf("a 4xx was sent %d times", n)
	}
}

func TestPayout(t *testing.T) {
	ctx := context.Background()
	srv, c := setup(t)
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(150075), BankCode: "058", AccountNumber: "0123456789"}
	res, err := c.Payout(ctx, req)
	if err != nil || res.Status != providers.PayoutSubmitted || !strings.HasPrefix(res.ProviderReference, "TRF_") {
		t.Fatalf("%+v %v", res, err)
	}
	ref, _ := paystack.EncodeReference(payoutRef)
	tr, ok := srv.Transfer(ref)
	if !ok || tr.Amount != 150075 || tr.AccountName != "ADA LOVELACE" || tr.BankCode != "058" || tr.Code != res.ProviderReference {
		t.Fatalf("transfer %+v %v", tr, ok)
	}
	if srv.Balance() != 1_000_000_000-150075 {
		t.Fatalf("balance %d", srv.Balance())
	}
	t.Run("asking again answers the same transfer's state", func(t *testing.T) {
		again, err := c.Payout(ctx, req)
		if err != nil || again != res || srv.Requests(paystacktest.RouteCreateTransfer) != 1 || srv.Requests(paystacktest.RouteResolveAccount) != 1 {
			t.Fatalf("%+v %v", again, err)
		}
	})
	t.Run("success settles it", func(t *testing.T) {
		if _, err := srv.Finish(ref, "success", ""); err != nil {
			t.Fatal(err)
		}
		done, err := c.Payout(ctx, req)
		if err != nil || done.Status != providers.PayoutSettled || done.ProviderReference != res.ProviderReference {
			t.Fatalf("%+v %v", done, err)
		}
	})
	t.Run("the same reference for another amount is never this payout", func(t *testing.T) {
		r := req
		r.Amount = ngn(150076)
		if _, err := c.Payout(ctx, r); err == nil || srv.Requests(paystacktest.RouteCreateTransfer) != 1 {
			t.Fatalf("accepted: %v", err)
		}
	})
}

func TestPayoutOutcomes(t *testing.T) {
	for _, tc := range []struct {
		initial, finish string
		want            string
	}{
		{"success", "", providers.PayoutSettled},
		{"otp", "", providers.PayoutSubmitted},
		{"pending", "failed", providers.PayoutFailed},
		{"pending", "reversed", providers.PayoutFailed},
	} {
		t.Run(tc.initial+" "+tc.finish, func(t *testing.T) {
			srv, c := setup(t)
			srv.AddAccount("044", "0690000031", "GRACE HOPPER")
			srv.SetInitialTransferStatus(tc.initial)
			req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(500000), BankCode: "044", AccountNumber: "0690000031"}
			if _, err := c.Payout(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if tc.finish != "" {
				ref, _ := paystack.EncodeReference(payoutRef)
				if _, err := srv.Finish(ref, tc.finish, "Beneficiary bank unavailable"); err != nil {
					t.Fatal(err)
				}
			}
			res, err := c.Payout(context.Background(), req)
			if err != nil || res.Status != tc.want || (tc.want == providers.PayoutFailed) != (res.FailureReason != "") {
				t.Fatalf("%+v %v", res, err)
			}
		})
	}
}

func TestPayoutRetries5xxWithoutDoubleTransfer(t *testing.T) {
	req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(250000), BankCode: "058", AccountNumber: "0123456789"}
	t.Run("answers lost after the transfer was made", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateTransfer, Status: 502, After: true, Times: 2})
		res, err := c.Payout(context.Background(), req)
		if err != nil || res.Status != providers.PayoutSubmitted {
			t.Fatalf("%+v %v", res, err)
		}
		if n := len(srv.Transfers()); n != 1 || srv.Balance() != 1_000_000_000-250000 {
			t.Fatalf("%d transfers, balance %d", n, srv.Balance())
		}
		if n := srv.Requests(paystacktest.RouteCreateTransfer); n != 3 {
			t.Fatalf("%d transfer requests, want 3 (two lost answers, one duplicate refusal)", n)
		}
	})
	t.Run("refused before the transfer was made", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateTransfer, Status: 503, Times: 2})
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteResolveAccount, Status: 500})
		res, err := c.Payout(context.Background(), req)
		if err != nil || res.Status != providers.PayoutSubmitted || len(srv.Transfers()) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		if n := srv.Requests(paystacktest.RouteCreateTransfer); n != 3 {
			t.Fatalf("%d transfer requests", n)
		}
	})
	t.Run("down for every attempt: unavailable, and the next call makes it once", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateTransfer, Status: 500, After: true, Times: 3})
		_, err := c.Payout(context.Background(), req)
		if !errors.Is(err, providers.ErrProviderUnavailable) {
			t.Fatalf("%v", err)
		}
		res, err := c.Payout(context.Background(), req) // the job's retry
		if err != nil || res.Status != providers.PayoutSubmitted || len(srv.Transfers()) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestPayout4xxNotRetried(t *testing.T) {
	base := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(10000), BankCode: "058", AccountNumber: "0123456789"}
	t.Run("an account the bank does not know fails the payout", func(t *testing.T) {
		srv, c := setup(t)
		res, err := c.Payout(context.Background(), base)
		if err != nil || res.Status != providers.PayoutFailed || !strings.Contains(res.FailureReason, "Could not resolve") {
			t.Fatalf("%+v %v", res, err)
		}
		if srv.Requests(paystacktest.RouteResolveAccount) != 1 || len(srv.Transfers()) != 0 {
			t.Fatal("retried a 4xx or paid")
		}
	})
	t.Run("an unknown bank fails the payout", func(t *testing.T) {
		srv, c := setup(t)
		r := base
		r.BankCode = "999"
		res, err := c.Payout(context.Background(), r)
		if err != nil || res.Status != providers.PayoutFailed || srv.Requests(paystacktest.RouteResolveAccount) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("an injected 400 on the transfer fails the payout", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteCreateTransfer, Status: 400})
		res, err := c.Payout(context.Background(), base)
		if err != nil || res.Status != providers.PayoutFailed || srv.Requests(paystacktest.RouteCreateTransfer) != 1 || len(srv.Transfers()) != 0 {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("a balance that does not cover it is an error, not a failure", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.SetBalance(9999)
		_, err := c.Payout(context.Background(), base)
		var ae *paystack.APIError
		if !errors.As(err, &ae) || ae.Code != "insufficient_balance" || srv.Requests(paystacktest.RouteCreateTransfer) != 1 {
			t.Fatalf("%v", err)
		}
		srv.SetBalance(10000)
		if res, err := c.Payout(context.Background(), base); err != nil || res.Status != providers.PayoutSubmitted || srv.Balance() != 0 {
			t.Fatalf("after top-up: %+v %v", res, err)
		}
	})
	t.Run("a rail Paystack does not serve fails without a call", func(t *testing.T) {
		srv, c := setup(t)
		r := base
		r.Rail, r.Amount = providers.RailUSACH, money.New(money.USD, 100)
		res, err := c.Payout(context.Background(), r)
		if err != nil || res.Status != providers.PayoutFailed || srv.Requests(paystacktest.RouteVerifyTransfer) != 0 {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestUnavailable(t *testing.T) {
	req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(10000), BankCode: "058", AccountNumber: "0123456789"}
	t.Run("timeouts", func(t *testing.T) {
		srv, c := setup(t, func(cfg *paystack.Config) { cfg.Timeout, cfg.MaxAttempts = 50*time.Millisecond, 2 })
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteVerifyTransfer, Delay: time.Minute, Times: 5})
		start := time.Now()
		_, err := c.Payout(context.Background(), req)
		if !errors.Is(err, providers.ErrProviderUnavailable) || time.Since(start) > 5*time.Second {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
		if n := srv.Requests(paystacktest.RouteVerifyTransfer); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
	})
	t.Run("the caller's deadline", func(t *testing.T) {
		srv, c := setup(t)
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteFetchCustomer, Delay: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "onramp:slow", AccountName: "Acme"})
		if !errors.Is(err, providers.ErrProviderUnavailable) || time.Since(start) > 5*time.Second {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
	})
	t.Run("server gone", func(t *testing.T) {
		srv, c := setup(t)
		srv.Close()
		_, err := c.CreateVirtualAccount(context.Background(), providers.VirtualAccountRequest{Reference: "onramp:gone", AccountName: "Acme"})
		var ue *providers.UnavailableError
		if !errors.As(err, &ue) || ue.Reason == "" || !strings.Contains(err.Error(), "unavailable") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a wrong key is not retried", func(t *testing.T) {
		srv, c := setup(t, func(cfg *paystack.Config) { cfg.SecretKey = "sk_test_wrong" })
		_, err := c.Payout(context.Background(), req)
		var ue *providers.UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "credentials") || strings.Contains(err.Error(), "sk_test") {
			t.Fatalf("%v", err)
		}
		if n := srv.Requests(paystacktest.RouteVerifyTransfer); n != 1 {
			t.Fatalf("%d attempts", n)
		}
	})
	t.Run("429 is retried", func(t *testing.T) {
		srv, c := setup(t)
		srv.AddAccount("058", "0123456789", "ADA LOVELACE")
		srv.Inject(paystacktest.Fault{Route: paystacktest.RouteVerifyTransfer, Status: 429})
		if res, err := c.Payout(context.Background(), req); err != nil || res.Status != providers.PayoutSubmitted {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestResolveAccount(t *testing.T) {
	srv, c := setup(t)
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	if name, err := c.ResolveAccount(context.Background(), "058", "0123456789"); err != nil || name != "ADA LOVELACE" {
		t.Fatalf("%q %v", name, err)
	}
	if _, err := c.ResolveAccount(context.Background(), "058", "0123456780"); !errors.Is(err, paystack.ErrAccountNotResolved) {
		t.Fatalf("%v", err)
	}
}

func TestReferences(t *testing.T) {
	for _, ref := range []string{payoutRef, "transfer:0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88", "x_y:Z.1 2-3456789"} {
		p, err := paystack.EncodeReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				t.Fatalf("%q has %q", p, c)
			}
		}
		back, err := paystack.DecodeReference(p)
		if err != nil || back != ref {
			t.Fatalf("%q -> %q -> %q %v", ref, p, back, err)
		}
	}
	if p, _ := paystack.EncodeReference(payoutRef); p != "payout__0190d5e4-7c2b-7f3e-9a51-3d2b1c0e9f88" {
		t.Fatalf("%q", p)
	}
	for _, bad := range []string{"short", strings.Repeat("a", 51)} {
		if _, err := paystack.EncodeReference(bad); !errors.Is(err, paystack.ErrReference) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	for _, foreign := range []string{"acv_9ee55786-2323-4760-98e2-6380c9cb3f68", "1976435206", "abcdefghijklmnop_61"} {
		if _, err := paystack.DecodeReference(foreign); !errors.Is(err, paystack.ErrReference) {
			t.Fatalf("%q decoded", foreign)
		}
	}
}

func FuzzReferenceRoundTrip(f *testing.F) {
	for _, s := range []string{payoutRef, "a:b_c", "ÀÉ€ 1234567890ab", "__uu::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		p, err := paystack.EncodeReference(ref)
		if err != nil {
			return
		}
		if back, err := paystack.DecodeReference(p); err != nil || back != ref {
			t.Fatalf("%q -> %q -> %q %v", ref, p, back, err)
		}
	})
}

func TestConcurrentPayoutsOfOneReferencePayOnce(t *testing.T) {
	srv, c := setup(t)
	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
	req := providers.PayoutRequest{Reference: payoutRef, Rail: providers.RailNGN, Amount: ngn(77_700), BankCode: "058", AccountNumber: "0123456789"}
	if err := paymentstest.Race(8, func(int) error {
		res, err := c.Payout(context.Background(), req)
		if err == nil && res.Status != providers.PayoutSubmitted {
			err = errors.New("status " + res.Status)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Transfers()); n != 1 || srv.Balance() != 1_000_000_000-77_700 {
		t.Fatalf("%d transfers, balance %d", n, srv.Balance())
	}
}
