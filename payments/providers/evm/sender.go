package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/jackc/pgx/v5"

	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/providers/evm/signer"
	"svc/persistence/postgres"
)

// Send transfers req.Amount of req.Asset from the hot wallet to req.To, once per Reference.
//
// The first call records the send; while the hot wallet cannot cover it the send WAITS (a
// *providers.UnavailableError saying so: the caller retries, nothing is lost or failed, and
// the hot_wallet_underfunded metric and a log line alert the operator). Then, in one
// transaction, the hot wallet's next nonce is taken under a row lock, the EIP-1559 transaction
// is signed and stored with the reference, and only after the commit is it broadcast: a crash
// at any moment leaves either nothing signed (the next call signs) or the stored transaction,
// which is broadcast again, never a second one. Later calls answer the send's state:
// SUBMITTED with the hash of the version broadcast, CONFIRMED once mined with the chain's
// confirmations, FAILED when it reverted (a business outcome: the caller returns the funds).
// A version not mined after ReplaceAfter while the market's fee is above its fee cap is
// replaced at the same nonce (the Run loop does this too, and rebroadcasts).
func (c *Custody) Send(ctx context.Context, req providers.SendRequest) (providers.SendResult, error) {
	if req.Chain != c.cfg.Chain {
		return providers.SendResult{}, fmt.Errorf("evm custody: %s custody asked to send on %s", c.cfg.Chain, req.Chain)
	}
	t, ok := c.tokens[req.Asset]
	if !ok || req.Amount.Asset != req.Asset {
		return providers.SendResult{}, &providers.UnavailableError{Provider: "custody", Operation: "send",
			Reason: fmt.Sprintf("no %s token contract is configured on %s", req.Asset, req.Chain)}
	}
	if !common.IsHexAddress(req.To) || !req.Amount.IsPositive() || req.Reference == "" {
		return providers.SendResult{Status: providers.SendFailed,
			FailureReason: "invalid send: a reference, a positive amount and a 0x address are required"}, nil
	}
	if !t.representable(req.Amount) {
		return providers.SendResult{Status: providers.SendFailed,
			FailureReason: fmt.Sprintf("%s on %s has %d decimals: the amount cannot be sent exactly", req.Asset, req.Chain, t.Decimals)}, nil
	}
	hot, err := c.HotWallet(ctx)
	if err != nil {
		return providers.SendResult{}, err
	}
	to := common.HexToAddress(req.To)
	if err := c.record(ctx, sendRow{Reference: req.Reference, Kind: kindSend, Asset: string(req.Asset), Token: lower(t.Contract),
		From: lower(hot), Key: string(signer.KeyHot), To: lower(to), Value: t.toValue(req.Amount)}); err != nil {
		return providers.SendResult{}, err
	}
	return c.advance(ctx, req.Reference)
}

// record inserts a send unless its reference is recorded; the same reference with another
// destination or value is a caller's bug and refused.
func (c *Custody) record(ctx context.Context, r sendRow) error {
	now := c.cfg.Now().UTC()
	_, err := c.pool.Exec(ctx, `insert into evm_sends (chain, reference, kind, asset, token, from_address, signer_key, to_address,
			value, status, created_at, updated_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, 'WAITING', $10, $10) on conflict do nothing`,
		c.chain, r.Reference, r.Kind, r.Asset, r.Token, r.From, r.Key, r.To, r.Value.String(), now)
	if err != nil {
		return fmt.Errorf("evm custody: record send: %w", err)
	}
	got, _, err := loadSend(ctx, c.pool, c.chain, r.Reference, false)
	if err != nil {
		return err
	}
	if got.To != r.To || got.Value.Cmp(r.Value) != 0 || got.Token != r.Token || got.From != r.From {
		return fmt.Errorf("evm custody: send %s was recorded to %s for %s, asked again to %s for %s", r.Reference, got.To, got.Value, r.To, r.Value)
	}
	return nil
}

