package api

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// DefaultRequestTimeout is how long one request may take when the server is not told
// otherwise (gateway.Config.RequestTimeout, svcd -request-timeout).
const DefaultRequestTimeout = 10 * time.Second

const keyScope = "svc.scope"

// Ctx is the context.Context to hand to services and stores for one request: it carries the
// request's deadline (set by the server's middleware through Begin) and is cancelled when
// the handler returns, so no query, job insert or provider call outlives its request.
//
// Never pass the *fasthttp.RequestCtx itself: it is recycled after the handler returns, yet a
// context handed to pgx can be watched by a goroutine after the call (context.AfterFunc),
// and its Done channel belongs to the whole server (it closes only at shutdown, and is reset
// by Shutdown while watchers read it: a data race). Values set on the request
// (ctx.SetUserValue, e.g. the idempotency scope) are visible through Value while the handler
// runs, and no longer once it has returned.
//
// The context is made on the first call (requests that never reach a store pay nothing) and
// the same one is returned for the rest of the request. Outside Begin (a handler called
// without the server's middleware) Ctx has no deadline and is never cancelled.
func Ctx(rc *fasthttp.RequestCtx) context.Context {
	sc, _ := rc.UserValue(keyScope).(*scope)
	if sc == nil {
		return plainContext{rc}
	}
	if sc.ctx == nil {
		c, cancel := context.WithDeadline(context.Background(), sc.deadline)
		sc.ctx = &requestContext{Context: c}
		sc.ctx.rc.Store(rc)
		sc.cancel = cancel
	}
	return sc.ctx
}

// Begin arms the deadline of one request: from now on Ctx answers a context that expires
// timeout after now. End must follow when the handler has returned.
func Begin(rc *fasthttp.RequestCtx, timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	sc := scopes.Get().(*scope)
	sc.deadline = time.Now().Add(timeout)
	rc.SetUserValue(keyScope, sc)
}

// End closes what Begin opened: the request's context is cancelled (whatever still runs
// under it is aborted) and detached from the recycled request.
func End(rc *fasthttp.RequestCtx) {
	sc, _ := rc.UserValue(keyScope).(*scope)
	if sc == nil {
		return
	}
	rc.RemoveUserValue(keyScope)
	if sc.ctx != nil {
		sc.ctx.rc.Store(nil)
		sc.cancel()
	}
	*sc = scope{}
	scopes.Put(sc)
}

// Deadline is the time the request must be answered by (zero outside Begin).
func Deadline(rc *fasthttp.RequestCtx) time.Time {
	if sc, _ := rc.UserValue(keyScope).(*scope); sc != nil {
		return sc.deadline
	}
	return time.Time{}
}

// scope is the per-request state behind Ctx; pooled, since only the context it makes may
// outlive the request.
type scope struct {
	deadline time.Time
	ctx      *requestContext
	cancel   context.CancelFunc
}

var scopes = sync.Pool{New: func() any { return new(scope) }}

// requestContext is a cancellable context whose values come from the request while it runs.
type requestContext struct {
	context.Context
	rc atomic.Pointer[fasthttp.RequestCtx]
}

func (c *requestContext) Value(key any) any {
	if rc := c.rc.Load(); rc != nil {
		if v := rc.UserValue(key); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}

// plainContext is Ctx outside Begin: never cancelled, values from the request.
type plainContext struct{ rc *fasthttp.RequestCtx }

func (plainContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (plainContext) Done() <-chan struct{}       { return nil }
func (plainContext) Err() error                  { return nil }

func (c plainContext) Value(key any) any { return c.rc.UserValue(key) }
