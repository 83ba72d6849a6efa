package evm

import (
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm/signer"
)

// Token is one ERC-20 contract that stands for an asset on the chain.
type Token struct {
	Asset    money.Asset    // USDT or USDC
	Contract common.Address // the token contract
	Decimals uint8          // the contract's decimals() (6 for USDT and USDC on most chains)
	// SweepThreshold: a deposit address holding at least this much is swept to the hot
	// wallet (zero: never swept automatically).
	SweepThreshold money.Amount
}

// Config is one chain's custody.
type Config struct {
	Chain   providers.Chain
	RPCURL  string // the node's JSON-RPC over HTTP(S)
	ChainID int64  // checked against the node's eth_chainId
	Tokens  []Token
	// Confirmations a transfer (or a send) needs before it counts: 1 means "in a block".
	Confirmations uint64
	// Fee policy (EIP-1559). The tip is the node's suggestion, at least MinTip; the fee cap
	// is 2 x base fee + tip, at most MaxFeeCap (zero: no cap). A send not mined after
	// ReplaceAfter whose fee cap is below the market's is replaced at the same nonce with
	// fees raised by at least 12.5% (nodes require 10%).
	MinTip       *big.Int
	MaxFeeCap    *big.Int
	ReplaceAfter time.Duration
	// GasLimit is the gas of a token transfer the node's estimate says would revert (it is
	// sent all the same, so the chain records the refusal; default 200,000). Other sends use
	// the node's estimate plus a quarter.
	GasLimit uint64
	// StartBlock is where a watcher with no stored cursor begins (0: the chain's head).
	StartBlock uint64
	// BlocksPerPoll bounds one log query (default 500 blocks).
	BlocksPerPoll uint64
	PollEvery     time.Duration // default 2 s
	SweepEvery    time.Duration // default 1 min
	// RPCTimeout bounds each call to the node (default 10 s).
	RPCTimeout time.Duration
	// LagAlert: a node whose head is this old is reported lagging (default 2 min).
	LagAlert time.Duration
	Signer   signer.Signer
	Notifier Notifier // where confirmed deposits go (nil: recorded, not notified)
	Metrics  *Metrics // shared by every chain's custody (nil: a private one)
	Logger   *slog.Logger
	Now      func() time.Time
}

func (c *Config) defaults() error {
	var errs []error
	if c.Chain.Family() != providers.EVM {
		errs = append(errs, fmt.Errorf("chain %q is not an EVM chain", c.Chain))
	}
	if c.RPCURL == "" {
		errs = append(errs, fmt.Errorf("%s: an RPC URL is required", c.Chain))
	}
	if c.ChainID <= 0 {
		errs = append(errs, fmt.Errorf("%s: a chain id is required", c.Chain))
	}
	if len(c.Tokens) == 0 {
		errs = append(errs, fmt.Errorf("%s: at least one token contract is required", c.Chain))
	}
	seen := map[money.Asset]bool{}
	for _, t := range c.Tokens {
		if t.Asset != money.USDT && t.Asset != money.USDC {
			errs = append(errs, fmt.Errorf("%s: token asset %q (USDT or USDC)", c.Chain, t.Asset))
		}
		if seen[t.Asset] {
			errs = append(errs, fmt.Errorf("%s: two contracts for %s", c.Chain, t.Asset))
		}
		seen[t.Asset] = true
		if t.Contract == (common.Address{}) {
			errs = append(errs, fmt.Errorf("%s: %s contract address is required", c.Chain, t.Asset))
		}
		if t.Decimals > 36 {
			errs = append(errs, fmt.Errorf("%s: %s decimals %d", c.Chain, t.Asset, t.Decimals))
		}
	}
	if c.Confirmations == 0 {
		errs = append(errs, fmt.Errorf("%s: confirmations must be at least 1", c.Chain))
	}
	if c.Signer == nil {
		errs = append(errs, errors.New("a signer is required"))
	}
	if c.MinTip == nil {
		c.MinTip = big.NewInt(1_000_000) // 0.001 gwei
	}
	if c.ReplaceAfter <= 0 {
		c.ReplaceAfter = 3 * time.Minute
	}
	if c.GasLimit == 0 {
		c.GasLimit = 200_000
	}
	if c.BlocksPerPoll == 0 {
		c.BlocksPerPoll = 500
	}
	if c.PollEvery <= 0 {
		c.PollEvery = 2 * time.Second
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = time.Minute
	}
	if c.RPCTimeout <= 0 {
		c.RPCTimeout = 10 * time.Second
	}
	if c.LagAlert <= 0 {
		c.LagAlert = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics()
	}
	return errors.Join(errs...)
}

// assetPlaces is the minor units' places of the assets we custody (micro-units).
const assetPlaces = 6

// toValue converts an amount in minor units to the token's base units, exactly.
func (t Token) toValue(a money.Amount) *big.Int {
	return scale(big.NewInt(a.Minor), int(t.Decimals)-assetPlaces)
}

// scale multiplies v by 10^d (d > 0) or divides it by 10^-d, truncating (d < 0), in place.
func scale(v *big.Int, d int) *big.Int {
	switch {
	case d > 0:
		v.Mul(v, pow10(d))
	case d < 0:
		v.Quo(v, pow10(-d))
	}
	return v
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// representable reports whether a has no more precision than the token carries (a token
// with fewer decimals than micro-units cannot carry the last digits).
func (t Token) representable(a money.Amount) bool {
	d := assetPlaces - int(t.Decimals)
	if d <= 0 {
		return true
	}
	m := pow10(d)
	return new(big.Int).Mod(big.NewInt(a.Minor), m).Sign() == 0
}

// toAmount converts base units to minor units, rounding down (dust below a micro-unit is
// not credited; the exact value is kept with the transfer). ok false: it does not fit.
func (t Token) toAmount(v *big.Int) (money.Amount, bool) {
	x := scale(new(big.Int).Set(v), assetPlaces-int(t.Decimals))
	if !x.IsInt64() {
		return money.Amount{}, false
	}
	return money.New(t.Asset, x.Int64()), true
}