// errUnderfunded: the sending address cannot cover the send yet.
type errUnderfunded struct{ what string }

func (e errUnderfunded) Error() string { return e.what }

// advance takes the next step of one send and answers its state.
func (c *Custody) advance(ctx context.Context, reference string) (providers.SendResult, error) {
	r, ok, err := loadSend(ctx, c.pool, c.chain, reference, false)
	if err != nil {
		return providers.SendResult{}, err
	}
	if !ok {
		return providers.SendResult{}, fmt.Errorf("evm custody: no send %s", reference)
	}
	switch r.Status {
	case sendConfirmed:
		return providers.SendResult{Status: providers.SendConfirmed, TxHash: r.MinedTxHash}, nil
	case sendFailed:
		return providers.SendResult{Status: providers.SendFailed, TxHash: r.MinedTxHash, FailureReason: r.FailureReason}, nil
	case sendWaiting:
		hash, err := c.sign(ctx, r)
		var under errUnderfunded
		if errors.As(err, &under) {
			return providers.SendResult{}, &providers.UnavailableError{Provider: "custody", Operation: "send", Reason: under.what}
		}
		if err != nil {
			return providers.SendResult{}, err
		}
		return providers.SendResult{Status: providers.SendSubmitted, TxHash: hash}, nil
	}
	return c.follow(ctx, r)
}

type fees struct{ tip, feeCap *big.Int }

// market is the fee the chain asks now: the node's suggested tip (at least MinTip) and a cap
// of 2 x base fee + tip, at most MaxFeeCap.
func (c *Custody) market(ctx context.Context) (fees, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	h, err := c.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return fees{}, c.unavailable("fees", err)
	}
	tip, err := c.client.SuggestGasTipCap(ctx)
	if err != nil {
		return fees{}, c.unavailable("fees", err)
	}
	if tip.Cmp(c.cfg.MinTip) < 0 {
		tip = new(big.Int).Set(c.cfg.MinTip)
	}
	base := h.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	fc := new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	return c.capped(fees{tip: tip, feeCap: fc}), nil
}

func (c *Custody) capped(f fees) fees {
	if c.cfg.MaxFeeCap != nil && c.cfg.MaxFeeCap.Sign() > 0 && f.feeCap.Cmp(c.cfg.MaxFeeCap) > 0 {
		f.feeCap = new(big.Int).Set(c.cfg.MaxFeeCap)
	}
	if f.tip.Cmp(f.feeCap) > 0 {
		f.tip = new(big.Int).Set(f.feeCap)
	}
	return f
}

// payload is the transaction's destination, value and data for a send row.
func (c *Custody) payload(r sendRow) (common.Address, *big.Int, []byte, error) {
	to := common.HexToAddress(r.To)
	if r.Kind == kindTopUp {
		return to, r.Value, nil, nil
	}
	data, err := c.erc20.Pack("transfer", to, r.Value)
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	return common.HexToAddress(r.Token), new(big.Int), data, nil
}

