package trading

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

type placeOrderRequest struct {
	Symbol              string  `json:"symbol"`
	Side                string  `json:"side"`
	Type                string  `json:"type"`
	Quantity            *string `json:"quantity"`
	Price               *string `json:"price"`
	QuoteQuantity       *string `json:"quote_quantity"`
	TimeInForce         string  `json:"time_in_force"`
	PostOnly            bool    `json:"post_only"`
	ClientOrderID       string  `json:"client_order_id"`
	SelfTradePrevention string  `json:"self_trade_prevention"`
	// Metadata is never on the fast path (decode.go): a body with it goes to api.Decode.
	Metadata json.RawMessage `json:"metadata"`
}

// toCommand validates the request field by field and builds the engine command; every
// mistake is reported at once as a field error.
func (req *placeOrderRequest) toCommand(ex Exchange, cmd *engine.Command) error {
	var v api.Validator
	pair, ok := ex.Pair(req.Symbol)
	if req.Symbol == "" {
		v.Add("symbol", "is required")
	} else if !ok {
		v.Add("symbol", "must be one of "+symbolList(ex))
	}
	switch req.Side {
	case "buy":
		cmd.Side = engine.Buy
	case "sell":
		cmd.Side = engine.Sell
	case "":
		v.Add("side", "is required")
	default:
		v.Add("side", "must be buy or sell")
	}
	switch req.Type {
	case "limit":
		cmd.Type = engine.Limit
	case "market":
		cmd.Type = engine.Market
	case "":
		v.Add("type", "is required")
	default:
		v.Add("type", "must be limit or market")
	}
	switch strings.ToUpper(req.TimeInForce) {
	case "", "GTC":
		cmd.TIF = engine.GTC
	case "IOC":
		cmd.TIF = engine.IOC
	case "FOK":
		cmd.TIF = engine.FOK
	default:
		v.Add("time_in_force", "must be GTC, IOC or FOK")
	}
	switch strings.ToLower(req.SelfTradePrevention) {
	case "", "cancel_resting":
		cmd.STP = engine.STPCancelResting
	case "cancel_taker":
		cmd.STP = engine.STPCancelTaker
	case "cancel_both":
		cmd.STP = engine.STPCancelBoth
	default:
		v.Add("self_trade_prevention", "must be cancel_resting, cancel_taker or cancel_both")
	}
	// Bytes, not characters: the path and X-Idempotency-Key are measured in bytes too, so
	// every id the body accepts can be looked up and cancelled by client order id.
	v.Check(len(req.ClientOrderID) <= maxClientOrderID, "client_order_id", "must be at most 64 bytes (UTF-8)")
	cmd.ClientOrderID = req.ClientOrderID
	cmd.PostOnly = req.PostOnly
	if req.Metadata != nil {
		cmd.Metadata = orderMetadata(&v, req.Metadata)
	}
	if !ok {
		return v.Err()
	}
	cmd.Symbol = pair.Symbol

	if cmd.Type == engine.Market {
		if req.PostOnly {
			v.Add("post_only", "is only allowed on limit orders")
		}
		if req.QuoteQuantity != nil {
			if cmd.Side != engine.Buy {
				v.Add("quote_quantity", "is only allowed on market buy orders")
			}
			if req.Quantity != nil {
				v.Add("quantity", "must not be sent with quote_quantity")
			}
			amt, err := engine.ParseAmount(pair.Quote, *req.QuoteQuantity)
			if err != nil {
				v.Add("quote_quantity", decimalMessage(err, pair.Quote.DisplayDecimals()))
			} else if amt < pair.MinNotional {
				v.Add("quote_quantity", "must be at least "+engine.FormatAmount(pair.Quote, pair.MinNotional)+" "+pair.Quote.String())
			}
			cmd.QuoteQty = amt
			return v.Err()
		}
	}
	if req.Quantity == nil {
		v.Add("quantity", "is required")
	} else if q, err := pair.ParseQty(*req.Quantity); err != nil {
		v.Add("quantity", decimalMessage(err, pair.QtyDecimals))
	} else if q < pair.MinQty {
		v.Add("quantity", "must be at least "+pair.FormatQty(pair.MinQty))
	} else {
		cmd.Qty = q
	}
	if cmd.Type == engine.Limit {
		if req.Price == nil {
			v.Add("price", "is required for limit orders")
		} else if p, err := pair.ParsePrice(*req.Price); err != nil {
			v.Add("price", decimalMessage(err, pair.PriceDecimals))
		} else {
			cmd.Price = p
			if cmd.Qty > 0 {
				notional, ok := notional(pair, p, cmd.Qty)
				if !ok {
					v.Add("quantity", "price x quantity is too large")
				} else if notional < pair.MinNotional {
					v.Add("quantity", "price x quantity must be at least "+engine.FormatAmount(pair.Quote, pair.MinNotional)+" "+pair.Quote.String())
				}
			}
		}
	}
	return v.Err()
}

