package projection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/persistence/postgres"
)

// Store reads the projected history. Every query is scoped by environment and merchant.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a reader over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// OrderFilter selects orders; empty fields match everything.
type OrderFilter struct {
	Symbol, Status, Side string
	// Metadata, if set, is a JSON object every order listed contains (metadata[key]=value).
	Metadata string
}

// Order is a projected order.
type Order struct {
	View      engine.OrderView
	UpdatedAt time.Time
}

// Trade is one side of a fill.
type Trade struct {
	ID        uuid.UUID
	OrderID   uuid.UUID
	Symbol    string
	Side      engine.Side
	Price     engine.Price
	Qty       engine.Qty
	Notional  int64
	Liquidity string
	CreatedAt time.Time
}

// TradeFilter selects trades.
type TradeFilter struct {
	Symbol   string
	OrderID  uuid.UUID
	From, To time.Time
}

const orderColumns = `id, merchant_id, symbol, side, type, time_in_force, post_only, coalesce(client_order_id, ''),
	price, quantity, quote_quantity, filled, status, coalesce(cancel_reason, ''), created_at, updated_at,
	case when metadata = '{}'::jsonb then '' else metadata::text end`

func scanOrder(row pgx.Row) (Order, error) {
	var (
		o                          Order
		id, merchant               uuid.UUID
		side, typ, tif, st, reason string
		price, qty, quote, filled  int64
		created                    time.Time
	)
	err := row.Scan(&id, &merchant, &o.View.Symbol, &side, &typ, &tif, &o.View.PostOnly, &o.View.ClientOrderID,
		&price, &qty, &quote, &filled, &st, &reason, &created, &o.UpdatedAt, &o.View.Metadata)
	if err != nil {
		return o, err
	}
	v := &o.View
	v.ID, v.Account = engine.OrderID(id), engine.AccountID(merchant)
	v.Side, v.Type, v.TIF = parseSide(side), parseType(typ), parseTIF(tif)
	v.Price, v.Qty, v.QuoteQty, v.Filled = engine.Price(price), engine.Qty(qty), quote, engine.Qty(filled)
	v.State, v.Reason = parseState(st), parseReason(reason)
	v.Time = created.UnixNano()
	if v.Metadata != "" {
		// jsonb's text has its own spacing and key order: give back the engine's form
		// (encoding/json of the object: compact, keys sorted), so an order reads the same
		// from the engine and from the history.
		var m map[string]string
		if json.Unmarshal([]byte(v.Metadata), &m) == nil {
			b, _ := json.Marshal(m)
			v.Metadata = string(b)
		}
	}
	return o, nil
}

// GetOrder returns one order of the merchant.
func (s *Store) GetOrder(ctx context.Context, env string, merchant, id uuid.UUID) (Order, bool, error) {
	o, err := scanOrder(s.pool.QueryRow(ctx, `select `+orderColumns+` from trading_orders
		where environment = $1 and merchant_id = $2 and id = $3`, env, merchant, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("get order: %w", err)
	}
	return o, true, nil
}

// GetOrderByClientID returns the merchant's newest order with client order id clientID.
func (s *Store) GetOrderByClientID(ctx context.Context, env string, merchant uuid.UUID, clientID string) (Order, bool, error) {
	o, err := scanOrder(s.pool.QueryRow(ctx, `select `+orderColumns+` from trading_orders
		where environment = $1 and merchant_id = $2 and client_order_id = $3
		order by created_at desc limit 1`, env, merchant, clientID))
	if errors.Is(err, pgx.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("get order by client order id: %w", err)
	}
	return o, true, nil
}

// ListOrders returns a page of the merchant's orders, newest first, and the total.
func (s *Store) ListOrders(ctx context.Context, env string, merchant uuid.UUID, f OrderFilter, limit, offset int) ([]Order, int64, error) {
	where, args := []string{"environment = $1", "merchant_id = $2"}, []any{env, merchant}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Symbol != "" {
		add("symbol = ?", f.Symbol)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Side != "" {
		add("side = ?", f.Side)
	}
	if f.Metadata != "" {
		// Both conditions, so the partial GIN index (metadata <> '{}') serves the filter.
		add("metadata <> '{}'::jsonb and metadata @> ?::jsonb", f.Metadata)
	}
	cond := strings.Join(where, " and ")
	return postgres.Page(ctx, s.pool, "orders", `select count(*) from trading_orders where `+cond,
		`select `+orderColumns+` from trading_orders where `+cond+` order by created_at desc, id desc`, args, limit, offset, scanOrder)
}

// ListTrades returns a page of the merchant's fills, newest first, and the total.
func (s *Store) ListTrades(ctx context.Context, env string, merchant uuid.UUID, f TradeFilter, limit, offset int) ([]Trade, int64, error) {
	where, args := []string{"environment = $1", "merchant_id = $2"}, []any{env, merchant}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Symbol != "" {
		add("symbol = ?", f.Symbol)
	}
	if f.OrderID != uuid.Nil {
		add("order_id = ?", f.OrderID)
	}
	if !f.From.IsZero() {
		add("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		add("created_at < ?", f.To)
	}
	cond := strings.Join(where, " and ")
	return postgres.Page(ctx, s.pool, "trades", `select count(*) from trading_trades where `+cond,
		`select id, order_id, symbol, side, price, quantity, notional, liquidity, created_at
		from trading_trades where `+cond+` order by created_at desc, id desc, liquidity`, args, limit, offset, scanTrade)
}

func scanTrade(row pgx.Row) (Trade, error) {
	var t Trade
	var side string
	var price, qty int64
	if err := row.Scan(&t.ID, &t.OrderID, &t.Symbol, &side, &price, &qty, &t.Notional, &t.Liquidity, &t.CreatedAt); err != nil {
		return t, err
	}
	t.Side, t.Price, t.Qty = parseSide(side), engine.Price(price), engine.Qty(qty)
	return t, nil
}

func parseSide(s string) engine.Side {
	if s == "sell" {
		return engine.Sell
	}
	return engine.Buy
}

func parseType(s string) engine.OrderType {
	if s == "market" {
		return engine.Market
	}
	return engine.Limit
}

func parseTIF(s string) engine.TimeInForce {
	switch s {
	case "IOC":
		return engine.IOC
	case "FOK":
		return engine.FOK
	}
	return engine.GTC
}

func parseState(s string) engine.OrderState {
	switch s {
	case "OPEN":
		return engine.Open
	case "PARTIALLY_FILLED":
		return engine.PartiallyFilled
	case "FILLED":
		return engine.Filled
	case "CANCELLED":
		return engine.Cancelled
	}
	return engine.StateNone
}

func parseReason(s string) engine.CancelReason {
	for r := engine.ReasonNone; r <= engine.ReasonInsufficientFunds; r++ {
		if r.String() == s {
			return r
		}
	}
	return engine.ReasonNone
}