// sign takes the sender's next nonce, signs the send and stores it, then broadcasts it.
func (c *Custody) sign(ctx context.Context, r sendRow) (string, error) {
	f, err := c.market(ctx)
	if err != nil {
		return "", err
	}
	gas, err := c.estimate(ctx, r)
	if err != nil {
		return "", err
	}
	from := common.HexToAddress(r.From)
	chainID := big.NewInt(c.cfg.ChainID)
	var hash string
	var raw []byte
	err = postgres.InTx(ctx, c.pool, func(tx pgx.Tx) error {
		cur, _, err := loadSend(ctx, tx, c.chain, r.Reference, true)
		if err != nil {
			return err
		}
		if cur.Status != sendWaiting { // another caller signed it meanwhile
			hash = cur.TxHash
			return nil
		}
		nonce, err := c.nextNonce(ctx, tx, from)
		if err != nil {
			return err
		}
		if err := c.covered(ctx, tx, r, f, gas); err != nil {
			return err
		}
		to, value, data, err := c.payload(r)
		if err != nil {
			return err
		}
		utx := types.NewTx(&types.DynamicFeeTx{ChainID: chainID, Nonce: uint64(nonce), GasTipCap: f.tip, GasFeeCap: f.feeCap,
			Gas: gas, To: &to, Value: value, Data: data})
		stx, err := c.cfg.Signer.SignTx(ctx, signer.Key(r.Key), utx, chainID)
		if err != nil {
			return fmt.Errorf("evm custody: sign %s: %w", r.Reference, err)
		}
		raw, err = stx.MarshalBinary()
		if err != nil {
			return err
		}
		hash = stx.Hash().Hex()
		now := c.cfg.Now().UTC()
		if _, err := tx.Exec(ctx, `insert into evm_send_txs (chain, tx_hash, reference, raw, fee_cap, tip_cap, created_at)
			values ($1, $2, $3, $4, $5::numeric, $6::numeric, $7)`, c.chain, hash, r.Reference, raw, f.feeCap.String(), f.tip.String(), now); err != nil {
			return fmt.Errorf("evm custody: store signed transaction: %w", err)
		}
		if _, err := tx.Exec(ctx, `update evm_sends set status = 'SIGNED', nonce = $3, tx_hash = $4, signed_at = $5, updated_at = $5,
			last_error = null where chain = $1 and reference = $2`, c.chain, r.Reference, nonce, hash, now); err != nil {
			return fmt.Errorf("evm custody: record signed send: %w", err)
		}
		_, err = tx.Exec(ctx, `update evm_nonces set next_nonce = next_nonce + 1 where chain = $1 and address = $2`, c.chain, lower(from))
		return err
	})
	var under errUnderfunded
	if errors.As(err, &under) {
		c.cfg.Metrics.Underfunded.WithLabelValues(c.chain, r.Asset).Set(1)
		c.log.Warn("send waits: the sending address cannot cover it; fund it", "reference", r.Reference, "from", r.From, "why", under.what)
		_, _ = c.pool.Exec(ctx, `update evm_sends set last_error = $3, updated_at = $4 where chain = $1 and reference = $2`,
			c.chain, r.Reference, under.what, c.cfg.Now().UTC())
		return "", err
	}
	if err != nil {
		return "", err
	}
	c.cfg.Metrics.Underfunded.WithLabelValues(c.chain, r.Asset).Set(0)
	if raw != nil {
		c.cfg.Metrics.Sends.WithLabelValues(c.chain, "signed").Inc()
		c.log.Info("send signed and stored", "reference", r.Reference, "kind", r.Kind, "tx_hash", hash, "to", r.To, "value", r.Value.String())
		c.broadcast(ctx, r.Reference, raw)
	}
	return hash, nil
}

// estimate is the gas of a send: the node's estimate plus a quarter (a native transfer: 21,000).
// A transfer the node says would revert gets GasLimit and is sent all the same: the chain's
// receipt is the record of the refusal (FAILED with its tx hash, the funds returned).
func (c *Custody) estimate(ctx context.Context, r sendRow) (uint64, error) {
	if r.Kind == kindTopUp {
		return 21_000, nil
	}
	to, value, data, err := c.payload(r)
	if err != nil {
		return 0, err
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	g, err := c.client.EstimateGas(cctx, ethereum.CallMsg{From: common.HexToAddress(r.From), To: &to, Value: value, Data: data})
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "revert") {
			return c.cfg.GasLimit, nil
		}
		return 0, c.unavailable("gas estimate", err)
	}
	return g + g/4, nil
}

