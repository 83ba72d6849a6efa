package trading

import (
	"context"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/gateway/api"
)

// Exchange is one environment's matching engine as the handlers need it. *engine.Engine
// satisfies it; later a client of a remote engine process can.
type Exchange interface {
	Submit(cmd *engine.Command) (engine.Result, error)
	Order(acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool)
	// OrderByClientID finds an open or recently closed order by its client order id.
	OrderByClientID(acct engine.AccountID, clientID string) (engine.OrderView, bool)
	Balances(acct engine.AccountID) engine.Balances
	Pair(symbol string) (engine.PairConfig, bool)
	Pairs() []engine.PairConfig
	// Offset is the highest journal offset acknowledged so far.
	Offset() uint64
}

// OrderFilter selects orders of one account.
type OrderFilter struct {
	Symbol string
	Status string // OPEN, PARTIALLY_FILLED, FILLED, CANCELLED or ""
	Side   string // buy, sell or ""
	// Metadata, if set, is the metadata[KEY]=VALUE filter as a JSON object (containment).
	Metadata string
}

// TradeFilter selects trades of one account.
type TradeFilter struct {
	Symbol   string
	OrderID  uuid.UUID // zero: any
	From, To time.Time // zero: unbounded; From inclusive, To exclusive
}

// OrderRow is an order as the history keeps it.
type OrderRow struct {
	View      engine.OrderView
	UpdatedAt time.Time
}

// TradeRow is one fill as seen by one side.
type TradeRow struct {
	ID        uuid.UUID
	OrderID   uuid.UUID
	Symbol    string
	Side      engine.Side
	Price     engine.Price
	Qty       engine.Qty
	Liquidity string // maker or taker
	CreatedAt time.Time
}

// History is the read model of orders and trades (the journal's projection).
type History interface {
	// WaitFor returns once the projection of env has applied every journal offset up to
	// offset, or with the context's error.
	WaitFor(ctx context.Context, env api.Environment, offset uint64) error
	GetOrder(ctx context.Context, env api.Environment, acct uuid.UUID, id uuid.UUID) (OrderRow, bool, error)
	// GetOrderByClientID returns the newest order of the account with that client order id.
	GetOrderByClientID(ctx context.Context, env api.Environment, acct uuid.UUID, clientID string) (OrderRow, bool, error)
	ListOrders(ctx context.Context, env api.Environment, acct uuid.UUID, f OrderFilter, p api.PageParams) ([]OrderRow, int64, error)
	ListTrades(ctx context.Context, env api.Environment, acct uuid.UUID, f TradeFilter, p api.PageParams) ([]TradeRow, int64, error)
}

// Clock gives the time commands carry; the engine never reads a clock itself.
type Clock func() time.Time
