package projection

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/engine"
)

// batch collects the effects of consecutive journal records before one transaction.
type batch struct {
	env         string
	first, last uint64
	n           int
	newOrders   map[engine.OrderID]*orderRow
	order       []engine.OrderID // insertion order of newOrders
	updates     map[engine.OrderID]*orderUpdate
	trades      [][]any
}

type orderRow struct {
	ev        engine.Event
	filled    int64
	qty       int64
	cancelled bool
	reason    string
	done      bool
	updatedAt time.Time
	offset    uint64
}

type orderUpdate struct {
	delta     int64
	cancelled bool
	reason    string
	done      bool
	finalQty  int64
	updatedAt time.Time
	offset    uint64
	// the last amend in the batch: the new price, and the new quantity less the filled
	// quantity before the batch (the fills of the batch up to the amend plus its open qty)
	amended  bool
	price    int64
	amendQty int64
}

func newBatch(env string) *batch {
	return &batch{env: env, newOrders: map[engine.OrderID]*orderRow{}, updates: map[engine.OrderID]*orderUpdate{}}
}

func (b *batch) add(off uint64, e *engine.Event) {
	if b.first == 0 {
		b.first = off
	}
	b.last = off
	b.n++
	at := time.Unix(0, e.Time).UTC()
	switch e.Kind {
	case engine.EventAccepted:
		row := &orderRow{ev: *e, qty: int64(e.Qty), updatedAt: at, offset: off}
		row.ev.NDeltas = 0
		b.newOrders[e.OrderID] = row
		b.order = append(b.order, e.OrderID)
	case engine.EventTrade:
		b.fill(e.OrderID, int64(e.Qty), at, off)
		b.fill(e.MakerOrderID, int64(e.Qty), at, off)
		id := TradeID(b.env, e.Symbol, e.Seq, e.Time)
		makerSide := engine.Sell
		if e.Side == engine.Sell {
			makerSide = engine.Buy
		}
		b.trades = append(b.trades,
			// [16]byte, not uuid.UUID: pgx encodes it in binary instead of through driver.Valuer's text.
			[]any{b.env, [16]byte(id), "taker", [16]byte(e.Account), [16]byte(e.OrderID), e.Symbol, e.Side.String(), int64(e.Price), int64(e.Qty), e.Amount, int64(e.Seq), at},
			[]any{b.env, [16]byte(id), "maker", [16]byte(e.MakerAccount), [16]byte(e.MakerOrderID), e.Symbol, makerSide.String(), int64(e.Price), int64(e.Qty), e.Amount, int64(e.Seq), at},
		)
	case engine.EventCancelled:
		if row, ok := b.newOrders[e.OrderID]; ok {
			row.cancelled, row.reason, row.updatedAt, row.offset = true, e.Reason.String(), at, off
			return
		}
		u := b.update(e.OrderID)
		u.cancelled, u.reason, u.updatedAt, u.offset = true, e.Reason.String(), at, off
	case engine.EventAmended:
		if row, ok := b.newOrders[e.OrderID]; ok {
			row.ev.Price, row.qty, row.updatedAt, row.offset = e.Price, row.filled+int64(e.Qty), at, off
			return
		}
		u := b.update(e.OrderID)
		u.amended, u.price, u.amendQty, u.updatedAt, u.offset = true, int64(e.Price), u.delta+int64(e.Qty), at, off
	case engine.EventDone:
		if row, ok := b.newOrders[e.OrderID]; ok {
			row.done, row.qty, row.updatedAt, row.offset = true, int64(e.Qty), at, off
			return
		}
		u := b.update(e.OrderID)
		u.done, u.finalQty, u.updatedAt, u.offset = true, int64(e.Qty), at, off
	}
}

// rows is how many order and trade rows the batch writes: one per order it touches
// (inserted with its final state, or updated) and two per trade.
func (b *batch) rows() int { return len(b.newOrders) + len(b.updates) + len(b.trades) }

func (b *batch) fill(id engine.OrderID, qty int64, at time.Time, off uint64) {
	if row, ok := b.newOrders[id]; ok {
		row.filled += qty
		row.updatedAt, row.offset = at, off
		return
	}
	u := b.update(id)
	u.delta += qty
	u.updatedAt, u.offset = at, off
}

func (b *batch) update(id engine.OrderID) *orderUpdate {
	u, ok := b.updates[id]
	if !ok {
		u = &orderUpdate{}
		b.updates[id] = u
	}
	return u
}

// status mirrors the engine's order states.
func status(filled, qty int64, cancelled, done bool) string {
	switch {
	case cancelled:
		return "CANCELLED"
	case done || (qty > 0 && filled >= qty):
		return "FILLED"
	case filled > 0:
		return "PARTIALLY_FILLED"
	}
	return "OPEN"
}

