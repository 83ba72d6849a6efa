package evm

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"svc/payments/money"
	"svc/payments/providers"
)

// chainFile is one chain of the custody configuration file (docs/live.md, "Custody").
type chainFile struct {
	Chain         string      `json:"chain"`
	RPCURL        string      `json:"rpc_url"`
	RPCURLEnv     string      `json:"rpc_url_env"` // an environment variable holding the URL (when it carries an API key)
	ChainID       int64       `json:"chain_id"`
	Confirmations uint64      `json:"confirmations"`
	Tokens        []tokenFile `json:"tokens"`
	MinTipWei     string      `json:"min_tip_wei"`
	MaxFeeCapWei  string      `json:"max_fee_cap_wei"`
	ReplaceAfter  string      `json:"replace_after"`
	StartBlock    uint64      `json:"start_block"`
	PollEvery     string      `json:"poll_every"`
	SweepEvery    string      `json:"sweep_every"`
	LagAlert      string      `json:"lag_alert"`
}

type tokenFile struct {
	Asset          string `json:"asset"`
	Contract       string `json:"contract"`
	Decimals       uint8  `json:"decimals"`
	SweepThreshold string `json:"sweep_threshold"` // a decimal amount of the asset, e.g. "100"; "" never sweeps
}

type custodyFile struct {
	Chains []chainFile `json:"chains"`
}

// LoadConfigFile reads the custody configuration file at path into one Config per chain
// (without signer, notifier, metrics or logger); getenv resolves rpc_url_env. The error names
// the file and the field, never a URL (it may carry a provider's API key).
func LoadConfigFile(path string, getenv func(string) string) ([]Config, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("custody config: %w", err)
	}
	var f custodyFile
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("custody config %s: %w", path, err)
	}
	if len(f.Chains) == 0 {
		return nil, fmt.Errorf("custody config %s: no chains", path)
	}
	var out []Config
	seen := map[providers.Chain]bool{}
	for _, ch := range f.Chains {
		chain := providers.Chain(strings.ToUpper(ch.Chain))
		if seen[chain] {
			return nil, fmt.Errorf("custody config: %s twice", chain)
		}
		seen[chain] = true
		cfg := Config{Chain: chain, RPCURL: ch.RPCURL, ChainID: ch.ChainID, Confirmations: ch.Confirmations, StartBlock: ch.StartBlock}
		if ch.RPCURLEnv != "" {
			cfg.RPCURL = getenv(ch.RPCURLEnv)
			if cfg.RPCURL == "" {
				return nil, fmt.Errorf("custody config: %s rpc_url_env %s is empty", chain, ch.RPCURLEnv)
			}
		}
		for _, t := range ch.Tokens {
			asset := money.Asset(strings.ToUpper(t.Asset))
			if !common.IsHexAddress(t.Contract) {
				return nil, fmt.Errorf("custody config: %s %s contract %q is not an address", chain, asset, t.Contract)
			}
			tok := Token{Asset: asset, Contract: common.HexToAddress(t.Contract), Decimals: t.Decimals}
			if t.SweepThreshold != "" {
				a, err := money.Parse(asset, t.SweepThreshold)
				if err != nil {
					return nil, fmt.Errorf("custody config: %s %s sweep_threshold: %w", chain, asset, err)
				}
				tok.SweepThreshold = a
			}
			cfg.Tokens = append(cfg.Tokens, tok)
		}
		var err error
		if cfg.MinTip, err = wei(ch.MinTipWei); err != nil {
			return nil, fmt.Errorf("custody config: %s min_tip_wei: %w", chain, err)
		}
		if cfg.MaxFeeCap, err = wei(ch.MaxFeeCapWei); err != nil {
			return nil, fmt.Errorf("custody config: %s max_fee_cap_wei: %w", chain, err)
		}
		for _, d := range []struct {
			s string
			p *time.Duration
			n string
		}{{ch.ReplaceAfter, &cfg.ReplaceAfter, "replace_after"}, {ch.PollEvery, &cfg.PollEvery, "poll_every"},
			{ch.SweepEvery, &cfg.SweepEvery, "sweep_every"}, {ch.LagAlert, &cfg.LagAlert, "lag_alert"}} {
			if d.s == "" {
				continue
			}
			if *d.p, err = time.ParseDuration(d.s); err != nil {
				return nil, fmt.Errorf("custody config: %s %s: %w", chain, d.n, err)
			}
		}
		out = append(out, cfg)
	}
	return out, nil
}

func wei(s string) (*big.Int, error) {
	if s == "" {
		return nil, nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("%q is not a whole number of wei", s)
	}
	return v, nil
}
