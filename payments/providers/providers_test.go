package providers_test

import (
	"context"
	"errors"
	"testing"

	"svc/payments/money"
	"svc/payments/providers"
)

func TestNUBAN(t *testing.T) {
	// The CBN's worked example: bank 011, serial 000001457 -> check digit 9.
	n, err := providers.NUBAN("011", "000001457")
	if err != nil || n != "0000014579" {
		t.Fatalf("NUBAN = %q, %v", n, err)
	}
	if !providers.ValidNUBAN("011", "0000014579") || providers.ValidNUBAN("011", "0000014578") || providers.ValidNUBAN("058", "0000014579") {
		t.Fatal("ValidNUBAN")
	}
	for _, bad := range [][2]string{{"11", "000001457"}, {"011", "00001457"}, {"01a", "000001457"}} {
		if _, err := providers.NUBAN(bad[0], bad[1]); err == nil {
			t.Fatalf("NUBAN(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestValidateAddress(t *testing.T) {
	cases := []struct {
		chain providers.Chain
		addr  string
		ok    bool
	}{
		{providers.Ethereum, "0xdAC17F958D2ee523a2206206994597C13D831ec7", true},
		{providers.Base, "0xdac17f958d2ee523a2206206994597c13d831ec7", true},
		{providers.Polygon, "0xdac17f958d2ee523a2206206994597c13d831ec", false},
		{providers.Celo, "dac17f958d2ee523a2206206994597c13d831ec7aa", false},
		{providers.Ethereum, "0xgac17f958d2ee523a2206206994597c13d831ec7", false},
		{providers.Aptos, "0x" + "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90", true},
		{providers.Aptos, "0xdac17f958d2ee523a2206206994597c13d831ec7", false},
		{providers.Solana, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true},
		{providers.Solana, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10", false}, // 0 is not base58
		{providers.Solana, "EPjFWdd5AufqSSqeM2qN1", false},
		{providers.Tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", true},
		{providers.Tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", false}, // checksum
		{providers.Tron, "0xdac17f958d2ee523a2206206994597c13d831ec7", false},
		{providers.Chain("BITCOIN"), "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", false},
	}
	for _, c := range cases {
		err := providers.ValidateAddress(c.chain, c.addr)
		if (err == nil) != c.ok {
			t.Errorf("ValidateAddress(%s, %s) = %v, want ok=%v", c.chain, c.addr, err, c.ok)
		}
	}
}

func TestSandboxIsDeterministicAndValid(t *testing.T) {
	ctx := context.Background()
	envs := providers.Default(providers.SandboxConfig{BankCode: "090", BankName: "Sandbox MFB"})
	sb := envs.For("sandbox")
	a, err := sb.Bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "va-1", AccountName: "Ada Obi"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sb.Bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "va-1", AccountName: "Ada Obi"})
	c, _ := sb.Bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: "va-1", Attempt: 1})
	if a != b || a.AccountNumber == c.AccountNumber || !providers.ValidNUBAN("090", a.AccountNumber) || a.BankName != "Sandbox MFB" {
		t.Fatalf("accounts %+v %+v %+v", a, b, c)
	}
	for _, ch := range append(providers.WalletChains, providers.Arbitrum, providers.Optimism) {
		addr, err := sb.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "m-1", Chain: ch, Asset: money.USDT})
		if err != nil {
			t.Fatal(err)
		}
		if err := providers.ValidateAddress(ch, addr.Address); err != nil {
			t.Fatalf("%s address %s: %v", ch, addr.Address, err)
		}
		again, _ := sb.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "m-1", Chain: ch, Asset: money.USDT})
		if again != addr {
			t.Fatalf("%s address not stable", ch)
		}
	}
	if d, _ := sb.KYC.VerifyTier1(ctx, providers.Tier1Request{BVN: "22222222222"}); !d.Approved {
		t.Fatal("tier 1 rejected")
	}
	if d, _ := sb.KYC.VerifyTier1(ctx, providers.Tier1Request{BVN: "00022222222"}); d.Approved || d.Reason == "" {
		t.Fatal("BVN 000... passed")
	}
	if d, _ := sb.KYC.VerifyTier2(ctx, providers.Tier2Request{MostRecentOccupation: "STEM"}); !d.Approved {
		t.Fatal("tier 2 rejected")
	}
	if d, _ := sb.KYC.VerifyTier2(ctx, providers.Tier2Request{MostRecentOccupation: "STEM", ActingAsIntermediary: true}); d.Approved {
		t.Fatal("intermediary passed")
	}
	if d, _ := sb.KYC.VerifyTier2(ctx, providers.Tier2Request{}); d.Approved {
		t.Fatal("missing occupation passed")
	}
	q, err := sb.FX.Rate(ctx, money.NGN, money.USDT)
	if err != nil || q.Rate.String() != "0.000625" {
		t.Fatalf("NGN/USDT = %v, %v", q.Rate, err)
	}
	if r, err := sb.Bank.Payout(ctx, providers.PayoutRequest{Reference: "p"}); err != nil || r.Status != providers.PayoutSettled {
		t.Fatal(r, err)
	}
	if r, err := sb.Custody.Send(ctx, providers.SendRequest{Reference: "s", Chain: providers.Ethereum}); err != nil || r.TxHash == "" {
		t.Fatal(r, err)
	}
	if s, err := sb.KYC.Initiate(ctx, providers.InitiateRequest{Reference: "c", Tier: 1}); err != nil || s.VerificationURL == "" || s.Status != "PENDING" {
		t.Fatal(s, err)
	}
}

func TestLiveUnconfiguredIsUnavailable(t *testing.T) {
	ctx := context.Background()
	live := providers.Default(providers.SandboxConfig{}).For("live")
	_, e1 := live.Bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{})
	_, e2 := live.Bank.Payout(ctx, providers.PayoutRequest{})
	_, e3 := live.Custody.DepositAddress(ctx, providers.AddressRequest{})
	_, e4 := live.Custody.Send(ctx, providers.SendRequest{})
	_, e5 := live.KYC.VerifyTier1(ctx, providers.Tier1Request{})
	_, e6 := live.KYC.VerifyTier2(ctx, providers.Tier2Request{})
	_, e7 := live.KYC.Initiate(ctx, providers.InitiateRequest{})
	_, e8 := live.FX.Rate(ctx, money.USDT, money.NGN)
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8} {
		var ue *providers.UnavailableError
		if !errors.Is(err, providers.ErrProviderUnavailable) || !errors.As(err, &ue) || ue.APICode() != "PROVIDER_UNAVAILABLE" {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	// A partially configured live set keeps what it has.
	envs := providers.Environments{Live: providers.Set{KYC: providers.NewSandbox(providers.SandboxConfig{}).KYC}}
	if _, err := envs.For("live").KYC.VerifyTier1(ctx, providers.Tier1Request{BVN: "12345678901"}); err != nil {
		t.Fatal(err)
	}
	if _, err := envs.For("live").Bank.Payout(ctx, providers.PayoutRequest{}); !errors.Is(err, providers.ErrProviderUnavailable) {
		t.Fatal(err)
	}
	if providers.Configured(live.Bank) || providers.Configured(live.Custody) || providers.Configured(nil) ||
		!providers.Configured(envs.For("live").KYC) || !providers.Configured(providers.Default(providers.SandboxConfig{}).For("sandbox").Custody) {
		t.Fatal("Configured does not tell the unconfigured stand-ins from real providers")
	}
}
