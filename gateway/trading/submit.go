package trading

import (
	"context"
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// A handler's wait for the engine is bounded by its request's deadline: the engine
// answers a command only once its batch is journaled, so a stalled journal (a slow disk,
// a deadlock) would otherwise park the request until the client gives up. The command
// cannot be taken back once queued; the engine completes it later and its result is
// dropped, which is why the 503 says the command may still take effect.

// contextExchange is an Exchange whose Submit takes a context (a remote engine's client,
// cluster/enginerpc.Client: it bounds the call itself).
type contextExchange interface {
	SubmitContext(ctx context.Context, cmd *engine.Command) (engine.Result, error)
}

// submit runs cmd on ex for the request rc and waits for its result until shortly before
// the request's deadline (the margin settled leaves to write the answer). If the engine
// has not answered by then it returns a 503 SERVICE_UNAVAILABLE (Retry-After, see
// api.Fail) that says the command may still take effect.
func (h *Handlers) submit(rc *fasthttp.RequestCtx, ex Exchange, cmd *engine.Command) (engine.Result, error) {
	dl := api.Deadline(rc)
	if dl.IsZero() { // no request deadline (a handler run outside the server's middleware)
		return ex.Submit(cmd)
	}
	until := giveUpBy(dl)
	switch x := ex.(type) {
	case asyncExchange:
		return h.submitUntil(x, cmd, until)
	case contextExchange:
		ctx, cancel := context.WithDeadline(api.Ctx(rc), until)
		defer cancel()
		res, err := x.SubmitContext(ctx, cmd)
		if errors.Is(err, context.DeadlineExceeded) { // enginerpc.ErrTimeout: say what a retry does
			return res, stalled(cmd)
		}
		return res, err
	}
	return ex.Submit(cmd)
}

func (h *Handlers) submitUntil(ax asyncExchange, cmd *engine.Command, until time.Time) (engine.Result, error) {
	w := h.waits.Get().(*boundedWait)
	if err := ax.SubmitAsync(cmd, w); err != nil { // not queued: never completed
		h.waits.Put(w)
		return engine.Result{}, err
	}
	d := max(time.Until(until), time.Millisecond)
	if w.t == nil {
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d)
	}
	select {
	case <-w.ch:
		w.t.Stop() // Go >= 1.23: no stale tick survives Stop, so the timer is reusable
		res, err := w.res, w.err
		h.waits.Put(w)
		return res, err
	case <-w.t.C:
		// Abandoned: the engine still holds w and completes it later (the buffered
		// channel takes that send), so w never goes back to the pool.
		return engine.Result{}, stalled(cmd)
	}
}

// boundedWait is the engine.Completer of one command a handler waits for with a deadline.
type boundedWait struct {
	res engine.Result
	err error
	ch  chan struct{} // buffered: Complete never blocks, even on an abandoned wait
	t   *time.Timer
}

func (w *boundedWait) Complete(r engine.Result, err error) {
	w.res, w.err = r, err
	w.ch <- struct{}{}
}

// stalled is the answer to a command the engine did not complete within the request's
// deadline. It says whether retrying is safe: a place is deduplicated by its client order
// id, so without one a retry may place a second order.
func stalled(cmd *engine.Command) error {
	const why = "the exchange did not confirm the command within the request's deadline (its journal, or the network to it, is slow or stalled); "
	switch cmd.Kind {
	case engine.CmdPlace:
		if cmd.ClientOrderID == "" {
			return api.NewError(api.CodeServiceUnavailable, why+"the order may still be placed: it has no client_order_id, so a retry may place a second order; list your open orders before retrying, and send a client_order_id to make retries safe")
		}
		return api.NewError(api.CodeServiceUnavailable, why+"the order may still be placed: retrying with the same client_order_id (or X-Idempotency-Key) is safe, it cannot place the order twice")
	case engine.CmdCancel, engine.CmdCancelAll:
		return api.NewError(api.CodeServiceUnavailable, why+"the cancel may still take effect; retrying it is safe")
	case engine.CmdAmend:
		return api.NewError(api.CodeServiceUnavailable, why+"the amendment may still take effect; read the order before retrying")
	case engine.CmdCredit:
		return api.NewError(api.CodeServiceUnavailable, why+"the credit may still be applied; read the balances before retrying")
	}
	return api.NewError(api.CodeServiceUnavailable, why+"it may still take effect; retry shortly")
}
