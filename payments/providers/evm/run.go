package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"

	"svc/payments/providers"
	"svc/payments/providers/evm/signer"
)

// Run follows the chain until ctx ends: the watcher (Poll, at once again while behind),
// the sender (every open send advanced: broadcast again, replaced, concluded) and the
// sweeper (every SweepEvery). A node that is down is retried every PollEvery; svcd keeps
// serving meanwhile and Health says so. Run returns nil when ctx ends.
func (c *Custody) Run(ctx context.Context) error {
	var lastSweep time.Time
	var lastErr string
	for ctx.Err() == nil {
		caught, err := c.Poll(ctx)
		if err != nil && ctx.Err() == nil {
			if err.Error() != lastErr {
				c.log.Warn("watcher round failed: will retry", "error", err)
			}
			lastErr = err.Error()
		} else if err == nil {
			lastErr = ""
		}
		if err == nil {
			if err := c.followOpen(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("sender round failed", "error", err)
			}
			if c.cfg.Now().Sub(lastSweep) >= c.cfg.SweepEvery {
				if err := c.Sweep(ctx); err != nil && ctx.Err() == nil {
					c.log.Warn("sweep round failed", "error", err)
				}
				lastSweep = c.cfg.Now()
			}
		}
		wait := c.cfg.PollEvery
		if err == nil && !caught {
			wait = 0
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return nil
}

// Sweep moves the token balance of every deposit address with credited deposits, at or
// above its token's SweepThreshold, to the hot wallet. An address without gas for the
// transfer is first topped up from the hot wallet (a native-coin send of gas limit x fee
// cap); the sweep follows in a later round, once the top-up is mined.
func (c *Custody) Sweep(ctx context.Context) error {
	hot, err := c.HotWallet(ctx)
	if err != nil {
		return err
	}
	for _, t := range c.cfg.Tokens {
		if !t.SweepThreshold.IsPositive() {
			continue
		}
		rows, err := c.pool.Query(ctx, `select distinct t.to_address, t.reference from evm_transfers t
			where t.chain = $1 and t.token = $2 and t.status = 'CREDITED'
				and not exists (select 1 from evm_sends s where s.chain = t.chain and s.kind = 'SWEEP' and s.from_address = t.to_address
					and s.token = t.token and (s.status in ('WAITING', 'SIGNED') or s.created_at >= t.credited_at))`,
			c.chain, lower(t.Contract))
		if err != nil {
			return err
		}
		type cand struct{ addr, ref string }
		cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cand, error) {
			var x cand
			return x, r.Scan(&x.addr, &x.ref)
		})
		if err != nil {
			return err
		}
		for _, x := range cs {
			if err := c.sweepOne(ctx, t, hot, common.HexToAddress(x.addr), x.ref); err != nil {
				var u *providers.UnavailableError
				if errors.As(err, &u) {
					continue
				}
				return err
			}
		}
	}
	return nil
}

func (c *Custody) sweepOne(ctx context.Context, t Token, hot, addr common.Address, ref string) error {
	cctx, cancel := c.call(ctx)
	defer cancel()
	bal, err := c.tokenBalance(cctx, t, addr)
	if err != nil {
		return err
	}
	amt, _ := t.toAmount(bal)
	if amt.Cmp(t.SweepThreshold) < 0 {
		return nil
	}
	var open int
	if err := c.pool.QueryRow(ctx, `select count(*) from evm_sends where chain = $1 and kind = 'TOPUP' and to_address = $2
		and status in ('WAITING', 'SIGNED')`, c.chain, lower(addr)).Scan(&open); err != nil {
		return err
	}
	if open > 0 {
		return nil // its gas is on the way
	}
	f, err := c.market(ctx)
	if err != nil {
		return err
	}
	gas := new(big.Int).Mul(new(big.Int).SetUint64(c.cfg.GasLimit), f.feeCap) // at least the sweep's estimate
	native, err := c.client.BalanceAt(cctx, addr, nil)
	if err != nil {
		return c.unavailable("balance", err)
	}
	var n int
	if native.Cmp(gas) < 0 {
		if err := c.pool.QueryRow(ctx, `select count(*) from evm_sends where chain = $1 and kind = 'TOPUP' and to_address = $2`,
			c.chain, lower(addr)).Scan(&n); err != nil {
			return err
		}
		need := new(big.Int).Mul(gas, big.NewInt(2)) // room for a fee rise before the sweep
		r := sendRow{Reference: fmt.Sprintf("topup:%s:%d", lower(addr), n), Kind: kindTopUp, Asset: "NATIVE", Token: "",
			From: lower(hot), Key: string(signer.KeyHot), To: lower(addr), Value: need.Sub(need, native)}
		if err := c.record(ctx, r); err != nil {
			return err
		}
		_, err := c.advance(ctx, r.Reference)
		c.log.Info("deposit address topped up with gas for its sweep", "address", addr.Hex(), "reference", ref)
		return err
	}
	if err := c.pool.QueryRow(ctx, `select count(*) from evm_sends where chain = $1 and kind = 'SWEEP' and from_address = $2 and token = $3`,
		c.chain, lower(addr), lower(t.Contract)).Scan(&n); err != nil {
		return err
	}
	r := sendRow{Reference: fmt.Sprintf("sweep:%s:%s:%d", lower(addr), t.Asset, n), Kind: kindSweep, Asset: string(t.Asset),
		Token: lower(t.Contract), From: lower(addr), Key: string(signer.Deposit(ref)), To: lower(hot), Value: bal}
	if err := c.record(ctx, r); err != nil {
		return err
	}
	_, err = c.advance(ctx, r.Reference)
	c.log.Info("deposit address swept to the hot wallet", "address", addr.Hex(), "reference", ref, "amount", amt.String(), "asset", t.Asset)
	return err
}
