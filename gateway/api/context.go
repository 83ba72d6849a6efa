package api

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// Ctx is the context.Context to hand to services and stores for one request. Never pass the
// *fasthttp.RequestCtx itself: it is recycled after the handler returns, yet a context
// handed to pgx can be watched by a goroutine after the call (context.AfterFunc), and its
// Done channel belongs to the whole server (it closes only at shutdown, and is reset by
// Shutdown while watchers read it: a data race). Ctx is never cancelled; values set on the
// request (ctx.SetUserValue, e.g. the idempotency scope) are visible through Value while
// the handler runs.
func Ctx(rc *fasthttp.RequestCtx) context.Context { return requestContext{rc} }

type requestContext struct{ rc *fasthttp.RequestCtx }

func (requestContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (requestContext) Done() <-chan struct{}       { return nil }
func (requestContext) Err() error                  { return nil }

func (c requestContext) Value(key any) any {
	if s, ok := key.(string); ok {
		return c.rc.UserValue(s)
	}
	return c.rc.UserValue(key)
}
