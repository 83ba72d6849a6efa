package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/providers/evm"
	"svc/payments/providers/evm/signer"
)

// custodyConfig is the live EVM custody's settings (issue 31, docs/live.md "Custody"): a
// JSON file naming each chain's node, chain id, token contracts, confirmations and fee
// policy, and the keystore holding the master secret every key is derived from. The
// keystore's passphrase is read from the environment only (SVC_CUSTODY_PASSPHRASE): there is
// no flag, so it never sits in a process listing or in -h.
type custodyConfig struct {
	File       string // --custody-config
	Keystore   string // --custody-keystore
	Passphrase string // SVC_CUSTODY_PASSPHRASE only
	getenv     func(string) string
}

func (c *custodyConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	c.getenv = env.getenv
	c.Passphrase = env.getenv("SVC_CUSTODY_PASSPHRASE")
	fs.StringVar(&c.File, "custody-config", env.str("custody-config", ""), "JSON file of the live EVM custody's chains (node URL, chain id, token contracts, confirmations, fees; docs/live.md); unset: live crypto answers 503 PROVIDER_UNAVAILABLE")
	fs.StringVar(&c.Keystore, "custody-keystore", env.str("custody-keystore", ""), "the custody keystore file (create it with `svc custody keystore create`); its passphrase comes from SVC_CUSTODY_PASSPHRASE")
}

// chainFile is one chain of --custody-config.
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

