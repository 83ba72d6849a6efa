package trading

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

type tradeBody struct {
	ID        string `json:"id"`
	OrderID   string `json:"order_id"`
	Symbol    string `json:"symbol"`
	Side      string `json:"side"`
	Quantity  string `json:"quantity"`
	Price     string `json:"price"`
	Liquidity string `json:"liquidity"`
	CreatedAt string `json:"created_at"`
}

func (h *Handlers) listTrades(ctx *fasthttp.RequestCtx) {
	p, ex, ok := h.exchange(ctx)
	if !ok {
		return
	}
	page, perr := api.Paging(ctx, "limit", 20, 100)
	var v api.Validator
	args := ctx.QueryArgs()
	f := TradeFilter{Symbol: string(args.Peek("symbol"))}
	if f.Symbol != "" {
		if _, ok := ex.Pair(f.Symbol); !ok {
			v.Add("symbol", "must be one of "+symbolList(ex))
		}
	}
	if raw := args.Peek("order_id"); len(raw) > 0 {
		id, err := uuid.Parse(string(raw))
		v.Check(err == nil, "order_id", "must be a UUID")
		f.OrderID = id
	}
	from, to := api.TimeRange(ctx, &v)
	if from != nil {
		f.From = *from
	}
	if to != nil {
		f.To = *to
	}
	if perr != nil || !v.Ok() {
		api.Fail(ctx, mergeValidation(joinErrs(perr, v.Err())))
		return
	}
	c, err := h.settled(ctx, p, ex, api.NewError(api.CodeEngineUnavailable, "trade history is not available"))
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	rows, total, err := h.history.ListTrades(c, p.Environment, p.MerchantID, f, page)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	out := make([]tradeBody, 0, len(rows))
	for _, r := range rows {
		pair, _ := ex.Pair(r.Symbol)
		out = append(out, tradeBody{
			ID: r.ID.String(), OrderID: r.OrderID.String(), Symbol: r.Symbol, Side: r.Side.String(),
			Quantity: pair.FormatQty(r.Qty), Price: pair.FormatPrice(r.Price), Liquidity: r.Liquidity,
			CreatedAt: FormatTime(r.CreatedAt),
		})
	}
	meta := page.Meta(total)
	api.Array(ctx, out, &meta)
}

func joinErrs(errs ...error) error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return joined(out)
}

type joined []error

func (j joined) Error() string   { return "validation failed" }
func (j joined) Unwrap() []error { return j }
