package trading

import (
	"context"

	"github.com/valyala/fasthttp"

	"svc/engine"
	"svc/gateway/api"
)

// contextReader is an Exchange whose reads take a context (a remote engine's client,
// cluster/enginerpc.Client): a read asks over the network, so the request's deadline
// bounds it as it bounds a command (contextExchange). The local engine reads memory and
// is not one: its reads stay plain method calls.
type contextReader interface {
	OrderContext(ctx context.Context, acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool, error)
	OrderByClientIDContext(ctx context.Context, acct engine.AccountID, clientID string) (engine.OrderView, bool, error)
	OffsetContext(ctx context.Context) uint64
}

// engineCtx is the request's context ending when a wait for the engine gives up
// (giveUpBy), which leaves the answer time to reach the client.
func engineCtx(rc *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	c := api.Ctx(rc)
	if dl, ok := c.Deadline(); ok {
		return context.WithDeadline(c, giveUpBy(dl))
	}
	return c, func() {}
}

// orderOf is ex.Order bounded by the request's deadline. err (already mapped by
// engineError: 503 with Retry-After) says the engine did not answer, which is not "not
// held": a caller must not read it as a closed or unknown order.
func orderOf(rc *fasthttp.RequestCtx, ex Exchange, acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool, error) {
	x, ok := ex.(contextReader)
	if !ok {
		v, found := ex.Order(acct, id)
		return v, found, nil
	}
	ctx, cancel := engineCtx(rc)
	defer cancel()
	return remoteRead(x.OrderContext(ctx, acct, id))
}

// orderByClientIDOf is ex.OrderByClientID bounded by the request's deadline (as orderOf).
func orderByClientIDOf(rc *fasthttp.RequestCtx, ex Exchange, acct engine.AccountID, clientID string) (engine.OrderView, bool, error) {
	x, ok := ex.(contextReader)
	if !ok {
		v, found := ex.OrderByClientID(acct, clientID)
		return v, found, nil
	}
	ctx, cancel := engineCtx(rc)
	defer cancel()
	return remoteRead(x.OrderByClientIDContext(ctx, acct, clientID))
}

// remoteRead maps a remote engine's failed read (engineError: 503 with Retry-After); a
// read that failed never says "found".
func remoteRead(v engine.OrderView, found bool, err error) (engine.OrderView, bool, error) {
	if err != nil {
		return v, false, engineError(err)
	}
	return v, found, nil
}

// offsetOf is ex.Offset asked no later than ctx allows (a remote engine then answers the
// highest offset it has seen).
func offsetOf(ctx context.Context, ex Exchange) uint64 {
	if x, ok := ex.(contextReader); ok {
		return x.OffsetContext(ctx)
	}
	return ex.Offset()
}

// answerOrder answers an engine read: the order, or err (the engine did not answer).
func answerOrder(rc *fasthttp.RequestCtx, ex Exchange, view engine.OrderView, err error) {
	if err != nil {
		api.Fail(rc, err)
		return
	}
	api.OK(rc, orderJSON(ex, view))
}