// chains reads and checks --custody-config into one evm.Config per chain (without signer,
// notifier, metrics or logger).
func (c custodyConfig) chains() ([]evm.Config, error) {
	if c.File == "" {
		return nil, nil
	}
	body, err := os.ReadFile(c.File)
	if err != nil {
		return nil, fmt.Errorf("-custody-config: %w", err)
	}
	var f custodyFile
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("-custody-config %s: %w", c.File, err)
	}
	if len(f.Chains) == 0 {
		return nil, fmt.Errorf("-custody-config %s: no chains", c.File)
	}
	var out []evm.Config
	seen := map[providers.Chain]bool{}
	for _, ch := range f.Chains {
		chain := providers.Chain(strings.ToUpper(ch.Chain))
		if seen[chain] {
			return nil, fmt.Errorf("-custody-config: %s twice", chain)
		}
		seen[chain] = true
		cfg := evm.Config{Chain: chain, RPCURL: ch.RPCURL, ChainID: ch.ChainID, Confirmations: ch.Confirmations, StartBlock: ch.StartBlock}
		if ch.RPCURLEnv != "" {
			cfg.RPCURL = c.getenv(ch.RPCURLEnv)
			if cfg.RPCURL == "" {
				return nil, fmt.Errorf("-custody-config: %s rpc_url_env %s is empty", chain, ch.RPCURLEnv)
			}
		}
		for _, t := range ch.Tokens {
			asset := money.Asset(strings.ToUpper(t.Asset))
			if !common.IsHexAddress(t.Contract) {
				return nil, fmt.Errorf("-custody-config: %s %s contract %q is not an address", chain, asset, t.Contract)
			}
			tok := evm.Token{Asset: asset, Contract: common.HexToAddress(t.Contract), Decimals: t.Decimals}
			if t.SweepThreshold != "" {
				a, err := money.Parse(asset, t.SweepThreshold)
				if err != nil {
					return nil, fmt.Errorf("-custody-config: %s %s sweep_threshold: %w", chain, asset, err)
				}
				tok.SweepThreshold = a
			}
			cfg.Tokens = append(cfg.Tokens, tok)
		}
		var err error
		if cfg.MinTip, err = wei(ch.MinTipWei); err != nil {
			return nil, fmt.Errorf("-custody-config: %s min_tip_wei: %w", chain, err)
		}
		if cfg.MaxFeeCap, err = wei(ch.MaxFeeCapWei); err != nil {
			return nil, fmt.Errorf("-custody-config: %s max_fee_cap_wei: %w", chain, err)
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
				return nil, fmt.Errorf("-custody-config: %s %s: %w", chain, d.n, err)
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

func (c custodyConfig) validate() error {
	chains, err := c.chains()
	if err != nil {
		return err
	}
	if len(chains) == 0 {
		return nil
	}
	var errs []error
	if c.Keystore == "" {
		errs = append(errs, errors.New("-custody-config needs -custody-keystore"))
	}
	if c.Passphrase == "" {
		errs = append(errs, errors.New("-custody-config needs SVC_CUSTODY_PASSPHRASE (the keystore's passphrase) in the environment"))
	}
	return errors.Join(errs...)
}

// custodyParts is the live custody: one evm.Custody per chain and their loops.
type custodyParts struct {
	chains  []*evm.Custody
	secret  string // signs the watchers' notifications (derived from the keystore)
	metrics *evm.Metrics
	inbound *partners.Service // set once built (the notifier posts through it)
	mu      sync.Mutex
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	log     *slog.Logger
}

// newCustody builds the live custodians from --custody-config, or nil when none is set.
func newCustody(cfg config, pool *pgxpool.Pool, log *slog.Logger) (*custodyParts, error) {
	chains, err := cfg.Custody.chains()
	if err != nil || len(chains) == 0 {
		return nil, err
	}
	ks, err := signer.Open(cfg.Custody.Keystore, cfg.Custody.Passphrase)
	if err != nil {
		return nil, fmt.Errorf("custody keystore: %w", err)
	}
	secret, err := ks.Secret("custody notifications")
	if err != nil {
		return nil, err
	}
	p := &custodyParts{secret: hex.EncodeToString(secret), metrics: evm.NewMetrics(), log: log.With("component", "custody")}
	for _, c := range chains {
		c.Signer, c.Metrics, c.Logger, c.Notifier = ks, p.metrics, log, evm.NotifierFunc(p.notify)
		cu, err := evm.New(pool, c)
		if err != nil {
			return nil, err
		}
		hot, err := cu.HotWallet(context.Background())
		if err != nil {
			return nil, err
		}
		log.Info("live custody chain", "chain", c.Chain, "chain_id", c.ChainID, "confirmations", c.Confirmations, "hot_wallet", hot.Hex())
		p.chains = append(p.chains, cu)
	}
	return p, nil
}

// custody is the providers.Custody of live: a custodian per configured chain.
func (p *custodyParts) custody() providers.Custody {
	m := providers.ChainCustody{}
	for _, c := range p.chains {
		m[c.Chain()] = c
	}
	return m
}

// partner is the inbound path's partner for the watchers' notifications.
func (p *custodyParts) partner() partners.Partner {
	return partners.CustodyPartner(partners.EVMCustody, payments.Live, p.secret)
}

func (p *custodyParts) notify(ctx context.Context, d evm.Deposit) (uuid.UUID, error) {
	p.mu.Lock()
	in := p.inbound
	p.mu.Unlock()
	if in == nil {
		return uuid.Nil, errors.New("the inbound path is not built yet")
	}
	return in.NotifyCustody(ctx, partners.EVMCustody, p.secret, partners.CustodyNotice{EventID: d.EventID, Reference: d.Reference,
		Chain: d.Chain, Address: d.Address, Asset: string(d.Amount.Asset), Amount: d.Amount.Minor, TxHash: d.TxHash, ConfirmedAt: d.ConfirmedAt})
}

func (p *custodyParts) setInbound(in *partners.Service) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.inbound = in
	p.mu.Unlock()
}

// start runs every chain's watcher, sender and sweeper until stop.
func (p *custodyParts) start(ctx context.Context) {
	if p == nil {
		return
	}
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, c := range p.chains {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_ = c.Run(ctx)
		}()
	}
}

func (p *custodyParts) stop() {
	if p == nil {
		return
	}
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	for _, c := range p.chains {
		c.Close()
	}
}

// ready reports a chain whose node is down or lagging (shown in /ready's checks; the rest
// of svcd keeps serving: the check is a degraded one).
func (p *custodyParts) ready(context.Context) error {
	var bad []string
	for _, c := range p.chains {
		h := c.Health()
		switch {
		case !h.Up:
			bad = append(bad, fmt.Sprintf("%s node down (%s)", h.Chain, h.Error))
		case h.Lagging:
			bad = append(bad, fmt.Sprintf("%s node lagging (head %d is %s old)", h.Chain, h.Head, h.HeadAge))
		case h.Cursor+10 < h.Head:
			bad = append(bad, fmt.Sprintf("%s watcher behind (block %d of %d)", h.Chain, h.Cursor, h.Head))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

func (p *custodyParts) collector() prometheus.Collector { return p.metrics }
