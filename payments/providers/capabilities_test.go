package providers_test

import (
	"errors"
	"strings"
	"testing"

	"svc/payments/money"
	"svc/payments/providers"
)

// evmOnly is a custodian that declares the chains and assets it works on.
type evmOnly struct{ providers.Custody }

func (evmOnly) Capabilities() providers.Capabilities {
	return providers.Capabilities{Chains: []providers.Chain{providers.Base, providers.Ethereum}, Assets: []money.Asset{money.USDT, money.USDC}}
}

// ngnBank is a bank partner that pays the NGN rail only (as Paystack declares).
type ngnBank struct{ providers.Bank }

func (ngnBank) Capabilities() providers.Capabilities {
	return providers.Capabilities{Rails: []string{providers.RailNGN}, Assets: []money.Asset{money.NGN}}
}

func TestCan(t *testing.T) {
	sandbox := providers.NewSandbox(providers.SandboxConfig{})
	none := providers.Unconfigured()
	for _, c := range []struct {
		name    string
		p       any
		need    providers.Need
		want    error  // nil, ErrProviderUnavailable or ErrUnsupported
		message string // part of the refusal's sentence
	}{
		{"nothing configured", none.Bank, providers.Need{Rail: providers.RailNGN}, providers.ErrProviderUnavailable, "no bank provider"},
		{"nil provider", nil, providers.Need{}, providers.ErrProviderUnavailable, ""},
		{"sandbox bank pays every rail", sandbox.Bank, providers.Need{Rail: providers.RailSWIFT, Asset: money.USD}, nil, ""},
		{"sandbox custody sends on every chain", sandbox.Custody, providers.Need{Chain: providers.Tron, Asset: money.USDT}, nil, ""},
		{"NGN rail through an NGN bank", ngnBank{}, providers.Need{Rail: providers.RailNGN, Asset: money.NGN}, nil, ""},
		{"US wire through an NGN bank", ngnBank{}, providers.Need{Rail: providers.RailUSWire, Asset: money.USD}, providers.ErrUnsupported,
			"does not support the US_WIRE rail, USD (payout); it offers rails NGN; assets NGN"},
		{"SWIFT through an NGN bank", ngnBank{}, providers.Need{Rail: providers.RailSWIFT}, providers.ErrUnsupported, "the SWIFT rail"},
		{"a chain the custodian has", evmOnly{}, providers.Need{Chain: providers.Base, Asset: money.USDC}, nil, ""},
		{"a chain it has not", evmOnly{}, providers.Need{Chain: providers.Tron, Asset: money.USDT}, providers.ErrUnsupported,
			"does not support the TRON chain (payout); it offers chains BASE, ETHEREUM"},
		{"an asset it has not", evmOnly{}, providers.Need{Chain: providers.Base, Asset: money.NGN}, providers.ErrUnsupported, "NGN"},
		{"a need of no kind it limits", evmOnly{}, providers.Need{Rail: providers.RailSWIFT}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			kind := "bank"
			if _, ok := c.p.(providers.Custody); ok {
				kind = "custody"
			}
			err := providers.Can(c.p, kind, "payout", c.need)
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			case err != nil && !strings.Contains(err.Error(), c.message):
				t.Fatalf("%q does not say %q", err, c.message)
			}
			var ue *providers.UnsupportedError
			if errors.As(err, &ue) && (ue.APICode() != "NOT_SUPPORTED" || errors.Is(err, providers.ErrProviderUnavailable)) {
				t.Fatalf("unsupported is its own kind: %v", ue)
			}
		})
	}
}
