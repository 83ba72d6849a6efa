package trading

import (
	"svc/gateway/api"
	o "svc/gateway/openapi"
)

var orderSchema = o.Named("Order", o.Obj(map[string]o.Schema{
	"id":              o.UUID("order id (UUIDv7)"),
	"client_order_id": o.Nullable(o.Str("your own id, up to 64 bytes of UTF-8")),
	"symbol":          o.Enum("USDT-NGN", "USDC-NGN", "USD-NGN"),
	"side":            o.Enum("buy", "sell"),
	"type":            o.Enum("limit", "market"),
	"time_in_force":   o.Enum("GTC", "IOC", "FOK"),
	"post_only":       o.Bool(""),
	"quantity":        o.Decimal("ordered base quantity"),
	"quote_quantity":  o.Decimal("market buy by amount: the quote amount"),
	"filled_quantity": o.Decimal("base quantity filled so far"),
	"price":           o.Nullable(o.Decimal("limit price; null for market orders")),
	"status":          o.Enum("OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED"),
	"cancel_reason":   o.Nullable(o.Enum("USER", "IOC_REMAINDER", "FOK_UNFILLABLE", "SELF_TRADE_PREVENTION", "INSUFFICIENT_FUNDS", "COUNTDOWN", "DISCONNECT")),
	"created_at":      o.Time(""),
	"metadata":        o.Metadata(),
}, "id", "symbol", "side", "type", "quantity", "filled_quantity", "price", "status", "created_at", "metadata"))

var tradeSchema = o.Named("Trade", o.Obj(map[string]o.Schema{
	"id":         o.UUID(""),
	"order_id":   o.UUID("your order that filled"),
	"symbol":     o.Str(""),
	"side":       o.Enum("buy", "sell"),
	"quantity":   o.Decimal("this fill"),
	"price":      o.Decimal("execution price (the resting order's)"),
	"liquidity":  o.Enum("maker", "taker"),
	"created_at": o.Time(""),
}))

var balanceSchema = o.Named("TradingBalance", o.Obj(map[string]o.Schema{
	"asset": o.Enum("NGN", "USDT", "USDC", "USD"), "available": o.Decimal(""), "locked": o.Decimal("held by open orders"), "total": o.Decimal("available + locked"),
}))

var pageMeta = o.Obj(map[string]o.Schema{"total": o.Int(""), "page": o.Int(""), "limit": o.Int(""), "total_pages": o.Int("")})

const amendDescription = "Changes a resting limit order in place (same id, client_order_id and fills). quantity is the new total quantity, " +
	"filled included; price the new limit price; send either or both. The same price with a smaller quantity keeps the order's place in " +
	"the queue; a new price or a larger quantity puts it at the back of the queue at that price, and a new price that crosses the book " +
	"trades at once (self-trade prevention as placed; a post-only order that would trade is refused with 400 and left as it was). " +
	"A quantity at or below the filled quantity cancels the rest. The lock on your balance follows (422 INSUFFICIENT_BALANCE if a larger " +
	"order needs more than is available; nothing changes). Answered only after the amend is durable in the journal. FILLED or CANCELLED " +
	"orders cannot be amended (422 INVALID_STATE)."

var amendBody = o.Obj(map[string]o.Schema{
	"quantity": o.Decimal("new total quantity (filled included); step 0.01"),
	"price":    o.Decimal("new limit price; tick 0.01 NGN"),
})

var amendErrors = []string{"VALIDATION_ERROR", "INVALID_JSON", "NOT_FOUND", "INVALID_STATE", "INSUFFICIENT_BALANCE", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}

