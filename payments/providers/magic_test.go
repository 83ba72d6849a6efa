package providers_test

import (
	"context"
	"strings"
	"testing"

	"svc/payments/money"
	"svc/payments/providers"
)

func TestSandboxMagicValues(t *testing.T) {
	ctx := context.Background()
	set := providers.NewSandbox(providers.SandboxConfig{})

	// Every rejected address is a valid address of its chains (it passes the API's checks).
	for _, c := range append(append([]providers.Chain{}, providers.WalletChains...), providers.Arbitrum, providers.Optimism) {
		addr := providers.SendRejected(c)
		if err := providers.ValidateAddress(c, addr); err != nil {
			t.Fatalf("%s: magic address %s invalid: %v", c, addr, err)
		}
		res, err := set.Custody.Send(ctx, providers.SendRequest{Reference: "w1", Chain: c, Asset: money.USDT, To: addr, Amount: money.New(money.USDT, 1)})
		if err != nil || res.Status != providers.SendFailed || res.FailureReason == "" || res.TxHash != "" {
			t.Fatalf("%s: send to magic address: %+v %v", c, res, err)
		}
		ok, err := set.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "x", Chain: c, Asset: money.USDT})
		if err != nil {
			t.Fatal(err)
		}
		if res, _ := set.Custody.Send(ctx, providers.SendRequest{Reference: "w2", Chain: c, Asset: money.USDT, To: ok.Address, Amount: money.New(money.USDT, 1)}); res.Status != providers.SendConfirmed {
			t.Fatalf("%s: ordinary send %+v", c, res)
		}
	}
	if res, _ := set.Custody.Send(ctx, providers.SendRequest{Reference: "w3", Chain: providers.Base, To: strings.ToUpper(providers.SendRejectedEVM[2:])}); res.Status == providers.SendFailed {
		t.Fatal("an address without 0x matched")
	}
	if res, _ := set.Custody.Send(ctx, providers.SendRequest{Reference: "w3", Chain: providers.Base, To: "0x" + strings.ToUpper(providers.SendRejectedEVM[2:])}); res.Status != providers.SendFailed {
		t.Fatal("EVM magic address is not case-insensitive")
	}

	payouts := []struct {
		req  providers.PayoutRequest
		fail bool
	}{
		{providers.PayoutRequest{Rail: providers.RailNGN, BankCode: "058", AccountNumber: providers.PayoutRejectedAccountNGN}, true},
		{providers.PayoutRequest{Rail: providers.RailNGN, BankCode: "058", AccountNumber: "0123456789"}, false},
		{providers.PayoutRequest{Rail: providers.RailUSACH, AccountNumber: providers.PayoutRejectedAccountUS}, true},
		{providers.PayoutRequest{Rail: providers.RailUSWire, AccountNumber: providers.PayoutRejectedAccountUS}, true},
		{providers.PayoutRequest{Rail: providers.RailUSACH, AccountNumber: "000123456789"}, false},
		{providers.PayoutRequest{Rail: providers.RailNGN, AccountNumber: providers.PayoutRejectedAccountUS}, false},
		{providers.PayoutRequest{Rail: providers.RailSWIFT, AccountNumber: providers.PayoutRejectedIBAN, Details: map[string]string{"iban": providers.PayoutRejectedIBAN}}, true},
		{providers.PayoutRequest{Rail: providers.RailSWIFT, AccountNumber: "GB82WEST12345698765432", Details: map[string]string{"iban": "GB82WEST12345698765432"}}, false},
	}
	for i, p := range payouts {
		p.req.Reference = "p" + string(rune('a'+i))
		p.req.Amount = money.New(money.NGN, 100)
		res, err := set.Bank.Payout(ctx, p.req)
		if err != nil {
			t.Fatal(err)
		}
		if (res.Status == providers.PayoutFailed) != p.fail || (p.fail && res.FailureReason == "") {
			t.Fatalf("payout %d %+v: %+v", i, p.req, res)
		}
	}
	if !validIBAN(providers.PayoutRejectedIBAN) {
		t.Fatal("magic IBAN has a bad checksum")
	}

	fx, ok := set.FX.(providers.ConversionChecker)
	if !ok {
		t.Fatal("sandbox FX does not check conversions")
	}
	for _, c := range []struct {
		minor int64
		ok    bool
	}{{500013, false}, {13, false}, {500000, true}, {500113, false}, {501300, true}, {500012, true}} {
		d, err := fx.CheckConversion(ctx, providers.ConversionRequest{Reference: "d", From: money.New(money.NGN, c.minor), To: money.USDT})
		if err != nil || d.Approved != c.ok || (!c.ok && d.Reason == "") {
			t.Fatalf("%d kobo: %+v %v", c.minor, d, err)
		}
	}
	if _, ok := providers.Unconfigured().FX.(providers.ConversionChecker); ok {
		t.Fatal("the unconfigured FX checks conversions")
	}
}

func validIBAN(s string) bool {
	r := s[4:] + s[:4]
	rem := 0
	for _, c := range r {
		if c >= 'A' && c <= 'Z' {
			rem = (rem*100 + int(c-'A') + 10) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	return rem == 1
}
