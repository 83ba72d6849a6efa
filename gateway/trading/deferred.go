package trading

import (
	"net"

	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// A deferred placement (api.Defer): the WebSocket's order.place runs POST
// /v1/trading/orders through the gateway's handler in process (the same middleware,
// authentication, scopes, rate limit and validation as REST), but instead of the
// handler's goroutine parking until the journal has the order, the engine's completion
// stage answers it: the answer is built and handed to the caller's callback right after
// the group commit that made the order durable. A REST request cannot be answered that
// way (fasthttp answers when the handler returns); a stream op can, which saves it the
// wake-up of a parked goroutine.

// asyncExchange is an Exchange that completes commands from its completion stage
// (*engine.Engine; a remote engine's client is not one).
type asyncExchange interface {
	SubmitAsync(cmd *engine.Command, done engine.Completer) error
}

// placeDeferred submits cmd without waiting when ctx offers a deferred answer
// (api.Defer) and ex can complete asynchronously; it reports whether it did (the answer
// then goes to the Deferred, and nothing to ctx).
func (h *Handlers) placeDeferred(ctx *fasthttp.RequestCtx, p api.Principal, ex Exchange, cmd *engine.Command, keyed bool) bool {
	ax, ok := ex.(asyncExchange)
	if !ok || !api.Deferrable(ctx) {
		return false
	}
	pl := h.placings.Get().(*placing)
	*pl = placing{h: h, p: p, ex: ex, cmd: *cmd, keyed: keyed, remote: ctx.RemoteAddr(),
		reqID: string(ctx.Response.Header.Peek(api.HeaderRequestID))}
	// Taken before submitting: the engine may complete the command before SubmitAsync
	// returns.
	pl.done = api.TakeDeferral(ctx)
	if err := ax.SubmitAsync(&pl.cmd, pl); err != nil {
		// Not queued, so never completed: answer it here, as the handler would.
		pl.slow(engine.Result{}, err)
	}
	return true
}

// placing is a deferred placement in flight: the engine.Completer of its command.
type placing struct {
	h      *Handlers
	p      api.Principal
	ex     Exchange
	cmd    engine.Command
	keyed  bool
	done   api.Deferred
	remote net.Addr
	reqID  string
}

// Complete answers the placement. An order the engine accepted is answered here, on the
// completion goroutine, in the encoding the handler would write; anything else (a
// rejection, a replay that may read the history, the engine failing) goes through the
// handler's own code on a synthetic request, off the completion goroutine.
func (pl *placing) Complete(res engine.Result, err error) {
	if err == nil && res.Code != engine.RejectDuplicateClientOrderID && resultError(res.Code) == nil {
		b := pl.h.bufs.Get().(*[]byte)
		data := orderJSON(pl.ex, placedView(&pl.cmd, res)).AppendJSON((*b)[:0])
		pl.done(&api.Answer{Status: fasthttp.StatusCreated, Data: data})
		*b = data
		pl.h.bufs.Put(b)
		pl.release()
		return
	}
	go pl.slow(res, err)
}

func (pl *placing) slow(res engine.Result, err error) {
	var req fasthttp.Request
	var rc fasthttp.RequestCtx
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/v1/trading/orders")
	rc.Init(&req, pl.remote, nil)
	if pl.reqID != "" {
		rc.Response.Header.Set(api.HeaderRequestID, pl.reqID)
	}
	pl.h.placed(&rc, pl.p, pl.ex, &pl.cmd, res, err, pl.keyed)
	resp := &rc.Response
	pl.done(&api.Answer{Status: resp.StatusCode(), Body: resp.Body(),
		RetryAfter: string(resp.Header.Peek("Retry-After")), Replayed: len(resp.Header.Peek(headerReplayed)) > 0})
	pl.release()
}

func (pl *placing) release() {
	h := pl.h
	*pl = placing{}
	h.placings.Put(pl)
}
