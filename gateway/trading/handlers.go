package trading

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// Handlers serves the trading routes.
type Handlers struct {
	exchanges map[api.Environment]Exchange
	history   History
	now       Clock

	// Pools of the order path's per-command objects (submit.go, deferred.go), the
	// handlers' own rather than package state.
	waits    sync.Pool // *boundedWait; never given back once abandoned
	placings sync.Pool // *placing
	bufs     sync.Pool // *[]byte: a deferred placement's answer
}

// New returns the trading handlers over one exchange per environment. history may be nil
// (lists then answer 503); clock nil means time.Now.
func New(exchanges map[api.Environment]Exchange, history History, clock Clock) *Handlers {
	if clock == nil {
		clock = time.Now
	}
	h := &Handlers{exchanges: exchanges, history: history, now: clock}
	h.waits.New = func() any { return &boundedWait{ch: make(chan struct{}, 1)} }
	h.placings.New = func() any { return new(placing) }
	h.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	return h
}

// Register adds the trading routes.
func (h *Handlers) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/trading/orders", protect(h.placeOrder))
	r.GET("/v1/trading/orders", protect(h.listOrders))
	r.DELETE("/v1/trading/orders", protect(h.cancelAll))
	r.GET("/v1/trading/orders/{id}", protect(h.getOrder))
	r.DELETE("/v1/trading/orders/{id}", protect(h.cancelOrder))
	r.PATCH("/v1/trading/orders/{id}", protect(h.amendOrder))
	r.POST("/v1/trading/orders/countdown-cancel-all", protect(h.countdownCancelAll))
	r.PATCH("/v1/trading/orders/by-client-id/{client_order_id}", protect(h.amendOrderByClientID))
	r.GET("/v1/trading/orders/by-client-id/{client_order_id}", protect(h.getOrderByClientID))
	r.DELETE("/v1/trading/orders/by-client-id/{client_order_id}", protect(h.cancelOrderByClientID))
	r.GET("/v1/trading/trades", protect(h.listTrades))
	r.GET("/v1/trading/balances", protect(h.balances))
	r.POST("/v1/trading/sandbox/fund", protect(h.sandboxFund))
}

