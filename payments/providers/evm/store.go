package evm

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

func lower(a common.Address) string { return strings.ToLower(a.Hex()) }

func saveAddress(ctx context.Context, q postgres.Querier, addr common.Address, reference string, now time.Time) error {
	_, err := q.Exec(ctx, `insert into evm_addresses (address, reference, created_at) values ($1, $2, $3)
		on conflict do nothing`, lower(addr), reference, now.UTC())
	if err != nil {
		return fmt.Errorf("evm custody: record deposit address: %w", err)
	}
	return nil
}

// Send statuses (evm_sends.status).
const (
	sendWaiting   = "WAITING"   // not signed yet: the hot wallet lacks the funds
	sendSigned    = "SIGNED"    // nonce and signed transaction stored; broadcast (again) until mined
	sendConfirmed = "CONFIRMED" // mined, succeeded, with its confirmations
	sendFailed    = "FAILED"    // mined and reverted
)

// Send kinds.
const (
	kindSend  = "SEND"
	kindSweep = "SWEEP"
	kindTopUp = "TOPUP"
)

type sendRow struct {
	Chain, Reference, Kind, Asset, Token, From, To string
	Key                                            string
	Value                                          *big.Int
	Nonce                                          *int64
	Status                                         string
	TxHash, MinedTxHash, FailureReason             string
	CreatedAt, UpdatedAt                           time.Time
	SignedAt                                       *time.Time
}

func loadSend(ctx context.Context, q postgres.Querier, chain, reference string, lock bool) (sendRow, bool, error) {
	sql := `select chain, reference, kind, asset, token, from_address, signer_key, to_address, value::text, nonce, status,
		coalesce(tx_hash, ''), coalesce(mined_tx_hash, ''), coalesce(failure_reason, ''), created_at, updated_at, signed_at
		from evm_sends where chain = $1 and reference = $2`
	if lock {
		sql += ` for update`
	}
	var r sendRow
	var value string
	err := q.QueryRow(ctx, sql, chain, reference).Scan(&r.Chain, &r.Reference, &r.Kind, &r.Asset, &r.Token, &r.From, &r.Key, &r.To,
		&value, &r.Nonce, &r.Status, &r.TxHash, &r.MinedTxHash, &r.FailureReason, &r.CreatedAt, &r.UpdatedAt, &r.SignedAt)
	if err == pgx.ErrNoRows {
		return sendRow{}, false, nil
	}
	if err != nil {
		return sendRow{}, false, fmt.Errorf("evm custody: load send %s: %w", reference, err)
	}
	r.Value, _ = new(big.Int).SetString(value, 10)
	return r, true, nil
}

type signedTx struct {
	Hash           string
	Raw            []byte
	FeeCap, TipCap *big.Int
	CreatedAt      time.Time
}

// sendTxs are a send's signed versions, oldest first.
func sendTxs(ctx context.Context, q postgres.Querier, chain, reference string) ([]signedTx, error) {
	rows, err := q.Query(ctx, `select tx_hash, raw, fee_cap::text, tip_cap::text, created_at from evm_send_txs
		where chain = $1 and reference = $2 order by created_at, tx_hash`, chain, reference)
	if err != nil {
		return nil, fmt.Errorf("evm custody: load signed transactions: %w", err)
	}
	defer rows.Close()
	var out []signedTx
	for rows.Next() {
		var s signedTx
		var fc, tc string
		if err := rows.Scan(&s.Hash, &s.Raw, &fc, &tc, &s.CreatedAt); err != nil {
			return nil, err
		}
		s.FeeCap, _ = new(big.Int).SetString(fc, 10)
		s.TipCap, _ = new(big.Int).SetString(tc, 10)
		out = append(out, s)
	}
	return out, rows.Err()
}
