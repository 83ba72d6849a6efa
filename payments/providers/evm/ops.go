package evm

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

// Alert is a credited deposit that a reorganisation deeper than the chain's confirmations
// removed: the credit stands (it is never given twice), the funds may not have arrived. The
// operator checks the transaction on a block explorer and, if it is gone for good, recovers
// the amount from the merchant or writes it off (docs/custody.md).
type Alert struct {
	Chain      string    `json:"chain"`
	TxHash     string    `json:"tx_hash"`
	Reference  string    `json:"reference"`
	Address    string    `json:"address"`
	Asset      string    `json:"asset"`
	Amount     int64     `json:"amount"` // minor units
	Block      int64     `json:"block"`  // where it was when credited
	CreditedAt time.Time `json:"credited_at"`
	RemovedAt  time.Time `json:"removed_at"`
}

// Alerts lists credited deposits reorganised out of their chain, newest first.
func Alerts(ctx context.Context, q postgres.Querier) ([]Alert, error) {
	rows, err := q.Query(ctx, `select chain, tx_hash, reference, to_address, asset, amount, block_number, credited_at, dropped_at
		from evm_transfers where status = 'REORGED_AFTER_CREDIT' order by dropped_at desc`)
	if err != nil {
		return nil, fmt.Errorf("evm custody: alerts: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Alert, error) {
		var a Alert
		return a, r.Scan(&a.Chain, &a.TxHash, &a.Reference, &a.Address, &a.Asset, &a.Amount, &a.Block, &a.CreditedAt, &a.RemovedAt)
	})
}

// AddressHolding is what the watcher credited to one deposit address and what was swept
// from it, per chain and asset (the chain's own balance: Custody.BalancesOf).
type AddressHolding struct {
	Chain     string `json:"chain"`
	Address   string `json:"address"`
	Reference string `json:"reference"`
	Asset     string `json:"asset"`
	Credited  int64  `json:"credited"` // minor units
	Pending   int64  `json:"pending"`  // seen, waiting for confirmations
	Swept     string `json:"swept"`    // token base units sent to the hot wallet
}

// Holdings lists deposit addresses with deposits, largest credited first.
func Holdings(ctx context.Context, q postgres.Querier, limit int) ([]AddressHolding, error) {
	rows, err := q.Query(ctx, `select t.chain, t.to_address, t.reference, t.asset,
			coalesce(sum(t.amount) filter (where t.status = 'CREDITED'), 0),
			coalesce(sum(t.amount) filter (where t.status = 'SEEN'), 0),
			coalesce((select sum(s.value) from evm_sends s where s.chain = t.chain and s.kind = 'SWEEP' and s.from_address = t.to_address
				and s.asset = t.asset and s.status = 'CONFIRMED'), 0)::text
		from evm_transfers t group by t.chain, t.to_address, t.reference, t.asset
		order by 5 desc limit $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("evm custody: holdings: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AddressHolding, error) {
		var h AddressHolding
		return h, r.Scan(&h.Chain, &h.Address, &h.Reference, &h.Asset, &h.Credited, &h.Pending, &h.Swept)
	})
}

// OpenSend is a send not yet concluded.
type OpenSend struct {
	Chain     string    `json:"chain"`
	Reference string    `json:"reference"`
	Kind      string    `json:"kind"`
	Status    string    `json:"status"`
	TxHash    string    `json:"tx_hash"`
	LastError string    `json:"last_error"`
	CreatedAt time.Time `json:"created_at"`
}

// OpenSends lists sends WAITING (the hot wallet lacks funds) or SIGNED and not yet
// confirmed, oldest first.
func OpenSends(ctx context.Context, q postgres.Querier) ([]OpenSend, error) {
	rows, err := q.Query(ctx, `select chain, reference, kind, status, coalesce(tx_hash, ''), coalesce(last_error, ''), created_at
		from evm_sends where status in ('WAITING', 'SIGNED') order by created_at`)
	if err != nil {
		return nil, fmt.Errorf("evm custody: open sends: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpenSend, error) {
		var s OpenSend
		return s, r.Scan(&s.Chain, &s.Reference, &s.Kind, &s.Status, &s.TxHash, &s.LastError, &s.CreatedAt)
	})
}