func (h *Handlers) exchange(ctx *fasthttp.RequestCtx) (api.Principal, Exchange, bool) {
	p, ok := api.RequirePrincipal(ctx, "authentication required")
	if !ok {
		return p, nil, false
	}
	ex := h.exchanges[p.Environment]
	if ex == nil {
		api.Fail(ctx, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", p.Environment))
		return p, nil, false
	}
	// A fail-stopped engine's memory holds effects a restart removes: serve nothing
	// from it (engine.Engine.Err). A remote engine's check may call it: bounded by the
	// request's deadline (less the margin for the answer) like the command itself.
	var err error
	switch f := ex.(type) {
	case interface {
		ErrContext(context.Context) error
	}:
		c, cancel := engineCtx(ctx)
		err = f.ErrContext(c)
		cancel()
	case interface{ Err() error }:
		err = f.Err()
	}
	if err != nil {
		api.Fail(ctx, engineError(err))
		return p, nil, false
	}
	return p, ex, true
}

// giveUpBy is when a wait for the engine ends for a request due by dl: a tenth of what is
// left early (at least historyMargin), which leaves time to write the answer.
func giveUpBy(dl time.Time) time.Time { return dl.Add(-max(historyMargin, time.Until(dl)/10)) }

// historyWait bounds how long a history read waits for the projection to catch up
// before answering 503 (and never past the request's own deadline).
const historyWait = 5 * time.Second

// settled waits until the projection holds every event acknowledged (to anyone) before
// the read began, so a list never misses an acknowledged order nor shows a state older
// than one already answered, and returns the request's context for the read itself.
// Without a history store it returns noHistory. A projection that does not catch up in
// time (PostgreSQL slow or down) is a prompt 503 SERVICE_UNAVAILABLE with Retry-After,
// shortly before the request's deadline at the latest; never a 500 or a hang.
func (h *Handlers) settled(rc *fasthttp.RequestCtx, p api.Principal, ex Exchange, noHistory error) (context.Context, error) {
	if h.history == nil {
		return nil, noHistory
	}
	ctx := api.Ctx(rc)
	until := time.Now().Add(historyWait)
	if d, ok := ctx.Deadline(); ok {
		// Leave some of the request's time to write the answer: a tenth of what is left,
		// at least historyMargin.
		margin := max(historyMargin, time.Until(d)/10)
		if d = d.Add(-margin); d.Before(until) {
			until = d
		}
	}
	wait, cancel := context.WithDeadline(ctx, until)
	err := h.history.WaitFor(wait, p.Environment, offsetOf(wait, ex))
	cancel()
	if err != nil {
		return nil, api.NewError(api.CodeServiceUnavailable, "order history is behind the exchange (its PostgreSQL projection is slow or unavailable); retry shortly")
	}
	return ctx, nil
}

// historyMargin is the least settled leaves of a request's deadline for the answer.
const historyMargin = 50 * time.Millisecond

// engineError maps the engine's Go errors (it could not run the command at all).
func engineError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded): // a remote engine's (enginerpc.ErrTimeout)
		return api.NewError(api.CodeServiceUnavailable, "the exchange did not answer within the request's deadline (it or the network to it is slow); retry shortly")
	case errors.Is(err, engine.ErrBusy):
		return api.NewError(api.CodeEngineBusy, "the engine is busy; retry shortly")
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, engine.ErrStopped):
		return api.NewError(api.CodeEngineUnavailable, "the engine is not accepting commands")
	}
	return err
}

// resultError maps a rejection to its API error; the engine changed nothing.
func resultError(code engine.ResultCode) error {
	switch code {
	case engine.OK, engine.AlreadyApplied:
		return nil
	case engine.RejectInsufficientFunds:
		return api.NewError(api.CodeInsufficientBalance, "insufficient available balance")
	case engine.RejectPostOnlyWouldTake:
		return api.Invalid("post_only", "the order would trade immediately, so it was rejected")
	case engine.RejectDuplicateOrderID:
		return api.NewError(api.CodeConflict, "duplicate order id")
	case engine.RejectUnknownOrder:
		return api.NewError(api.CodeNotFound, "order not found")
	case engine.RejectNotCancellable:
		return api.NewError(api.CodeOrderNotCancellable, "the order is already filled or cancelled")
	case engine.RejectUnknownSymbol:
		return api.Invalid("symbol", "unknown symbol")
	case engine.RejectInvalidPrice:
		return api.Invalid("price", "invalid price")
	case engine.RejectInvalidQuantity:
		return api.Invalid("quantity", "invalid quantity")
	case engine.RejectBelowMinQty:
		return api.Invalid("quantity", "below the minimum quantity")
	case engine.RejectBelowMinNotional:
		return api.Invalid("quantity", "price x quantity is below the minimum notional")
	case engine.RejectInvalidAsset:
		return api.Invalid("asset", "unknown asset")
	case engine.RejectInvalidAmount:
		return api.Invalid("amount", "invalid amount")
	}
	return api.Invalid("order", code.String())
}

type orderBody struct {
	ID             string  `json:"id"`
	ClientOrderID  *string `json:"client_order_id"`
	Symbol         string  `json:"symbol"`
	Side           string  `json:"side"`
	Type           string  `json:"type"`
	TimeInForce    string  `json:"time_in_force"`
	PostOnly       bool    `json:"post_only"`
	Quantity       string  `json:"quantity"`
	QuoteQuantity  *string `json:"quote_quantity,omitempty"`
	FilledQuantity string  `json:"filled_quantity"`
	Price          *string `json:"price"`
	Status         string  `json:"status"`
	CancelReason   *string `json:"cancel_reason"`
	CreatedAt      string  `json:"created_at"`
	// Metadata is the order's, as the engine carries it (compact JSON), or {}.
	Metadata json.RawMessage `json:"metadata"`
}