// nextNonce locks the sender's nonce row (created from the node's pending nonce on the
// address's first send) and answers the next nonce.
func (c *Custody) nextNonce(ctx context.Context, tx pgx.Tx, from common.Address) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `select next_nonce from evm_nonces where chain = $1 and address = $2 for update`, c.chain, lower(from)).Scan(&n)
	if err == nil {
		return n, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("evm custody: nonce: %w", err)
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	pn, err := c.client.PendingNonceAt(cctx, from)
	if err != nil {
		return 0, c.unavailable("nonce", err)
	}
	if _, err := tx.Exec(ctx, `insert into evm_nonces (chain, address, next_nonce) values ($1, $2, $3) on conflict do nothing`,
		c.chain, lower(from), int64(pn)); err != nil {
		return 0, err
	}
	err = tx.QueryRow(ctx, `select next_nonce from evm_nonces where chain = $1 and address = $2 for update`, c.chain, lower(from)).Scan(&n)
	return n, err
}

// covered checks, under the sender's nonce lock, that the sender holds the send's value on
// top of what its signed, unconfirmed sends will take, and gas for it.
func (c *Custody) covered(ctx context.Context, tx pgx.Tx, r sendRow, f fees, gas uint64) error {
	from := common.HexToAddress(r.From)
	cctx, cancel := c.call(ctx)
	defer cancel()
	// Signed sends at or above the address's mined nonce have not taken their funds yet; those
	// below it are mined (their confirmations may still accrue) and already left the balance.
	mined, err := c.client.NonceAt(cctx, from, nil)
	if err != nil {
		return c.unavailable("nonce", err)
	}
	var committedToken, committedNative string
	if err := tx.QueryRow(ctx, `select coalesce(sum(value) filter (where token = $3 and kind <> 'TOPUP'), 0)::text,
			coalesce(sum(value) filter (where kind = 'TOPUP'), 0)::text
		from evm_sends where chain = $1 and from_address = $2 and status = 'SIGNED' and nonce >= $4`, c.chain, r.From, r.Token, int64(mined)).
		Scan(&committedToken, &committedNative); err != nil {
		return fmt.Errorf("evm custody: committed funds: %w", err)
	}
	native, err := c.client.BalanceAt(cctx, from, nil)
	if err != nil {
		return c.unavailable("balance", err)
	}
	needNative := new(big.Int).Mul(new(big.Int).SetUint64(gas), f.feeCap)
	cn, _ := new(big.Int).SetString(committedNative, 10)
	needNative.Add(needNative, cn)
	if r.Kind == kindTopUp {
		needNative.Add(needNative, r.Value)
	} else {
		t := c.byAddr[common.HexToAddress(r.Token)]
		bal, err := c.tokenBalance(cctx, t, from)
		if err != nil {
			return err
		}
		ct, _ := new(big.Int).SetString(committedToken, 10)
		if free := new(big.Int).Sub(bal, ct); free.Cmp(r.Value) < 0 {
			return errUnderfunded{fmt.Sprintf("%s holds %s %s base units, %s committed to sends in flight; %s needs %s",
				r.From, bal, r.Asset, ct, r.Reference, r.Value)}
		}
	}
	if native.Cmp(needNative) < 0 {
		return errUnderfunded{fmt.Sprintf("%s holds %s wei for gas, needs %s for %s", r.From, native, needNative, r.Reference)}
	}
	return nil
}

// broadcast sends a stored transaction to the node; a node that already has it, or a nonce
// already used (the send was mined), is not an error. Failures are logged and left to the
// next round: the transaction is stored.
func (c *Custody) broadcast(ctx context.Context, reference string, raw []byte) {
	var stx types.Transaction
	if err := stx.UnmarshalBinary(raw); err != nil {
		c.log.Error("stored transaction does not decode", "reference", reference, "error", err)
		return
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	err := c.client.SendTransaction(cctx, &stx)
	if err == nil || harmless(err) {
		return
	}
	c.log.Warn("broadcast failed: will broadcast the stored transaction again", "reference", reference, "tx_hash", stx.Hash().Hex(), "error", err)
	_, _ = c.pool.Exec(ctx, `update evm_sends set last_error = $3, updated_at = $4 where chain = $1 and reference = $2`,
		c.chain, reference, "broadcast: "+err.Error(), c.cfg.Now().UTC())
}

func harmless(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "already known") || strings.Contains(s, "nonce too low") ||
		strings.Contains(s, "known transaction") || strings.Contains(s, "already imported")
}