// orderMetadata checks an order's metadata with payments/metadata (the limits every object
// has) and returns what the engine carries: the object as encoding/json writes it (compact,
// keys sorted; the history gives it back in the same form), "" for none or {}. The engine
// journals it with the order, so it is also held to engine.MaxMetadata bytes.
func orderMetadata(v *api.Validator, raw json.RawMessage) string {
	md, present := v.Metadata(raw, false)
	if !present || len(md) == 0 {
		return ""
	}
	b, _ := json.Marshal(md)
	if len(b) > engine.MaxMetadata {
		v.Add("metadata", "must be at most "+itoa(engine.MaxMetadata)+" bytes as JSON (UTF-8) on an order")
		return ""
	}
	return string(b)
}

// notional is price x qty in quote units, or false on overflow. The engine checks it again;
// this is only for the field error.
func notional(pair engine.PairConfig, p engine.Price, q engine.Qty) (int64, bool) {
	a, b := int64(p), int64(q)
	if a != 0 && b > (1<<62)/a {
		return 0, false
	}
	n := a * b
	// price units x lots are 10^-(PriceDecimals+QtyDecimals) quote; scale to quote units.
	for i := pair.PriceDecimals + pair.QtyDecimals; i < pair.Quote.Decimals(); i++ {
		if n > (1<<62)/10 {
			return 0, false
		}
		n *= 10
	}
	return n, true
}

func decimalMessage(err error, decimals int) string {
	var de *engine.DecimalError
	if !errors.As(err, &de) {
		return "must be a positive decimal string"
	}
	switch de.Reason {
	case engine.ReasonEmpty:
		return "is required"
	case engine.ReasonTooManyDecimals:
		return "must have at most " + itoa(decimals) + " decimal places"
	case engine.ReasonZero, engine.ReasonNegative:
		return "must be greater than 0"
	case engine.ReasonExponent:
		return "must be a plain decimal string (no exponent)"
	case engine.ReasonOverflow:
		return "is too large"
	case engine.ReasonNotOnTick:
		return "must be a multiple of the tick size"
	case engine.ReasonNotOnStep:
		return "must be a multiple of the step size"
	}
	return "must be a positive decimal string"
}

func symbolList(ex Exchange) string {
	var names []string
	for _, p := range ex.Pairs() {
		names = append(names, p.Symbol)
	}
	return strings.Join(names, ", ")
}

func (h *Handlers) placeOrder(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	var req placeOrderRequest
	if err := decodePlaceOrder(ctx, &req); err != nil {
		api.Fail(ctx, err)
		return
	}
	cmd := engine.Command{Kind: engine.CmdPlace, Account: engine.AccountID(p.MerchantID), Time: h.now().UnixNano()}
	err := req.toCommand(ex, &cmd)
	keyed, kerr := idempotencyKey(ctx, &cmd)
	if err != nil || kerr != nil {
		api.Fail(ctx, mergeValidation(joinErrs(err, kerr)))
		return
	}
	cmd.OrderID = engine.OrderID(uuid.Must(uuid.NewV7()))
	if h.placeDeferred(ctx, p, ex, &cmd, keyed) {
		return
	}
	res, err := h.submit(ctx, ex, &cmd)
	h.placed(ctx, p, ex, &cmd, res, err, keyed)
}

// placed writes the answer to a placement the engine completed with res, err.
func (h *Handlers) placed(ctx *fasthttp.RequestCtx, p api.Principal, ex Exchange, cmd *engine.Command, res engine.Result, err error, keyed bool) {
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	if res.Code == engine.RejectDuplicateClientOrderID {
		h.replay(ctx, p, ex, cmd, res, keyed)
		return
	}
	if err := resultError(res.Code); err != nil {
		api.Fail(ctx, err)
		return
	}
	// The answer is built from the command and its result, not read back: under heavy load
	// the engine may already have forgotten a closed order by the time we would look.
	api.Created(ctx, orderJSON(ex, placedView(cmd, res)))
}