// AppendJSON encodes the order by hand (api.JSONAppender): placing orders is the hottest
// route. TestOrderBodyEncoding checks it against encoding/json.
func (b orderBody) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = api.AppendString(dst, b.ID)
	dst = append(dst, `,"client_order_id":`...)
	dst = api.AppendNullableString(dst, b.ClientOrderID)
	dst = append(dst, `,"symbol":`...)
	dst = api.AppendString(dst, b.Symbol)
	dst = append(dst, `,"side":`...)
	dst = api.AppendString(dst, b.Side)
	dst = append(dst, `,"type":`...)
	dst = api.AppendString(dst, b.Type)
	dst = append(dst, `,"time_in_force":`...)
	dst = api.AppendString(dst, b.TimeInForce)
	dst = append(dst, `,"post_only":`...)
	dst = strconv.AppendBool(dst, b.PostOnly)
	dst = append(dst, `,"quantity":`...)
	dst = api.AppendString(dst, b.Quantity)
	if b.QuoteQuantity != nil {
		dst = append(dst, `,"quote_quantity":`...)
		dst = api.AppendString(dst, *b.QuoteQuantity)
	}
	dst = append(dst, `,"filled_quantity":`...)
	dst = api.AppendString(dst, b.FilledQuantity)
	dst = append(dst, `,"price":`...)
	dst = api.AppendNullableString(dst, b.Price)
	dst = append(dst, `,"status":`...)
	dst = api.AppendString(dst, b.Status)
	dst = append(dst, `,"cancel_reason":`...)
	dst = api.AppendNullableString(dst, b.CancelReason)
	dst = append(dst, `,"created_at":`...)
	dst = api.AppendString(dst, b.CreatedAt)
	dst = append(dst, `,"metadata":`...)
	if b.Metadata == nil {
		dst = append(dst, "null"...) // as encoding/json; orderJSON always sets it
	}
	dst = append(dst, b.Metadata...)
	return append(dst, '}')
}

// noMetadata is the metadata of an order without any.
var noMetadata = json.RawMessage(`{}`)

func orderJSON(ex Exchange, v engine.OrderView) orderBody {
	pair, _ := ex.Pair(v.Symbol)
	b := orderBody{
		ID:             uuid.UUID(v.ID).String(),
		Symbol:         v.Symbol,
		Side:           v.Side.String(),
		Type:           v.Type.String(),
		TimeInForce:    v.TIF.String(),
		PostOnly:       v.PostOnly,
		Quantity:       pair.FormatQty(v.Qty),
		FilledQuantity: pair.FormatQty(v.Filled),
		Status:         v.State.String(),
		CreatedAt:      FormatTime(time.Unix(0, v.Time)),
		Metadata:       noMetadata,
	}
	if v.Metadata != "" {
		b.Metadata = json.RawMessage(v.Metadata)
	}
	if v.ClientOrderID != "" {
		s := v.ClientOrderID
		b.ClientOrderID = &s
	}
	if v.Type == engine.Limit {
		s := pair.FormatPrice(v.Price)
		b.Price = &s
	}
	if v.QuoteQty > 0 {
		s := engine.FormatAmount(pair.Quote, v.QuoteQty)
		b.QuoteQuantity = &s
	}
	if v.State == engine.Cancelled && v.Reason != engine.ReasonNone {
		s := v.Reason.String()
		b.CancelReason = &s
	}
	return b
}

// FormatTime is the API's timestamp: UTC, milliseconds, Z.
func FormatTime(t time.Time) string { return api.Time(t) }

func pathParam(ctx *fasthttp.RequestCtx, name string) string {
	s, _ := ctx.UserValue(name).(string)
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