// follow checks a signed send's versions on chain: mined with its confirmations -> CONFIRMED
// or FAILED (reverted); not mined -> broadcast again, or replaced at the same nonce when it
// has waited ReplaceAfter below the market's fee.
func (c *Custody) follow(ctx context.Context, r sendRow) (providers.SendResult, error) {
	txs, err := sendTxs(ctx, c.pool, c.chain, r.Reference)
	if err != nil {
		return providers.SendResult{}, err
	}
	if len(txs) == 0 {
		return providers.SendResult{}, fmt.Errorf("evm custody: send %s is signed but has no stored transaction", r.Reference)
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	head, err := c.client.BlockNumber(cctx)
	if err != nil {
		return providers.SendResult{}, c.unavailable("send state", err)
	}
	for i := len(txs) - 1; i >= 0; i-- {
		rc, err := c.client.TransactionReceipt(cctx, common.HexToHash(txs[i].Hash))
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return providers.SendResult{}, c.unavailable("send state", err)
		}
		mined := rc.BlockNumber.Uint64()
		if head+1 < mined+c.cfg.Confirmations {
			return providers.SendResult{Status: providers.SendSubmitted, TxHash: txs[i].Hash}, nil
		}
		return c.conclude(ctx, r, txs[i].Hash, rc)
	}
	latest := txs[len(txs)-1]
	if c.cfg.Now().Sub(latest.CreatedAt) >= c.cfg.ReplaceAfter {
		f, err := c.market(ctx)
		if err != nil {
			return providers.SendResult{}, err
		}
		if f.feeCap.Cmp(latest.FeeCap) > 0 || f.tip.Cmp(latest.TipCap) > 0 {
			hash, err := c.replace(ctx, r, latest, f)
			if err != nil {
				return providers.SendResult{}, err
			}
			if hash != "" {
				return providers.SendResult{Status: providers.SendSubmitted, TxHash: hash}, nil
			}
		}
	}
	c.broadcast(ctx, r.Reference, latest.Raw)
	return providers.SendResult{Status: providers.SendSubmitted, TxHash: latest.Hash}, nil
}

// conclude records a mined send's outcome.
func (c *Custody) conclude(ctx context.Context, r sendRow, hash string, rc *types.Receipt) (providers.SendResult, error) {
	status, reason, res := sendConfirmed, "", providers.SendResult{Status: providers.SendConfirmed, TxHash: hash}
	if rc.Status != types.ReceiptStatusSuccessful {
		status, reason = sendFailed, fmt.Sprintf("the transaction %s reverted on %s in block %d", hash, c.cfg.Chain, rc.BlockNumber.Uint64())
		res = providers.SendResult{Status: providers.SendFailed, TxHash: hash, FailureReason: reason}
	}
	now := c.cfg.Now().UTC()
	tag, err := c.pool.Exec(ctx, `update evm_sends set status = $3, mined_tx_hash = $4, block_number = $5, failure_reason = nullif($6, ''),
		confirmed_at = $7, updated_at = $7 where chain = $1 and reference = $2 and status = 'SIGNED'`,
		c.chain, r.Reference, status, hash, int64(rc.BlockNumber.Uint64()), reason, now)
	if err != nil {
		return providers.SendResult{}, fmt.Errorf("evm custody: record send outcome: %w", err)
	}
	if tag.RowsAffected() == 1 {
		c.cfg.Metrics.Sends.WithLabelValues(c.chain, strings.ToLower(status)).Inc()
		if status == sendFailed {
			c.log.Error("send reverted on chain", "reference", r.Reference, "tx_hash", hash)
		} else {
			c.log.Info("send confirmed", "reference", r.Reference, "tx_hash", hash, "block", rc.BlockNumber.Uint64())
		}
	}
	return res, nil
}