func (b *batch) write(ctx context.Context, tx pgx.Tx) error {
	if len(b.newOrders) > 0 {
		rows := make([][]any, 0, len(b.order))
		var withMeta [][]any // orders with metadata: a second COPY, so the others send no column
		for _, id := range b.order {
			r := b.newOrders[id]
			e := &r.ev
			var coid, reason any
			if e.ClientOrderID != "" {
				coid = e.ClientOrderID
			}
			if r.cancelled {
				reason = r.reason
			}
			row := []any{b.env, [16]byte(e.OrderID), [16]byte(e.Account), e.Symbol, e.Side.String(), e.Type.String(),
				e.TIF.String(), e.PostOnly, coid, int64(e.Price), r.qty, e.QuoteQty, r.filled,
				status(r.filled, r.qty, r.cancelled, r.done), reason, time.Unix(0, e.Time).UTC(), r.updatedAt, int64(r.offset)}
			if meta := metadataJSON(e.Metadata); meta != "" {
				withMeta = append(withMeta, append(row, meta))
			} else {
				rows = append(rows, row)
			}
		}
		cols := []string{"environment", "id", "merchant_id", "symbol", "side", "type",
			"time_in_force", "post_only", "client_order_id", "price", "quantity", "quote_quantity", "filled",
			"status", "cancel_reason", "created_at", "updated_at", "journal_offset"}
		if len(rows) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"trading_orders"}, cols, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
		}
		if len(withMeta) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"trading_orders"}, append(cols, "metadata"), pgx.CopyFromRows(withMeta)); err != nil {
				return err
			}
		}
	}
	if len(b.updates) > 0 {
		n := len(b.updates)
		ids := make([][16]byte, 0, n)
		deltas := make([]int64, 0, n)
		cancels := make([]bool, 0, n)
		reasons := make([]string, 0, n)
		dones := make([]bool, 0, n)
		finals := make([]int64, 0, n)
		ats := make([]time.Time, 0, n)
		offs := make([]int64, 0, n)
		amends := make([]bool, 0, n)
		prices := make([]int64, 0, n)
		amendQtys := make([]int64, 0, n)
		for id, u := range b.updates {
			amends = append(amends, u.amended)
			prices = append(prices, u.price)
			amendQtys = append(amendQtys, u.amendQty)
			ids = append(ids, [16]byte(id))
			deltas = append(deltas, u.delta)
			cancels = append(cancels, u.cancelled)
			reasons = append(reasons, u.reason)
			dones = append(dones, u.done)
			finals = append(finals, u.finalQty)
			ats = append(ats, u.updatedAt)
			offs = append(offs, int64(u.offset))
		}
		_, err := tx.Exec(ctx, `
			update trading_orders o set
				filled = o.filled + u.delta,
				quantity = case when u.done then u.final_qty when u.amended then o.filled + u.amend_qty else o.quantity end,
				price = case when u.amended then u.price else o.price end,
				status = case
					when u.cancel then 'CANCELLED'
					when u.done then 'FILLED'
					when u.amended and o.filled + u.delta >= o.filled + u.amend_qty then 'FILLED'
					when not u.amended and o.quantity > 0 and o.filled + u.delta >= o.quantity then 'FILLED'
					when o.filled + u.delta > 0 then 'PARTIALLY_FILLED'
					else o.status end,
				cancel_reason = case when u.cancel then u.reason else o.cancel_reason end,
				updated_at = u.at,
				journal_offset = u.off
			from unnest($1::uuid[], $2::bigint[], $3::bool[], $4::text[], $5::bool[], $6::bigint[], $7::timestamptz[], $8::bigint[],
					$10::bool[], $11::bigint[], $12::bigint[])
				as u(id, delta, cancel, reason, done, final_qty, at, off, amended, price, amend_qty)
			where o.environment = $9 and o.id = u.id`,
			ids, deltas, cancels, reasons, dones, finals, ats, offs, b.env, amends, prices, amendQtys)
		if err != nil {
			return err
		}
	}
	if len(b.trades) > 0 {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"trading_trades"}, []string{"environment", "id", "liquidity", "merchant_id", "order_id",
			"symbol", "side", "price", "quantity", "notional", "seq", "created_at"}, pgx.CopyFromRows(b.trades))
		if err != nil {
			return err
		}
	}
	return nil
}

// metadataJSON is an order's metadata as the jsonb column takes it: the engine carries the
// gateway's JSON object as opaque bytes, and anything that is not one (a journal written by
// another producer) is stored as none rather than stopping the projection.
func metadataJSON(m string) string {
	// jsonb refuses \u0000: one such order would stop the projector for good.
	if m == "" || m[0] != '{' || strings.Contains(m, `\u0000`) || !json.Valid([]byte(m)) {
		return ""
	}
	return m
}
