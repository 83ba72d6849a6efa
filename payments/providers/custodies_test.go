package providers_test

import (
	"context"
	"errors"
	"testing"

	"svc/payments/money"
	"svc/payments/providers"
)

func TestChainCustodyRefusesChainsWithoutACustodianAsUnavailable(t *testing.T) {
	base := providers.NewSandbox(providers.SandboxConfig{}).Custody
	m := providers.ChainCustody{providers.Base: evmOnlyCustody{base}}
	for _, tc := range []struct {
		need providers.Need
		want error
	}{
		{providers.Need{Chain: providers.Base, Asset: money.USDT}, nil},
		{providers.Need{Chain: providers.Tron, Asset: money.USDT}, providers.ErrProviderUnavailable},
		{providers.Need{Chain: providers.Solana, Asset: money.USDC}, providers.ErrProviderUnavailable},
		{providers.Need{Chain: providers.Base, Asset: money.NGN}, providers.ErrProviderUnavailable},
	} {
		err := providers.Can(m, "custody", "send", tc.need)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%+v: %v, want %v", tc.need, err, tc.want)
		}
	}
	if _, err := m.DepositAddress(context.Background(), providers.AddressRequest{Reference: "merchant:x", Chain: providers.Tron, Asset: money.USDT}); !errors.Is(err, providers.ErrProviderUnavailable) {
		t.Fatalf("TRON address without a custodian: %v", err)
	}
	if _, err := m.DepositAddress(context.Background(), providers.AddressRequest{Reference: "merchant:x", Chain: providers.Base, Asset: money.USDT}); err != nil {
		t.Fatalf("BASE address: %v", err)
	}
}

type evmOnlyCustody struct{ providers.Custody }

func (evmOnlyCustody) Capabilities() providers.Capabilities {
	return providers.Capabilities{Chains: []providers.Chain{providers.Base}, Assets: []money.Asset{money.USDT, money.USDC}}
}