// replace signs the send again at its nonce with fees at least 12.5% above the stuck
// version's (nodes accept a replacement only 10% above), stores it, then broadcasts it.
// "" when the cap leaves no room to raise the fee.
func (c *Custody) replace(ctx context.Context, r sendRow, old signedTx, f fees) (string, error) {
	bump := func(x *big.Int) *big.Int {
		y := new(big.Int).Mul(x, big.NewInt(9))
		y.Quo(y, big.NewInt(8))
		return y.Add(y, big.NewInt(1))
	}
	nf := fees{tip: bump(old.TipCap), feeCap: bump(old.FeeCap)}
	if f.tip.Cmp(nf.tip) > 0 {
		nf.tip = f.tip
	}
	if f.feeCap.Cmp(nf.feeCap) > 0 {
		nf.feeCap = f.feeCap
	}
	nf = c.capped(nf)
	if nf.feeCap.Cmp(bump(old.FeeCap)) < 0 || nf.tip.Cmp(bump(old.TipCap)) < 0 {
		c.log.Warn("send stuck below the market fee and the fee cap leaves no room to replace it", "reference", r.Reference, "tx_hash", old.Hash)
		return "", nil
	}
	to, value, data, err := c.payload(r)
	if err != nil {
		return "", err
	}
	var prev types.Transaction
	if err := prev.UnmarshalBinary(old.Raw); err != nil {
		return "", fmt.Errorf("evm custody: stored transaction of %s: %w", r.Reference, err)
	}
	chainID := big.NewInt(c.cfg.ChainID)
	utx := types.NewTx(&types.DynamicFeeTx{ChainID: chainID, Nonce: uint64(*r.Nonce), GasTipCap: nf.tip, GasFeeCap: nf.feeCap,
		Gas: prev.Gas(), To: &to, Value: value, Data: data})
	stx, err := c.cfg.Signer.SignTx(ctx, signer.Key(r.Key), utx, chainID)
	if err != nil {
		return "", err
	}
	raw, err := stx.MarshalBinary()
	if err != nil {
		return "", err
	}
	hash := stx.Hash().Hex()
	now := c.cfg.Now().UTC()
	err = postgres.InTx(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into evm_send_txs (chain, tx_hash, reference, raw, fee_cap, tip_cap, created_at)
			values ($1, $2, $3, $4, $5::numeric, $6::numeric, $7) on conflict do nothing`, c.chain, hash, r.Reference, raw,
			nf.feeCap.String(), nf.tip.String(), now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `update evm_sends set tx_hash = $3, updated_at = $4 where chain = $1 and reference = $2 and status = 'SIGNED'`,
			c.chain, r.Reference, hash, now)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("evm custody: store replacement: %w", err)
	}
	c.cfg.Metrics.Sends.WithLabelValues(c.chain, "replaced").Inc()
	c.log.Warn("send replaced at the same nonce with a higher fee", "reference", r.Reference, "old", old.Hash, "new", hash,
		"fee_cap", nf.feeCap.String(), "tip", nf.tip.String())
	c.broadcast(ctx, r.Reference, raw)
	return hash, nil
}

// followOpen advances every signed or waiting send of this chain (the Run loop's sender).
func (c *Custody) followOpen(ctx context.Context) error {
	rows, err := c.pool.Query(ctx, `select reference from evm_sends where chain = $1 and status in ('WAITING', 'SIGNED')
		order by created_at limit 1000`, c.chain)
	if err != nil {
		return err
	}
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if _, err := c.advance(ctx, ref); err != nil && ctx.Err() == nil {
			var u *providers.UnavailableError
			if !errors.As(err, &u) {
				c.log.Warn("send step failed", "reference", ref, "error", err)
			}
		}
	}
	return nil
}

var _ = money.USDT
var _ = time.Second