// HeaderIdempotencyKey is the payments routes' idempotency header; on POST
// /v1/trading/orders it is the order's client order id (see idempotencyKey).
const HeaderIdempotencyKey = "X-Idempotency-Key"

// headerReplayed marks an answer that repeats an earlier one instead of acting again.
const headerReplayed = "Idempotent-Replayed"

// idempotencyKey maps X-Idempotency-Key into the engine's client order id space: the key
// becomes the order's client_order_id, so it is journaled with the order and survives a
// restart without a PostgreSQL round trip. A body that also names a client_order_id must
// name the same one. It reports whether the key was given.
func idempotencyKey(ctx *fasthttp.RequestCtx, cmd *engine.Command) (bool, error) {
	key := ctx.Request.Header.Peek(HeaderIdempotencyKey)
	if len(key) == 0 {
		return false, nil
	}
	switch {
	case len(key) > maxClientOrderID:
		return true, api.Invalid(HeaderIdempotencyKey, "must be at most 64 bytes (it becomes the order's client_order_id)")
	case cmd.ClientOrderID == "":
		cmd.ClientOrderID = string(key)
	case cmd.ClientOrderID != string(key):
		return true, api.Invalid("client_order_id", "must equal X-Idempotency-Key when both are sent")
	}
	return true, nil
}

// replay answers a place whose client order id an order of the account already holds:
// the same order again (200, Idempotent-Replayed: true) when the request describes it,
// else 409 CLIENT_ORDER_ID_IN_USE (422 IDEMPOTENCY_KEY_REUSED when the id came from
// X-Idempotency-Key, as on the payments routes). Nothing was placed.
func (h *Handlers) replay(ctx *fasthttp.RequestCtx, p api.Principal, ex Exchange, cmd *engine.Command, res engine.Result, keyed bool) {
	view, ok, err := orderOf(ctx, ex, cmd.Account, res.OrderID)
	if !ok && err == nil {
		view, ok, _ = orderByClientIDOf(ctx, ex, cmd.Account, cmd.ClientOrderID)
	}
	if !ok { // closed and forgotten since the engine answered: the history has it
		row, err := h.orderFromHistory(ctx, p, ex, uuid.UUID(res.OrderID))
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		view = row.View
	}
	if !samePlacement(cmd, &view) {
		id := uuid.UUID(view.ID).String()
		if keyed {
			api.Fail(ctx, api.NewError(api.CodeIdempotencyKeyReused, "this X-Idempotency-Key was used for another order ("+id+"); nothing was placed"))
		} else {
			api.Fail(ctx, api.NewError(api.CodeClientOrderIDInUse, "client_order_id is held by order "+id+", placed with a different request; nothing was placed"))
		}
		return
	}
	ctx.Response.Header.Set(headerReplayed, "true")
	api.OK(ctx, orderJSON(ex, view))
}

// samePlacement reports whether the place command asks for the order v is: same symbol,
// side, type, time in force, post-only, metadata, price and quantity (or quote amount), compared
// in engine units, so "10" and "10.00" are the same request. Self-trade prevention is
// not kept on the order and is not compared.
func samePlacement(cmd *engine.Command, v *engine.OrderView) bool {
	if cmd.Symbol != v.Symbol || cmd.Side != v.Side || cmd.Type != v.Type || cmd.TIF != v.TIF || cmd.PostOnly != v.PostOnly ||
		cmd.Metadata != v.Metadata {
		return false
	}
	if cmd.Type == engine.Limit && cmd.Price != v.Price {
		return false
	}
	if cmd.QuoteQty > 0 || v.QuoteQty > 0 {
		return cmd.QuoteQty == v.QuoteQty
	}
	return cmd.Qty == v.Qty
}

// placedView is the order as the place command left it.
func placedView(cmd *engine.Command, res engine.Result) engine.OrderView {
	v := engine.OrderView{
		ID: cmd.OrderID, ClientOrderID: cmd.ClientOrderID, Account: cmd.Account, Symbol: cmd.Symbol,
		Side: cmd.Side, Type: cmd.Type, TIF: cmd.TIF, PostOnly: cmd.PostOnly, Price: cmd.Price,
		Qty: cmd.Qty, QuoteQty: cmd.QuoteQty, Filled: res.Filled, State: res.State, Reason: res.Reason, Time: cmd.Time,
		Metadata: cmd.Metadata,
	}
	if cmd.Type == engine.Market {
		v.Price = 0
		if cmd.QuoteQty > 0 { // bought by amount: the quantity is what it got
			v.Qty = res.Filled
		}
	}
	return v
}

