package trading

import (
	"net"
	"sync"
	"time"

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
//
// The wait is bounded as a REST place's is (submit): if the engine has not completed the
// command shortly before the request's deadline, a timer answers 503 SERVICE_UNAVAILABLE
// with Retry-After (stalled), so a stalled journal never leaves an op unanswered and the
// connection's later ops waiting behind it. Whichever of the timer and the engine comes
// first answers; the other finds the placing's state changed and answers nothing. The
// engine's outcome after a timeout is handed over as a Late answer (never sent: the
// stream tracks the order for cancel-on-disconnect). The placing goes back to its pool
// only when neither the engine (it holds pl, the command's Completer, until Complete; the
// command itself it copied into its ring) nor the timer can still touch it.

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
	dl := api.Deadline(ctx)
	if dl.IsZero() { // outside the server's middleware: bounded all the same
		dl = time.Now().Add(api.DefaultRequestTimeout)
	}
	pl := h.placings.Get().(*placing)
	t := pl.t // the timer stays with its placing across reuses
	*pl = placing{h: h, p: p, ex: ex, cmd: *cmd, keyed: keyed, remote: ctx.RemoteAddr(), deadline: dl,
		reqID: string(ctx.Response.Header.Peek(api.HeaderRequestID)), t: t}
	// Taken before submitting: the engine may complete the command before SubmitAsync
	// returns.
	pl.done, pl.run = api.TakeDeferral(ctx)
	pl.mu.Lock() // publishes the fields above to expire, which reads them under mu
	pl.state = placingPending
	pl.mu.Unlock()
	// As submit: give up a tenth of what is left early (at least historyMargin), which
	// leaves the answer time to reach the client before the deadline.
	d := max(time.Until(giveUpBy(dl)), time.Millisecond)
	if pl.t == nil {
		pl.t = time.AfterFunc(d, pl.expire)
	} else {
		pl.t.Reset(d)
	}
	if err := ax.SubmitAsync(&pl.cmd, pl); err != nil {
		// Not queued, so never completed: answer it here, as the handler would.
		pl.Complete(engine.Result{}, err)
	}
	return true
}

// placing is a deferred placement in flight: the engine.Completer of its command.
type placing struct {
	h        *Handlers
	p        api.Principal
	ex       Exchange
	cmd      engine.Command
	keyed    bool
	done     api.Deferred
	run      api.Runner
	remote   net.Addr
	reqID    string
	deadline time.Time   // the request's: bounds the slow answer's history read too
	t        *time.Timer // fires expire; made once per placing, Reset on reuse

	mu    sync.Mutex
	state placingState // under mu
	reuse bool         // whether release may pool pl (set by Complete)
}

type placingState uint8

const (
	placingPending  placingState = iota
	placingAnswered              // the engine completed first: its answer goes out
	placingExpired               // the timer answered 503 first: the engine's outcome is late
)

// expire answers a placement the engine has not completed by the deadline with the 503 a
// REST place gets (stalled), unless the engine completed it meanwhile. It holds mu while
// it answers, so a late completion's Late answer always comes after it.
func (pl *placing) expire() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.state != placingPending {
		return
	}
	pl.state = placingExpired
	var req fasthttp.Request
	var rc fasthttp.RequestCtx
	rc.Init(&req, pl.remote, nil)
	if pl.reqID != "" {
		rc.Response.Header.Set(api.HeaderRequestID, pl.reqID)
	}
	api.Fail(&rc, stalled(&pl.cmd))
	resp := &rc.Response
	pl.done(&api.Answer{Status: resp.StatusCode(), Body: resp.Body(), RetryAfter: string(resp.Header.Peek("Retry-After"))})
}

// Complete answers the placement. An order the engine accepted is answered here, on the
// completion goroutine, in the encoding the handler would write; anything else (a
// rejection, a replay that may read the history, the engine failing) goes through the
// handler's own code on a synthetic request, on the caller's Runner (its op workers), off
// the completion goroutine. After expire answered, only an accepted order is handed over
// (Late), for the caller to track.
func (pl *placing) Complete(res engine.Result, err error) {
	// Stopped before the fire: expire never runs for this use, so pl may be pooled again.
	// Otherwise expire has run or is about to: mu orders the two, and pl is pooled only
	// if expire is done with it (it answered first; it held mu until then).
	stopped := pl.t.Stop()
	pl.mu.Lock()
	late := pl.state == placingExpired
	pl.state = placingAnswered
	pl.reuse = stopped || late
	pl.mu.Unlock()
	accepted := err == nil && res.Code != engine.RejectDuplicateClientOrderID && resultError(res.Code) == nil
	if accepted {
		b := pl.h.bufs.Get().(*[]byte)
		data := orderJSON(pl.ex, placedView(&pl.cmd, res)).AppendJSON((*b)[:0])
		status := fasthttp.StatusCreated
		pl.done(&api.Answer{Status: status, Data: data, Late: late})
		*b = data
		pl.h.bufs.Put(b)
		pl.release()
		return
	}
	if late { // the client was told the order may still be placed; it was not
		pl.release()
		return
	}
	pl.run(func() { pl.slow(res, err) })
}

// slow answers the placement through the handler's own code (placed) on a synthetic
// request bounded by the original request's deadline.
func (pl *placing) slow(res engine.Result, err error) {
	var req fasthttp.Request
	var rc fasthttp.RequestCtx
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/v1/trading/orders")
	rc.Init(&req, pl.remote, nil)
	api.Begin(&rc, max(time.Until(pl.deadline), time.Millisecond))
	if pl.reqID != "" {
		rc.Response.Header.Set(api.HeaderRequestID, pl.reqID)
	}
	pl.h.placed(&rc, pl.p, pl.ex, &pl.cmd, res, err, pl.keyed)
	api.End(&rc)
	resp := &rc.Response
	pl.done(&api.Answer{Status: resp.StatusCode(), Body: resp.Body(),
		RetryAfter: string(resp.Header.Peek("Retry-After")), Replayed: len(resp.Header.Peek(headerReplayed)) > 0})
	pl.release()
}

// release pools pl when nothing can touch it any more (see Complete); otherwise it is
// left to the garbage collector (a timer that fired as the engine completed: rare).
func (pl *placing) release() {
	h, reuse, t := pl.h, pl.reuse, pl.t
	if !reuse {
		return
	}
	*pl = placing{t: t}
	h.placings.Put(pl)
}
