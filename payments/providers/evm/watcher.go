package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

// keepBlocks is how many processed blocks are kept to find the fork point of a
// reorganisation (a reorganisation deeper than this is followed from the oldest kept block).
const keepBlocks = 2048

// watched is the set of deposit addresses, loaded from evm_addresses (shared by every
// node: the table is where DepositAddress records what it issued).
type watched struct {
	mu     sync.RWMutex
	refs   map[common.Address]string
	loaded time.Time
}

func (w *watched) get(a common.Address) (string, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	r, ok := w.refs[a]
	return r, ok
}

// refreshAddresses loads the addresses issued since the last load (with a minute's overlap,
// for transactions that committed late).
func (c *Custody) refreshAddresses(ctx context.Context) error {
	c.watch.mu.RLock()
	since := c.watch.loaded.Add(-time.Minute)
	first := c.watch.refs == nil
	c.watch.mu.RUnlock()
	if first {
		since = time.Time{}
	}
	start := c.cfg.Now().UTC()
	rows, err := c.pool.Query(ctx, `select address, reference from evm_addresses where created_at >= $1`, since)
	if err != nil {
		return fmt.Errorf("evm custody: load deposit addresses: %w", err)
	}
	defer rows.Close()
	got := map[common.Address]string{}
	for rows.Next() {
		var a, r string
		if err := rows.Scan(&a, &r); err != nil {
			return err
		}
		got[common.HexToAddress(a)] = r
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c.watch.mu.Lock()
	defer c.watch.mu.Unlock()
	if c.watch.refs == nil {
		c.watch.refs = make(map[common.Address]string, len(got))
	}
	for a, r := range got {
		c.watch.refs[a] = r
	}
	c.watch.loaded = start
	return nil
}

// Watched is the number of deposit addresses the watcher matches transfers against.
func (c *Custody) Watched() int {
	c.watch.mu.RLock()
	defer c.watch.mu.RUnlock()
	return len(c.watch.refs)
}

type cursor struct {
	Number uint64
	Hash   common.Hash
}

func (c *Custody) loadCursor(ctx context.Context) (cursor, bool, error) {
	var n int64
	var h string
	err := c.pool.QueryRow(ctx, `select block_number, block_hash from evm_cursors where chain = $1`, c.chain).Scan(&n, &h)
	if errors.Is(err, pgx.ErrNoRows) {
		return cursor{}, false, nil
	}
	if err != nil {
		return cursor{}, false, fmt.Errorf("evm custody: load cursor: %w", err)
	}
	return cursor{Number: uint64(n), Hash: common.HexToHash(h)}, true, nil
}

// header is the part of a block the watcher needs, read as the node reports it (a chain
// whose header has extra fields still reports its own hash).
type header struct {
	Number     *hexutil.Big   `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Time       hexutil.Uint64 `json:"timestamp"`
}

func (c *Custody) headerAt(ctx context.Context, n *big.Int) (header, error) {
	var h *header
	arg := "latest"
	if n != nil {
		arg = hexutil.EncodeBig(n)
	}
	if err := c.rpc.CallContext(ctx, &h, "eth_getBlockByNumber", arg, false); err != nil {
		return header{}, err
	}
	if h == nil || h.Number == nil {
		return header{}, ethereum.NotFound
	}
	return *h, nil
}

// headers fetches blocks from..to in one batch request.
func (c *Custody) headers(ctx context.Context, from, to uint64) ([]header, error) {
	out := make([]*header, to-from+1)
	batch := make([]rpc.BatchElem, len(out))
	for i := range batch {
		batch[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.EncodeUint64(from + uint64(i)), false}, Result: &out[i]}
	}
	if err := c.rpc.BatchCallContext(ctx, batch); err != nil {
		return nil, err
	}
	hs := make([]header, len(out))
	for i, b := range batch {
		if b.Error != nil {
			return nil, b.Error
		}
		if out[i] == nil || out[i].Number == nil || out[i].Number.ToInt().Uint64() != from+uint64(i) {
			return nil, fmt.Errorf("block %d not available", from+uint64(i))
		}
		hs[i] = *out[i]
	}
	return hs, nil
}

// errRetry: the chain moved under the read (a reorganisation in progress); read again.
var errRetry = errors.New("evm custody: the chain changed during the read")

// Poll is one round of the watcher: catch up to the node's head (in ranges of
// BlocksPerPoll), rewinding past a reorganisation, then notify the deposits that have their
// confirmations. It answers whether it caught up.
func (c *Custody) Poll(ctx context.Context) (bool, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	head, err := c.headerAt(cctx, nil)
	if err != nil {
		c.setHealth(func(h *Health) { h.Up, h.Error, h.PolledAt = false, "node: "+err.Error(), c.cfg.Now().UTC() })
		return false, c.unavailable("head", err)
	}
	hn := head.Number.ToInt().Uint64()
	age := c.cfg.Now().Sub(time.Unix(int64(head.Time), 0))
	c.cfg.Metrics.Head.WithLabelValues(c.chain).Set(float64(hn))
	c.cfg.Metrics.HeadAge.WithLabelValues(c.chain).Set(age.Seconds())
	if err := c.refreshAddresses(ctx); err != nil {
		return false, err
	}
	cur, ok, err := c.loadCursor(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		if cur, err = c.startCursor(ctx, hn); err != nil {
			return false, err
		}
	}
	// Is the cursor's block still the chain's? (A reorganisation at or below it.)
	at, err := c.headerAt(cctx, new(big.Int).SetUint64(cur.Number))
	if err != nil && !errors.Is(err, ethereum.NotFound) {
		return false, c.unavailable("block", err)
	}
	if err != nil || at.Hash != cur.Hash {
		if cur, err = c.rewind(ctx, cur); err != nil {
			return false, err
		}
	}
	caught := true
	if cur.Number < hn {
		to := min(hn, cur.Number+c.cfg.BlocksPerPoll)
		next, err := c.scan(ctx, cur, to)
		switch {
		case errors.Is(err, errRetry):
			return false, nil
		case err != nil:
			return false, err
		}
		cur = next
		caught = cur.Number >= hn
	}
	c.cfg.Metrics.Cursor.WithLabelValues(c.chain).Set(float64(cur.Number))
	if err := c.credit(ctx, hn, cur.Number); err != nil {
		return false, err
	}
	c.setHealth(func(h *Health) {
		h.Up, h.Head, h.Cursor, h.Error, h.PolledAt = true, hn, cur.Number, "", c.cfg.Now().UTC()
		h.HeadAge = age.Truncate(time.Second).String()
		h.Lagging = age > c.cfg.LagAlert
	})
	return caught, nil
}

// startCursor is where a chain with no stored cursor begins: before StartBlock, or at the
// head.
func (c *Custody) startCursor(ctx context.Context, head uint64) (cursor, error) {
	n := head
	if c.cfg.StartBlock > 0 && c.cfg.StartBlock-1 < head {
		n = c.cfg.StartBlock - 1
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	h, err := c.headerAt(cctx, new(big.Int).SetUint64(n))
	if err != nil {
		return cursor{}, c.unavailable("block", err)
	}
	cur := cursor{Number: n, Hash: h.Hash}
	_, err = c.pool.Exec(ctx, `insert into evm_cursors (chain, block_number, block_hash, updated_at) values ($1, $2, $3, $4)
		on conflict do nothing`, c.chain, int64(n), h.Hash.Hex(), c.cfg.Now().UTC())
	if err != nil {
		return cursor{}, err
	}
	_, err = c.pool.Exec(ctx, `insert into evm_blocks (chain, block_number, block_hash, parent_hash) values ($1, $2, $3, $4)
		on conflict do nothing`, c.chain, int64(n), h.Hash.Hex(), h.ParentHash.Hex())
	c.log.Info("watcher starts", "block", n)
	return cur, err
}

type seen struct {
	txHash   common.Hash
	ordinal  int
	logIndex uint
	block    uint64
	hash     common.Hash
	token    Token
	from, to common.Address
	ref      string
	value    *big.Int
}

// scan reads blocks cur+1..to: their headers (linked by parent hash to the cursor) and the
// Transfer logs of our tokens, and records the transfers to our addresses, the blocks and
// the new cursor in one transaction.
func (c *Custody) scan(ctx context.Context, cur cursor, to uint64) (cursor, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	from := cur.Number + 1
	hs, err := c.headers(cctx, from, to)
	if err != nil {
		return cur, c.unavailable("blocks", err)
	}
	prev := cur.Hash
	for _, h := range hs {
		if h.ParentHash != prev {
			return cur, errRetry // the next round rewinds from the cursor if needed
		}
		prev = h.Hash
	}
	contracts := make([]common.Address, 0, len(c.cfg.Tokens))
	for _, t := range c.cfg.Tokens {
		contracts = append(contracts, t.Contract)
	}
	logs, err := c.client.FilterLogs(cctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from),
		ToBlock: new(big.Int).SetUint64(to), Addresses: contracts, Topics: [][]common.Hash{{transferTopic}}})
	if err != nil {
		return cur, c.unavailable("logs", err)
	}
	c.cfg.Metrics.Logs.WithLabelValues(c.chain).Add(float64(len(logs)))
	var found []seen
	ordinals := map[common.Hash]int{}
	for _, l := range logs {
		if l.BlockNumber < from || l.BlockNumber > to || l.BlockHash != hs[l.BlockNumber-from].Hash {
			return cur, errRetry
		}
		if l.Removed || len(l.Topics) != 3 || len(l.Data) != 32 {
			continue
		}
		t, ok := c.byAddr[l.Address]
		if !ok {
			continue
		}
		ord := ordinals[l.TxHash]
		ordinals[l.TxHash] = ord + 1
		dst := common.BytesToAddress(l.Topics[2].Bytes())
		ref, ok := c.watch.get(dst)
		if !ok {
			continue
		}
		found = append(found, seen{txHash: l.TxHash, ordinal: ord, logIndex: l.Index, block: l.BlockNumber, hash: l.BlockHash,
			token: t, from: common.BytesToAddress(l.Topics[1].Bytes()), to: dst, ref: ref, value: new(big.Int).SetBytes(l.Data)})
	}
	last := hs[len(hs)-1]
	now := c.cfg.Now().UTC()
	err = postgres.InTx(ctx, c.pool, func(tx pgx.Tx) error {
		// The cursor moves only from where this read started: two watchers of one chain
		// (two nodes) never both record a range.
		tag, err := tx.Exec(ctx, `update evm_cursors set block_number = $2, block_hash = $3, updated_at = $4
			where chain = $1 and block_number = $5 and block_hash = $6`, c.chain, int64(last.Number.ToInt().Uint64()), last.Hash.Hex(), now,
			int64(cur.Number), cur.Hash.Hex())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errRetry
		}
		b := &pgx.Batch{}
		for _, h := range hs {
			b.Queue(`insert into evm_blocks (chain, block_number, block_hash, parent_hash) values ($1, $2, $3, $4)
				on conflict (chain, block_number) do update set block_hash = excluded.block_hash, parent_hash = excluded.parent_hash`,
				c.chain, int64(h.Number.ToInt().Uint64()), h.Hash.Hex(), h.ParentHash.Hex())
		}
		for _, s := range found {
			amt, ok := s.token.toAmount(s.value)
			if !ok {
				c.log.Error("transfer too large to record: needs the operator", "tx_hash", s.txHash.Hex(), "value", s.value.String())
				continue
			}
			b.Queue(`insert into evm_transfers (id, chain, tx_hash, ordinal, log_index, block_number, block_hash, token, asset,
					from_address, to_address, reference, value, amount, status, seen_at)
				values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::numeric, $14, 'SEEN', $15)
				on conflict (chain, tx_hash, ordinal) do update set log_index = excluded.log_index,
					block_number = excluded.block_number, block_hash = excluded.block_hash,
					status = case evm_transfers.status when 'DROPPED' then 'SEEN' when 'REORGED_AFTER_CREDIT' then 'CREDITED'
						else evm_transfers.status end`,
				uuid.Must(uuid.NewV7()), c.chain, s.txHash.Hex(), s.ordinal, int(s.logIndex), int64(s.block), s.hash.Hex(),
				lower(s.token.Contract), string(s.token.Asset), lower(s.from), lower(s.to), s.ref, s.value.String(), amt.Minor, now)
		}
		b.Queue(`delete from evm_blocks where chain = $1 and block_number < $2`, c.chain, int64(last.Number.ToInt().Uint64())-keepBlocks)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return cur, err
	}
	c.cfg.Metrics.Blocks.WithLabelValues(c.chain).Add(float64(len(hs)))
	c.cfg.Metrics.Transfers.WithLabelValues(c.chain).Add(float64(len(found)))
	for _, s := range found {
		c.log.Info("deposit seen", "reference", s.ref, "tx_hash", s.txHash.Hex(), "block", s.block, "asset", s.token.Asset, "value", s.value.String())
	}
	return cursor{Number: last.Number.ToInt().Uint64(), Hash: last.Hash}, nil
}

// rewind finds the newest kept block the node still has (the fork point), drops what was
// recorded above it and moves the cursor there. A transfer seen above it and not credited is
// DROPPED; one already credited is REORGED_AFTER_CREDIT: an alert for the operator (it is
// never credited twice: if the chain includes it again, its notification's id is the same).
func (c *Custody) rewind(ctx context.Context, cur cursor) (cursor, error) {
	rows, err := c.pool.Query(ctx, `select block_number, block_hash from evm_blocks where chain = $1 and block_number <= $2
		order by block_number desc`, c.chain, int64(cur.Number))
	if err != nil {
		return cur, err
	}
	type kept struct {
		n    int64
		hash string
	}
	ks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kept, error) {
		var k kept
		return k, r.Scan(&k.n, &k.hash)
	})
	if err != nil {
		return cur, err
	}
	fork := cursor{}
	found := false
	for _, k := range ks {
		cctx, cancel := c.call(ctx)
		h, err := c.headerAt(cctx, big.NewInt(k.n))
		cancel()
		if errors.Is(err, ethereum.NotFound) {
			continue
		}
		if err != nil {
			return cur, c.unavailable("block", err)
		}
		if strings.EqualFold(h.Hash.Hex(), k.hash) {
			fork, found = cursor{Number: uint64(k.n), Hash: h.Hash}, true
			break
		}
	}
	if !found { // deeper than every kept block: restart from the node's block at the oldest kept height
		n := uint64(0)
		if len(ks) > 0 {
			n = uint64(ks[len(ks)-1].n)
		}
		cctx, cancel := c.call(ctx)
		h, err := c.headerAt(cctx, new(big.Int).SetUint64(n))
		cancel()
		if err != nil {
			return cur, c.unavailable("block", err)
		}
		fork = cursor{Number: n, Hash: h.Hash}
		c.log.Error("reorganisation deeper than the kept blocks: following the node from its block", "block", n)
	}
	now := c.cfg.Now().UTC()
	var dropped, alerts []string
	err = postgres.InTx(ctx, c.pool, func(tx pgx.Tx) error {
		// InTx reruns the transaction after a deadlock or serialization failure: only the
		// committed run's rows are counted and alerted, not the aborted run's too.
		dropped, alerts = nil, nil
		rows, err := tx.Query(ctx, `update evm_transfers set status = case status when 'CREDITED' then 'REORGED_AFTER_CREDIT' else 'DROPPED' end,
				dropped_at = $3
			where chain = $1 and block_number > $2 and status in ('SEEN', 'CREDITED') returning tx_hash, status, reference`, c.chain, int64(fork.Number), now)
		if err != nil {
			return err
		}
		for rows.Next() {
			var h, st, ref string
			if err := rows.Scan(&h, &st, &ref); err != nil {
				return err
			}
			if st == "REORGED_AFTER_CREDIT" {
				alerts = append(alerts, h+" ("+ref+")")
			} else {
				dropped = append(dropped, h)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `delete from evm_blocks where chain = $1 and block_number > $2`, c.chain, int64(fork.Number)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `update evm_cursors set block_number = $2, block_hash = $3, updated_at = $4 where chain = $1`,
			c.chain, int64(fork.Number), fork.Hash.Hex(), now)
		return err
	})
	if err != nil {
		return cur, err
	}
	c.cfg.Metrics.Reorgs.WithLabelValues(c.chain).Inc()
	c.cfg.Metrics.Dropped.WithLabelValues(c.chain).Add(float64(len(dropped)))
	c.log.Warn("reorganisation: rewound to the fork point", "from", cur.Number, "to", fork.Number, "dropped_before_credit", len(dropped))
	if len(alerts) > 0 {
		c.cfg.Metrics.ReorgedCredits.WithLabelValues(c.chain).Add(float64(len(alerts)))
		c.log.Error("ALERT: credited deposits were reorganised out of the chain: the credit stands, the funds may not; see `svc custody alerts`",
			"transfers", strings.Join(alerts, ", "))
	}
	return fork, nil
}

// credit notifies the recorded transfers that have their confirmations (and lie at or below
// the cursor, in blocks checked against the node), oldest first, and marks them CREDITED.
func (c *Custody) credit(ctx context.Context, head, upTo uint64) error {
	if head+1 < c.cfg.Confirmations {
		return nil
	}
	limit := min(upTo, head+1-c.cfg.Confirmations)
	rows, err := c.pool.Query(ctx, `select id, tx_hash, ordinal, log_index, block_number, block_hash, asset, to_address, reference, amount
		from evm_transfers where chain = $1 and status = 'SEEN' and block_number <= $2 order by block_number, log_index limit 500`,
		c.chain, int64(limit))
	if err != nil {
		return err
	}
	type open struct {
		id                   uuid.UUID
		tx, blockHash, asset string
		to, ref              string
		ordinal, logIndex    int
		block, amount        int64
	}
	os, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (open, error) {
		var o open
		return o, r.Scan(&o.id, &o.tx, &o.ordinal, &o.logIndex, &o.block, &o.blockHash, &o.asset, &o.to, &o.ref, &o.amount)
	})
	if err != nil {
		return err
	}
	times := map[int64]time.Time{}
	var done, events []uuid.UUID
	// The notified transfers are marked CREDITED in one statement (also when a later one
	// fails): a crash before it only notifies them again, which the notification's id makes
	// a no-op.
	defer func() {
		if len(done) == 0 {
			return
		}
		if _, err := c.pool.Exec(context.WithoutCancel(ctx), `update evm_transfers t set status = 'CREDITED', credited_at = $3,
				partner_event_id = nullif(u.event, '00000000-0000-0000-0000-000000000000'::uuid)
			from unnest($1::uuid[], $2::uuid[]) as u(id, event) where t.id = u.id and t.status = 'SEEN'`,
			done, events, c.cfg.Now().UTC()); err != nil {
			c.log.Warn("marking credited deposits failed: they will be notified again (idempotent)", "error", err)
		}
	}()
	for _, o := range os {
		at, ok := times[o.block]
		if !ok {
			cctx, cancel := c.call(ctx)
			h, err := c.headerAt(cctx, big.NewInt(o.block))
			cancel()
			if err != nil {
				return c.unavailable("block", err)
			}
			if !strings.EqualFold(h.Hash.Hex(), o.blockHash) {
				return nil // reorganised under us: the next round rewinds
			}
			at = time.Unix(int64(h.Time), 0).UTC()
			times[o.block] = at
		}
		t := c.tokens[assetOf(o.asset)]
		d := Deposit{EventID: fmt.Sprintf("evm:%s:%s:%d", c.chain, strings.ToLower(o.tx), o.ordinal), Reference: o.ref, Chain: c.cfg.Chain,
			Address: common.HexToAddress(o.to).Hex(), Amount: moneyOf(t, o.amount), TxHash: strings.ToLower(o.tx), LogIndex: uint(o.logIndex),
			BlockNumber: uint64(o.block), ConfirmedAt: at}
		var event uuid.UUID
		if c.cfg.Notifier != nil {
			id, err := c.cfg.Notifier.Notify(ctx, d)
			if err != nil {
				return fmt.Errorf("evm custody: notify deposit %s: %w", d.EventID, err)
			}
			event = id
		}
		done, events = append(done, o.id), append(events, event)
		c.cfg.Metrics.Credited.WithLabelValues(c.chain).Inc()
		c.log.Info("deposit confirmed and notified", "event_id", d.EventID, "reference", d.Reference, "amount", d.Amount.String(), "asset", d.Amount.Asset)
	}
	return nil
}

var _ = types.ReceiptStatusFailed
