package trading

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/persistence/projection"
)

// Projections is the History backed by the PostgreSQL projection of each environment.
type Projections struct {
	Store      *projection.Store
	Projectors map[api.Environment]*projection.Projector
}

var _ History = Projections{}

// WaitFor waits for env's projector.
func (p Projections) WaitFor(ctx context.Context, env api.Environment, offset uint64) error {
	pr := p.Projectors[env]
	if pr == nil {
		return fmt.Errorf("no projector for %s", env)
	}
	return pr.WaitFor(ctx, offset)
}

// GetOrder reads one order.
func (p Projections) GetOrder(ctx context.Context, env api.Environment, acct, id uuid.UUID) (OrderRow, bool, error) {
	o, ok, err := p.Store.GetOrder(ctx, string(env), acct, id)
	return OrderRow{View: o.View, UpdatedAt: o.UpdatedAt}, ok, err
}

// GetOrderByClientID reads the newest order with a client order id.
func (p Projections) GetOrderByClientID(ctx context.Context, env api.Environment, acct uuid.UUID, clientID string) (OrderRow, bool, error) {
	o, ok, err := p.Store.GetOrderByClientID(ctx, string(env), acct, clientID)
	return OrderRow{View: o.View, UpdatedAt: o.UpdatedAt}, ok, err
}

// ListOrders reads a page of orders.
func (p Projections) ListOrders(ctx context.Context, env api.Environment, acct uuid.UUID, f OrderFilter, pg api.PageParams) ([]OrderRow, int64, error) {
	rows, total, err := p.Store.ListOrders(ctx, string(env), acct, projection.OrderFilter{Symbol: f.Symbol, Status: f.Status, Side: f.Side, Metadata: f.Metadata}, pg.Limit, pg.Offset())
	out := make([]OrderRow, len(rows))
	for i, r := range rows {
		out[i] = OrderRow{View: r.View, UpdatedAt: r.UpdatedAt}
	}
	return out, total, err
}

// ListTrades reads a page of trades.
func (p Projections) ListTrades(ctx context.Context, env api.Environment, acct uuid.UUID, f TradeFilter, pg api.PageParams) ([]TradeRow, int64, error) {
	rows, total, err := p.Store.ListTrades(ctx, string(env), acct, projection.TradeFilter{Symbol: f.Symbol, OrderID: f.OrderID, From: f.From, To: f.To}, pg.Limit, pg.Offset())
	out := make([]TradeRow, len(rows))
	for i, r := range rows {
		out[i] = TradeRow{ID: r.ID, OrderID: r.OrderID, Symbol: r.Symbol, Side: r.Side, Price: r.Price, Qty: r.Qty, Liquidity: r.Liquidity, CreatedAt: r.CreatedAt}
	}
	return out, total, err
}
