package evm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm/signer"
)

// Deposit is a token transfer to one of our deposit addresses that has its confirmations.
type Deposit struct {
	EventID     string // evm:<chain>:<tx hash>:<log index>: the same transfer always has the same id
	Reference   string // the address's reference
	Chain       providers.Chain
	Address     string // EIP-55
	Amount      money.Amount
	TxHash      string
	LogIndex    uint
	BlockNumber uint64
	ConfirmedAt time.Time // the block's time
}

// Notifier hands a confirmed deposit to the inbound path (payments/partners) once; calling it
// again with the same EventID must change nothing. svcd's is a signed custody notification
// into partners.Service.Receive.
// It answers the id of the stored notification.
type Notifier interface {
	Notify(ctx context.Context, d Deposit) (uuid.UUID, error)
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, d Deposit) (uuid.UUID, error)

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, d Deposit) (uuid.UUID, error) { return f(ctx, d) }

// Custody is one EVM chain's custodian. Safe for concurrent use.
type Custody struct {
	cfg    Config
	pool   *pgxpool.Pool
	rpc    *rpc.Client
	client *ethclient.Client
	tokens map[money.Asset]Token
	byAddr map[common.Address]Token
	erc20  abi.ABI
	log    *slog.Logger
	chain  string

	mu     sync.Mutex
	health Health
	watch  watched
}

var _ providers.Custody = (*Custody)(nil)

// New returns the custody of cfg.Chain over pool (where its evm_* tables are). It does not
// reach the node: svcd starts while a node is down, and Health says so.
func New(pool *pgxpool.Pool, cfg Config) (*Custody, error) {
	if err := cfg.defaults(); err != nil {
		return nil, fmt.Errorf("evm custody: %w", err)
	}
	rc, err := rpc.DialOptions(context.Background(), cfg.RPCURL)
	if err != nil {
		return nil, fmt.Errorf("evm custody: %s RPC URL: %w", cfg.Chain, err)
	}
	parsed, err := abi.JSON(strings.NewReader(erc20ABI))
	if err != nil {
		return nil, err
	}
	c := &Custody{cfg: cfg, pool: pool, rpc: rc, client: ethclient.NewClient(rc), tokens: map[money.Asset]Token{},
		byAddr: map[common.Address]Token{}, erc20: parsed, chain: string(cfg.Chain),
		log: cfg.Logger.With("component", "custody", "chain", string(cfg.Chain))}
	for _, t := range cfg.Tokens {
		c.tokens[t.Asset] = t
		c.byAddr[t.Contract] = t
	}
	c.health = Health{Chain: cfg.Chain, Error: "not polled yet"}
	return c, nil
}

// Chain is the custody's chain.
func (c *Custody) Chain() providers.Chain { return c.cfg.Chain }

// Close closes the connection to the node.
func (c *Custody) Close() { c.rpc.Close() }

// Token is the contract of asset on this chain.
func (c *Custody) Token(asset money.Asset) (Token, bool) {
	t, ok := c.tokens[asset]
	return t, ok
}

// HotWallet is the hot wallet's address.
func (c *Custody) HotWallet(ctx context.Context) (common.Address, error) {
	return c.cfg.Signer.Address(ctx, signer.KeyHot)
}

func (c *Custody) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.RPCTimeout)
}

// unavailable is the node's failure as the providers' 503.
func (c *Custody) unavailable(what string, err error) error {
	return &providers.UnavailableError{Provider: "custody", Operation: what,
		Reason: fmt.Sprintf("the %s node did not answer: %v", c.cfg.Chain, err)}
}

// DepositAddress derives the address of req.Reference (the same on every node and after a
// restart: the key is derived from the reference) and records it so the watchers watch it.
// The address is the same on every EVM chain, so a payer who picks the wrong EVM chain
// sends to a key we hold.
func (c *Custody) DepositAddress(ctx context.Context, req providers.AddressRequest) (providers.Address, error) {
	if req.Chain != c.cfg.Chain {
		return providers.Address{}, fmt.Errorf("evm custody: %s custody asked for a %s address", c.cfg.Chain, req.Chain)
	}
	if _, ok := c.tokens[req.Asset]; !ok {
		return providers.Address{}, &providers.UnavailableError{Provider: "custody", Operation: "deposit address",
			Reason: fmt.Sprintf("no %s token contract is configured on %s", req.Asset, req.Chain)}
	}
	if req.Reference == "" {
		return providers.Address{}, errors.New("evm custody: a reference is required")
	}
	addr, err := c.cfg.Signer.Address(ctx, signer.Deposit(req.Reference))
	if err != nil {
		return providers.Address{}, err
	}
	if err := saveAddress(ctx, c.pool, addr, req.Reference, c.cfg.Now()); err != nil {
		return providers.Address{}, err
	}
	return providers.Address{Chain: req.Chain, Asset: req.Asset, Address: addr.Hex()}, nil
}

// Health is what /ready shows of a chain.
type Health struct {
	Chain    providers.Chain `json:"chain"`
	Up       bool            `json:"up"`       // the last poll reached the node
	Lagging  bool            `json:"lagging"`  // the node's head is older than the lag alert
	Head     uint64          `json:"head"`     // the node's head block
	Cursor   uint64          `json:"cursor"`   // the watcher's last processed block
	HeadAge  string          `json:"head_age"` // age of the head block
	Error    string          `json:"error,omitempty"`
	PolledAt time.Time       `json:"polled_at"`
}

// Health is the chain's state as of the watcher's last poll.
func (c *Custody) Health() Health {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.health
}

func (c *Custody) setHealth(f func(h *Health)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.health)
	up := 0.0
	if c.health.Up {
		up = 1
	}
	c.cfg.Metrics.NodeUp.WithLabelValues(c.chain).Set(up)
}

// Balances are an address's holdings on the chain.
type Balances struct {
	Address common.Address
	Native  *big.Int                     // wei
	Tokens  map[money.Asset]money.Amount // minor units (rounded down)
}

// BalancesOf asks the node for addr's native and token balances.
func (c *Custody) BalancesOf(ctx context.Context, addr common.Address) (Balances, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	b := Balances{Address: addr, Tokens: map[money.Asset]money.Amount{}}
	n, err := c.client.BalanceAt(ctx, addr, nil)
	if err != nil {
		return Balances{}, c.unavailable("balance", err)
	}
	b.Native = n
	for _, t := range c.cfg.Tokens {
		v, err := c.tokenBalance(ctx, t, addr)
		if err != nil {
			return Balances{}, err
		}
		a, _ := t.toAmount(v)
		b.Tokens[t.Asset] = a
	}
	return b, nil
}

func assetOf(s string) money.Asset { return money.Asset(s) }

func moneyOf(t Token, minor int64) money.Amount { return money.New(t.Asset, minor) }

// Capabilities are the custody's chain and the assets it has token contracts for.
func (c *Custody) Capabilities() providers.Capabilities {
	caps := providers.Capabilities{Chains: []providers.Chain{c.cfg.Chain}}
	for _, t := range c.cfg.Tokens {
		caps.Assets = append(caps.Assets, t.Asset)
	}
	return caps
}
