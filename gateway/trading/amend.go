package trading

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// amendOrderRequest is the body of PATCH /v1/trading/orders/{id}: the new total quantity
// (filled included) and/or the new limit price.
type amendOrderRequest struct {
	Quantity *string `json:"quantity"`
	Price    *string `json:"price"`
	// Metadata is refused: it is given at placement only (docs/decisions.md, issue 30), and
	// ignoring it would let a client believe it changed.
	Metadata json.RawMessage `json:"metadata"`
}

// amendOrder answers PATCH /v1/trading/orders/{id}.
func (h *Handlers) amendOrder(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	id, ok := orderIDParam(ctx)
	if !ok {
		return
	}
	acct := engine.AccountID(p.MerchantID)
	view, found, err := orderOf(ctx, ex, acct, engine.OrderID(id))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	h.amend(ctx, p, ex, engine.Command{Kind: engine.CmdAmend, Account: acct, OrderID: engine.OrderID(id)}, view, found,
		func() (OrderRow, error) { return h.orderFromHistory(ctx, p, ex, id) })
}

// amendOrderByClientID answers PATCH /v1/trading/orders/by-client-id/{client_order_id}.
func (h *Handlers) amendOrderByClientID(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	cid, ok := clientIDParam(ctx)
	if !ok {
		return
	}
	acct := engine.AccountID(p.MerchantID)
	view, found, err := orderByClientIDOf(ctx, ex, acct, cid)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	// The amend itself goes by the order id read here, so a client order id reused
	// meanwhile cannot redirect it.
	h.amend(ctx, p, ex, engine.Command{Kind: engine.CmdAmend, Account: acct, OrderID: view.ID}, view, found,
		func() (OrderRow, error) { return h.orderByClientIDFromHistory(ctx, p, ex, cid) })
}

// amend validates the body against the order's pair, submits the amend and answers with
// the order as the amend left it. lookup finds the order in the history when the engine
// no longer holds it (it is closed then: 422 INVALID_STATE; unknown: 404).
func (h *Handlers) amend(ctx *fasthttp.RequestCtx, p api.Principal, ex Exchange, cmd engine.Command, view engine.OrderView, found bool, lookup func() (OrderRow, error)) {
	var req amendOrderRequest
	if err := api.Decode(ctx, &req); err != nil {
		api.Fail(ctx, err)
		return
	}
	if !found {
		row, err := lookup()
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		api.Fail(ctx, notAmendable(row.View.State))
		return
	}
	pair, _ := ex.Pair(view.Symbol)
	if err := req.apply(pair, &cmd); err != nil {
		api.Fail(ctx, err)
		return
	}
	cmd.Time = h.now().UnixNano()
	res, err := h.submit(ctx, ex, &cmd)
	if err != nil {
		api.Fail(ctx, engineError(err))
		return
	}
	switch res.Code {
	case engine.OK:
	case engine.RejectNotCancellable:
		api.Fail(ctx, notAmendable(res.State))
		return
	case engine.RejectInvalidQuantity:
		api.Fail(ctx, api.Invalid("quantity", "must be at most the pair's maximum quantity"))
		return
	case engine.RejectBelowMinQty:
		api.Fail(ctx, api.Invalid("quantity", "must be at least "+pair.FormatQty(pair.MinQty)+" (or at most the filled quantity, which cancels the rest)"))
		return
	case engine.RejectBelowMinNotional:
		api.Fail(ctx, api.Invalid("quantity", "price x quantity must be at least "+engine.FormatAmount(pair.Quote, pair.MinNotional)+" "+pair.Quote.String()))
		return
	case engine.RejectPostOnlyWouldTake:
		api.Fail(ctx, api.Invalid("price", "the order is post-only and would trade immediately at this price, so the amend was rejected"))
		return
	default:
		api.Fail(ctx, resultError(res.Code))
		return
	}
	// Closed and forgotten already, or the engine did not answer in time: the history has
	// it once the projection catches up (settled answers 503 by the deadline otherwise).
	after, ok, _ := orderOf(ctx, ex, cmd.Account, cmd.OrderID)
	if !ok {
		row, err := h.orderFromHistory(ctx, p, ex, uuid.UUID(cmd.OrderID))
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		after = row.View
	}
	api.OK(ctx, orderJSON(ex, after))
}

// apply validates the amend body for pair into cmd: at least one field, decimals on the
// pair's tick and step. Limits that depend on the order (minimum quantity above what is
// filled, notional) are the engine's.
func (req *amendOrderRequest) apply(pair engine.PairConfig, cmd *engine.Command) error {
	var v api.Validator
	if req.Metadata != nil && string(req.Metadata) != "null" {
		v.Add("metadata", "cannot be changed after placement (an amend changes quantity and price)")
	}
	if req.Quantity == nil && req.Price == nil {
		v.Add("quantity", "quantity or price is required")
	}
	if req.Quantity != nil {
		if q, err := amendQty(pair, *req.Quantity); err != nil {
			v.Add("quantity", decimalMessage(err, pair.QtyDecimals))
		} else {
			cmd.Qty = q
		}
	}
	if req.Price != nil {
		if pr, err := pair.ParsePrice(*req.Price); err != nil {
			v.Add("price", decimalMessage(err, pair.PriceDecimals))
		} else {
			cmd.Price = pr
		}
	}
	return v.Err()
}

func notAmendable(s engine.OrderState) error {
	return api.NewError(api.CodeInvalidState, "the order is "+s.String()+"; only an OPEN or PARTIALLY_FILLED limit order resting in the book can be amended")
}

// amendQty parses an amend's quantity like PairConfig.ParseQty but without the minimum:
// a quantity at or below what is filled cancels the rest (the engine checks the minimum
// otherwise).
func amendQty(pair engine.PairConfig, s string) (engine.Qty, error) {
	v, err := engine.ParseDecimal(s, pair.QtyDecimals)
	switch {
	case err != nil:
		return 0, err
	case v%int64(pair.StepSize) != 0:
		return 0, &engine.DecimalError{Reason: engine.ReasonNotOnStep, Decimals: pair.QtyDecimals}
	case pair.MaxQty > 0 && v > int64(pair.MaxQty):
		return 0, &engine.DecimalError{Reason: engine.ReasonOverflow, Decimals: pair.QtyDecimals}
	}
	return engine.Qty(v), nil
}