func (h *Handlers) getOrder(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	id, ok := orderIDParam(ctx)
	if !ok {
		return
	}
	if view, ok, err := orderOf(ctx, ex, engine.AccountID(p.MerchantID), engine.OrderID(id)); err != nil || ok {
		answerOrder(ctx, ex, view, err)
		return
	}
	row, err := h.orderFromHistory(ctx, p, ex, id)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, orderJSON(ex, row.View))
}

// maxClientOrderID is the longest client_order_id (or X-Idempotency-Key) the gateway
// accepts, in bytes of UTF-8 (the engine's own limit is larger: see engine/clientid.go).
const maxClientOrderID = 64

// clientIDParam returns the {client_order_id} path parameter; for an empty or too long
// one it answers 404 (no order can hold it) and ok is false.
func clientIDParam(ctx *fasthttp.RequestCtx) (string, bool) {
	// The router matches the raw path, so its parameters are still percent-encoded: an id
	// like "bot 7" or "₦1" arrives as "bot%207" / "%E2%82%A61".
	cid, err := url.PathUnescape(pathParam(ctx, "client_order_id"))
	if err != nil || cid == "" || len(cid) > maxClientOrderID {
		api.Fail(ctx, api.NewError(api.CodeNotFound, "order not found"))
		return "", false
	}
	return cid, true
}

// orderIDParam reads the {id} of an order route; one that is not a UUID is an order that
// does not exist (404), as for any other unknown id.
func orderIDParam(ctx *fasthttp.RequestCtx) (uuid.UUID, bool) {
	id, err := uuid.Parse(pathParam(ctx, "id"))
	if err != nil {
		api.Fail(ctx, api.NewError(api.CodeNotFound, "order not found"))
		return uuid.UUID{}, false
	}
	return id, true
}

// getOrderByClientID answers GET /v1/trading/orders/by-client-id/{client_order_id}: the
// engine's order holding that id, else the newest such order in the history.
func (h *Handlers) getOrderByClientID(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	cid, ok := clientIDParam(ctx)
	if !ok {
		return
	}
	if view, ok, err := orderByClientIDOf(ctx, ex, engine.AccountID(p.MerchantID), cid); err != nil || ok {
		answerOrder(ctx, ex, view, err)
		return
	}
	row, err := h.orderByClientIDFromHistory(ctx, p, ex, cid)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, orderJSON(ex, row.View))
}

func (h *Handlers) orderFromHistory(rc *fasthttp.RequestCtx, p api.Principal, ex Exchange, id uuid.UUID) (OrderRow, error) {
	return h.historyOrder(rc, p, ex, func(c context.Context) (OrderRow, bool, error) {
		return h.history.GetOrder(c, p.Environment, p.MerchantID, id)
	})
}

func (h *Handlers) orderByClientIDFromHistory(rc *fasthttp.RequestCtx, p api.Principal, ex Exchange, cid string) (OrderRow, error) {
	return h.historyOrder(rc, p, ex, func(c context.Context) (OrderRow, bool, error) {
		return h.history.GetOrderByClientID(c, p.Environment, p.MerchantID, cid)
	})
}

func (h *Handlers) historyOrder(rc *fasthttp.RequestCtx, p api.Principal, ex Exchange, get func(context.Context) (OrderRow, bool, error)) (OrderRow, error) {
	c, err := h.settled(rc, p, ex, api.NewError(api.CodeNotFound, "order not found"))
	if err != nil {
		return OrderRow{}, err
	}
	row, found, err := get(c)
	if err != nil {
		return OrderRow{}, err
	}
	if !found {
		return OrderRow{}, api.NewError(api.CodeNotFound, "order not found")
	}
	return row, nil
}

