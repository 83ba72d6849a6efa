package providers_test

import (
	"strings"
	"testing"

	"svc/payments/providers"
)

func TestValidateAddressChecksEIP55(t *testing.T) {
	const good = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" // EIP-55's own example
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{good, true},
		{strings.ToLower(good), true},                         // no checksum: accepted
		{"0x" + strings.ToUpper(good[2:]), true},              // no checksum either
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", false}, // one letter's case wrong
		{"0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", false},
		{"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", true},
		{"0xFb6916095ca1df60bB79Ce92cE3Ea74c37c5d359", false},
		{"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae", false}, // 39 digits
	} {
		for _, chain := range []providers.Chain{providers.Ethereum, providers.Base, providers.Arbitrum} {
			err := providers.ValidateAddress(chain, tc.addr)
			if (err == nil) != tc.ok {
				t.Errorf("%s on %s: %v, want ok=%v", tc.addr, chain, err, tc.ok)
			}
		}
	}
	if err := providers.ValidateAddress(providers.Base, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"); err == nil || !strings.Contains(err.Error(), "EIP-55") {
		t.Fatalf("wrong checksum message: %v", err)
	}
}
