package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"svc/payments"
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

// chains reads and checks --custody-config (evm.LoadConfigFile).
func (c custodyConfig) chains() ([]evm.Config, error) {
	if c.File == "" {
		return nil, nil
	}
	return evm.LoadConfigFile(c.File, c.getenv)
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
	loops   []namedLoop // one per chain, running since start
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
		p.loops = append(p.loops, goLoop("custody "+string(c.Chain()), func() { _ = c.Run(ctx) }))
	}
}

// stop ends the chains' loops and waits for them until ctx ends (svcd's shutdown
// deadline, as the treasury's stop). A loop still running then (blocked where no context
// reaches: crediting a deposit goes through the engine, whose Submit takes none) is
// abandoned to the process's exit and logged; a deposit it was crediting is notified
// again by the next start (the notification's id makes that a no-op). Only the chains
// whose loop ended are closed: an abandoned loop may still use its node client.
func (p *custodyParts) stop(ctx context.Context, log *slog.Logger) {
	if p == nil {
		return
	}
	if p.cancel != nil {
		p.cancel()
	}
	abandoned := waitLoops(ctx, p.loops)
	for i, c := range p.chains {
		if i < len(p.loops) && !p.loops[i].ended() {
			continue
		}
		c.Close()
	}
	if len(abandoned) > 0 {
		log.Warn("custody: shutdown deadline passed; abandoned the chain loops still running (a deposit being credited is notified again by the next start)",
			"abandoned", abandoned, "error", context.Cause(ctx))
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