// Docs documents the trading routes.
func (h *Handlers) Docs() []o.Op {
	paging := []o.Param{{Name: "page", Schema: o.Int("1-indexed, default 1")}, {Name: "limit", Schema: o.Int("default 20, at most 100")}}
	return []o.Op{
		{Method: "POST", Path: "/v1/trading/orders", Tag: "trading", Summary: "Place an order",
			Description: "Answered 201 only after the order's events are durable in the journal. A limit buy locks price x quantity of the quote asset, a sell locks the quantity of the base asset. " +
				"Safe to retry: client_order_id is unique per account among its open orders and its recently closed ones (the last 4,096 closed on the symbol). " +
				"A retry with the same client_order_id and the same order answers 200 with the existing order (current state) and header Idempotent-Replayed: true; " +
				"with a different order it is 409 CLIENT_ORDER_ID_IN_USE and nothing is placed. " +
				"X-Idempotency-Key (up to 64 bytes) is honoured: it becomes the order's client_order_id (a body naming another client_order_id is a 400), " +
				"and a key reused for a different order is 422 IDEMPOTENCY_KEY_REUSED. " +
				"metadata is kept with the order in the journal (at most 32 KiB of JSON on an order, beyond the limits every object has), returned on it and " +
				"on its ORDER_ACCEPTED message; it cannot be changed after placement, and a retry must carry the same metadata to be the same order.",
			Idempotent: true,
			Body: o.Obj(map[string]o.Schema{
				"symbol":                o.Enum("USDT-NGN", "USDC-NGN", "USD-NGN"),
				"side":                  o.Enum("buy", "sell"),
				"type":                  o.Enum("limit", "market"),
				"quantity":              o.Decimal("base quantity; step 0.01, at least 1"),
				"price":                 o.Decimal("required for limit orders; tick 0.01 NGN; price x quantity at least 1,000 NGN"),
				"quote_quantity":        o.Decimal("market buy by quote amount instead of quantity (extension)"),
				"time_in_force":         o.Enum("GTC", "IOC", "FOK"),
				"post_only":             o.Bool("limit only: rejected if it would trade at once"),
				"client_order_id":       o.Str("up to 64 bytes of UTF-8"),
				"self_trade_prevention": o.Enum("cancel_resting", "cancel_taker", "cancel_both"),
				"metadata":              o.Metadata(),
			}, "symbol", "side", "type"),
			Responses: map[int]o.Response{201: {Description: "the order", Data: orderSchema},
				200: {Description: "a retry of an order already placed (Idempotent-Replayed: true): that order, in its current state", Data: orderSchema}},
			Errors: []string{"VALIDATION_ERROR", "INVALID_JSON", "INSUFFICIENT_BALANCE", "CLIENT_ORDER_ID_IN_USE", "IDEMPOTENCY_KEY_REUSED", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/trading/orders", Tag: "trading", Summary: "List your orders",
			Query:     append([]o.Param{{Name: "symbol"}, {Name: "status", Schema: o.Enum("OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED")}, {Name: "side", Schema: o.Enum("buy", "sell")}, o.MetadataFilter()}, paging...),
			Responses: map[int]o.Response{200: {Description: "a page of orders", Data: o.Obj(map[string]o.Schema{"items": o.Arr(orderSchema), "meta": pageMeta})}},
			Errors:    []string{"VALIDATION_ERROR", "ENGINE_UNAVAILABLE"}},
		{Method: "DELETE", Path: "/v1/trading/orders", Tag: "trading", Summary: "Cancel all your open orders on a symbol",
			Query:     []o.Param{{Name: "symbol", Required: true}},
			Responses: map[int]o.Response{200: {Description: "how many were cancelled", Data: o.Obj(map[string]o.Schema{"symbol": o.Str(""), "cancelled": o.Int("")})}},
			Errors:    []string{"VALIDATION_ERROR", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/trading/orders/{id}", Tag: "trading", Summary: "Get an order",
			Responses: map[int]o.Response{200: {Description: "the order", Data: orderSchema}}, Errors: []string{"NOT_FOUND", "ENGINE_UNAVAILABLE"}},
		{Method: "DELETE", Path: "/v1/trading/orders/{id}", Tag: "trading", Summary: "Cancel an order",
			Description: "OPEN or PARTIALLY_FILLED -> CANCELLED, releasing what it locked. FILLED or CANCELLED -> 422 ORDER_NOT_CANCELLABLE.",
			Responses:   map[int]o.Response{200: {Description: "the cancelled order", Data: orderSchema}},
			Errors:      []string{"NOT_FOUND", "ORDER_NOT_CANCELLABLE", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}},
		{Method: "PATCH", Path: "/v1/trading/orders/{id}", Tag: "trading", Summary: "Amend an order (quantity and/or price)",
			Description: amendDescription,
			Body:        amendBody,
			Responses:   map[int]o.Response{200: {Description: "the order as the amend left it", Data: orderSchema}},
			Errors:      amendErrors},
		{Method: "PATCH", Path: "/v1/trading/orders/by-client-id/{client_order_id}", Tag: "trading", Summary: "Amend an order by your client order id",
			Description: amendDescription,
			Body:        amendBody,
			Responses:   map[int]o.Response{200: {Description: "the order as the amend left it", Data: orderSchema}},
			Errors:      amendErrors},
		{Method: "POST", Path: "/v1/trading/orders/countdown-cancel-all", Tag: "trading", Summary: "Dead-man switch: cancel all your orders on a symbol unless renewed",
			Description: "Arms (or renews) a countdown: unless this route is called again within countdown_ms, every open order of yours on the symbol " +
				"is cancelled (cancel_reason COUNTDOWN). 0 turns it off. The countdown is kept in the engine's journal, so it survives a restart of the " +
				"gateway or the engine; it fires within about 100 ms after its deadline. One countdown per symbol and environment.",
			Body: o.Obj(map[string]o.Schema{
				"symbol":       o.Enum("USDT-NGN", "USDC-NGN", "USD-NGN"),
				"countdown_ms": o.Int("0 (off) or 1000 to 86400000"),
			}, "symbol", "countdown_ms"),
			Responses: map[int]o.Response{200: {Description: "the countdown", Data: o.Obj(map[string]o.Schema{
				"symbol": o.Str(""), "countdown_ms": o.Int(""), "cancel_at": o.Nullable(o.Time("when the orders are cancelled unless renewed; null when off"))})}},
			Errors: []string{"VALIDATION_ERROR", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/trading/orders/by-client-id/{client_order_id}", Tag: "trading", Summary: "Get an order by your client order id",
			Description: "The open or recently closed order holding the id in the engine, else the newest order with that id in the history. Use it after a POST whose answer was lost.",
			Responses:   map[int]o.Response{200: {Description: "the order", Data: orderSchema}}, Errors: []string{"NOT_FOUND", "SERVICE_UNAVAILABLE", "ENGINE_UNAVAILABLE"}},
		{Method: "DELETE", Path: "/v1/trading/orders/by-client-id/{client_order_id}", Tag: "trading", Summary: "Cancel an order by your client order id",
			Description: "Cancels the open order holding the client order id. FILLED or CANCELLED -> 422 ORDER_NOT_CANCELLABLE; none -> 404.",
			Responses:   map[int]o.Response{200: {Description: "the cancelled order", Data: orderSchema}},
			Errors:      []string{"NOT_FOUND", "ORDER_NOT_CANCELLABLE", "ENGINE_BUSY", "ENGINE_UNAVAILABLE"}},
		{Method: "GET", Path: "/v1/trading/trades", Tag: "trading", Summary: "List your trades",
			Query: append([]o.Param{{Name: "symbol"}, {Name: "order_id", Schema: o.UUID("")},
				{Name: "from", Description: "inclusive: " + api.TimeDoc}, {Name: "to", Description: "exclusive: " + api.TimeDoc}}, paging...),
			Responses: map[int]o.Response{200: {Description: "data is the array of trades; paging in the top-level meta", Data: o.Arr(tradeSchema)}},
			Errors:    []string{"VALIDATION_ERROR"}},
		{Method: "GET", Path: "/v1/trading/balances", Tag: "trading", Summary: "Your trading balances",
			Responses: map[int]o.Response{200: {Description: "one entry per asset", Data: o.Arr(balanceSchema)}}, Errors: []string{"ENGINE_UNAVAILABLE"}},
		{Method: "POST", Path: "/v1/trading/sandbox/fund", Tag: "trading", Summary: "Add test funds to your sandbox trading balance (test keys only)",
			Body:      o.Obj(map[string]o.Schema{"asset": o.Enum("NGN", "USDT", "USDC", "USD"), "amount": o.Decimal("")}, "asset", "amount"),
			Responses: map[int]o.Response{201: {Description: "the credit and the new balance", Data: o.Obj(map[string]o.Schema{"transfer_id": o.UUID(""), "asset": o.Str(""), "amount": o.Decimal(""), "balance": balanceSchema, "created_at": o.Time("")})}},
			Errors:    []string{"VALIDATION_ERROR", "SANDBOX_ONLY", "ENGINE_UNAVAILABLE"}},
	}
}