func (h *Handlers) listOrders(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	page, err := api.Paging(ctx, "limit", 20, 100)
	var v api.Validator
	f := OrderFilter{
		Symbol: string(ctx.QueryArgs().Peek("symbol")),
		Status: strings.ToUpper(string(ctx.QueryArgs().Peek("status"))),
		Side:   strings.ToLower(string(ctx.QueryArgs().Peek("side"))),
	}
	if f.Symbol != "" {
		if _, ok := ex.Pair(f.Symbol); !ok {
			v.Add("symbol", "must be one of "+symbolList(ex))
		}
	}
	if f.Status != "" {
		v.OneOf("status", f.Status, "OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED")
	}
	if f.Side != "" {
		v.OneOf("side", f.Side, "buy", "sell")
	}
	if mf := v.MetadataFilter(ctx); mf != nil {
		f.Metadata = mf.JSON()
	}
	if err != nil || !v.Ok() {
		api.Fail(ctx, mergeValidation(joinErrs(err, v.Err())))
		return
	}
	c, err := h.settled(ctx, p, ex, api.NewError(api.CodeEngineUnavailable, "order history is not available"))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	rows, total, err := h.history.ListOrders(c, p.Environment, p.MerchantID, f, page)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items := make([]orderBody, 0, len(rows))
	fresh := true
	for _, r := range rows {
		// The engine's copy is the freshest for orders it still holds; once it does not
		// answer in time, the settled history's copies stand for the rest.
		if fresh {
			view, ok, err := orderOf(ctx, ex, engine.AccountID(p.MerchantID), r.View.ID)
			if ok {
				r.View = view
			}
			fresh = err == nil
		}
		items = append(items, orderJSON(ex, r.View))
	}
	api.Page(ctx, items, page.Meta(total))
}

func (h *Handlers) cancelOrder(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	id, ok := orderIDParam(ctx)
	if !ok {
		return
	}
	cmd := engine.Command{Kind: engine.CmdCancel, Account: engine.AccountID(p.MerchantID), OrderID: engine.OrderID(id), Time: h.now().UnixNano()}
	h.cancel(ctx, p, ex, &cmd, func() (OrderRow, error) { return h.orderFromHistory(ctx, p, ex, id) })
}

// cancelOrderByClientID answers DELETE /v1/trading/orders/by-client-id/{client_order_id}.
func (h *Handlers) cancelOrderByClientID(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	cid, ok := clientIDParam(ctx)
	if !ok {
		return
	}
	// A zero OrderID with a ClientOrderID: the engine cancels the order holding that id.
	cmd := engine.Command{Kind: engine.CmdCancel, Account: engine.AccountID(p.MerchantID), ClientOrderID: cid, Time: h.now().UnixNano()}
	h.cancel(ctx, p, ex, &cmd, func() (OrderRow, error) { return h.orderByClientIDFromHistory(ctx, p, ex, cid) })
}

// cancel submits a cancel and answers with the cancelled order. lookup finds the order in
// the history when the engine no longer holds it.
func (h *Handlers) cancel(ctx *fasthttp.RequestCtx, p api.Principal, ex Exchange, cmd *engine.Command, lookup func() (OrderRow, error)) {
	res, err := h.submit(ctx, ex, cmd)
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	if res.Code == engine.RejectUnknownOrder {
		// The engine forgets old closed orders; the history knows whether it existed.
		if _, herr := lookup(); herr == nil {
			api.Fail(ctx, api.NewError(api.CodeOrderNotCancellable, "the order is already filled or cancelled"))
			return
		}
	}
	if err := resultError(res.Code); err != nil {
		api.Fail(ctx, err)
		return
	}
	id := cmd.OrderID
	if id == (engine.OrderID{}) {
		id = res.OrderID
	}
	// Forgotten already, or the engine did not answer in time: the history has it once
	// the projection catches up (settled answers 503 by the deadline otherwise).
	view, ok, _ := orderOf(ctx, ex, cmd.Account, id)
	if !ok {
		row, err := h.orderFromHistory(ctx, p, ex, uuid.UUID(id))
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		view = row.View
	}
	api.Message(ctx, orderJSON(ex, view), "order cancelled")
}

func (h *Handlers) cancelAll(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	symbol := string(ctx.QueryArgs().Peek("symbol"))
	if symbol == "" {
		api.Fail(ctx, api.Invalid("symbol", "is required"))
		return
	}
	if _, ok := ex.Pair(symbol); !ok {
		api.Fail(ctx, api.Invalid("symbol", "must be one of "+symbolList(ex)))
		return
	}
	cmd := engine.Command{Kind: engine.CmdCancelAll, Account: engine.AccountID(p.MerchantID), Symbol: symbol, Time: h.now().UnixNano()}
	res, err := h.submit(ctx, ex, &cmd)
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	if err := resultError(res.Code); err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]any{"symbol": symbol, "cancelled": res.Cancelled}, "open orders cancelled")
}

func mergeValidation(err error) error {
	var fields []api.FieldError
	var visit func(error)
	visit = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				visit(x)
			}
			return
		}
		var ae *api.Error
		if errors.As(e, &ae) {
			fields = append(fields, ae.Fields...)
		}
	}
	visit(err)
	return &api.Error{Code: api.CodeValidation, Detail: "request validation failed", Fields: fields}
}
