package providers

import (
	"context"
	"fmt"
	"slices"

	"svc/payments/money"
)

// ChainCustody routes each chain to its own custodian: the live EVM adapter
// (payments/providers/evm) runs one per configured chain. A chain without one answers
// *UnavailableError (503 PROVIDER_UNAVAILABLE), and Can refuses it up front with the same 503
// before anything is written (ConfiguredFor), as for an environment with no custodian at all.
type ChainCustody map[Chain]Custody

var _ Custody = ChainCustody(nil)

func (m ChainCustody) get(chain Chain, operation string) (Custody, error) {
	c, ok := m[chain]
	if !ok {
		return nil, &UnavailableError{Provider: "custody", Operation: operation,
			Reason: fmt.Sprintf("no custodian is configured for %s in this environment", chain)}
	}
	return c, nil
}

// DepositAddress asks the chain's custodian.
func (m ChainCustody) DepositAddress(ctx context.Context, req AddressRequest) (Address, error) {
	c, err := m.get(req.Chain, "deposit address")
	if err != nil {
		return Address{}, err
	}
	return c.DepositAddress(ctx, req)
}

// Send asks the chain's custodian.
func (m ChainCustody) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	c, err := m.get(req.Chain, "send")
	if err != nil {
		return SendResult{}, err
	}
	return c.Send(ctx, req)
}

// ConfiguredFor reports whether a custodian serves need's chain (any chain when it names
// none), and that custodian declares need's asset when it is Capable.
func (m ChainCustody) ConfiguredFor(need Need) bool {
	if need.Chain == "" {
		return len(m) > 0
	}
	c, ok := m[need.Chain]
	if !ok {
		return false
	}
	if cp, ok := c.(Capable); ok && need.Asset != "" {
		if as := cp.Capabilities().Assets; as != nil && !slices.Contains(as, need.Asset) {
			return false
		}
	}
	return true
}

// Chains lists the chains served.
func (m ChainCustody) Chains() []Chain {
	var out []Chain
	for _, c := range append(append([]Chain{}, WalletChains...), RecipientChains...) {
		if _, ok := m[c]; ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Capabilities are the chains served and the assets of any of them.
func (m ChainCustody) Capabilities() Capabilities {
	caps := Capabilities{Chains: m.Chains()}
	for _, c := range m {
		cp, ok := c.(Capable)
		if !ok {
			return Capabilities{Chains: caps.Chains}
		}
		for _, a := range cp.Capabilities().Assets {
			if !slices.Contains(caps.Assets, a) {
				caps.Assets = append(caps.Assets, a)
			}
		}
	}
	if caps.Assets == nil {
		caps.Assets = []money.Asset{}
	}
	return caps
}
