package api

import (
	"context"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// DefaultRequestTimeout is how long one request may take when the server is not told
// otherwise (gateway.Config.RequestTimeout, svcd -request-timeout).
const DefaultRequestTimeout = 10 * time.Second

const (
	keyTimeout = "svc.timeout"
	keyCtx     = "svc.ctx"
)

// Ctx is the context.Context to hand to services and stores for one request: it carries the
// request's deadline (set by the server's middleware through Begin) and is cancelled when
// the handler returns, so no query, job insert or provider call outlives its request.
//
// Never pass the *fasthttp.RequestCtx itself: it is recycled after the handler returns, yet a
// context handed to pgx can be watched by a goroutine after the call (context.AfterFunc),
// and its Done channel belongs to the whole server (it closes only at shutdown, and is reset
// by Shutdown while watchers read it: a data race). Values reach services through SetValue
// (e.g. the idempotency scope), not through the request's user values, which goroutines
// started under the context (pgx dialing a connection) could read while the handler writes
// them.
//
// The context is made on the first call (requests that never reach a store pay nothing) and
// the same one is returned for the rest of the request; its deadline counts from the start
// of the request (RequestCtx.Time). Outside Begin (a handler called
// without the server's middleware) Ctx has no deadline and is never cancelled.
func Ctx(rc *fasthttp.RequestCtx) context.Context {
	if c, ok := rc.UserValue(keyCtx).(*requestContext); ok {
		return c
	}
	t, ok := rc.UserValue(keyTimeout).(*Timeout)
	if !ok {
		return plainContext{rc}
	}
	start := rc.Time()
	if start.IsZero() {
		start = time.Now()
	}
	inner, cancel := context.WithDeadline(context.Background(), start.Add(t.d))
	c := &requestContext{Context: inner, cancel: cancel}
	rc.SetUserValue(keyCtx, c)
	return c
}

// Timeout is the deadline of every request of a server, armed on each request by Begin.
type Timeout struct{ d time.Duration }

// NewTimeout returns the request timeout d (DefaultRequestTimeout when d <= 0).
func NewTimeout(d time.Duration) *Timeout {
	if d <= 0 {
		d = DefaultRequestTimeout
	}
	return &Timeout{d: d}
}

// Begin arms the request's deadline: from now on Ctx answers a context that expires the
// timeout after the request started. End must follow when the handler has returned. It
// costs no allocation: the context is only made if a handler asks for it.
func (t *Timeout) Begin(rc *fasthttp.RequestCtx) { rc.SetUserValue(keyTimeout, t) }

// Begin is NewTimeout(timeout).Begin(rc), for tests and one-off callers.
func Begin(rc *fasthttp.RequestCtx, timeout time.Duration) { NewTimeout(timeout).Begin(rc) }

// End closes what Begin opened: the request's context is cancelled (whatever still runs
// under it is aborted) and detached from the recycled request.
func End(rc *fasthttp.RequestCtx) {
	if c, ok := rc.UserValue(keyCtx).(*requestContext); ok {
		rc.RemoveUserValue(keyCtx)
		c.cancel()
		c.mu.Lock()
		c.vals = nil // nothing of the request outlives it
		c.mu.Unlock()
	}
	rc.RemoveUserValue(keyTimeout)
}

// Deadline is the time the request must be answered by (zero outside Begin).
func Deadline(rc *fasthttp.RequestCtx) time.Time {
	if c, ok := rc.UserValue(keyCtx).(*requestContext); ok {
		dl, _ := c.Deadline()
		return dl
	}
	t, ok := rc.UserValue(keyTimeout).(*Timeout)
	if !ok {
		return time.Time{}
	}
	start := rc.Time()
	if start.IsZero() {
		start = time.Now()
	}
	return start.Add(t.d)
}

// requestContext is a cancellable context with the values set through SetValue. It never
// reads the RequestCtx: goroutines started under it (pgx's connection dialer, context
// watchers) may call Value while the handler changes the request's user values.
type requestContext struct {
	context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	vals   map[any]any
}

func (c *requestContext) Value(key any) any {
	c.mu.Lock()
	v, ok := c.vals[key]
	c.mu.Unlock()
	if ok {
		return v
	}
	return c.Context.Value(key)
}

// SetValue makes v the value of key in the request's context (Ctx(rc).Value(key)) and in its
// user values; v nil removes it. This is how middleware hands a request-scoped value (the
// idempotency scope) to services, safely for goroutines reading the context meanwhile.
func SetValue(rc *fasthttp.RequestCtx, key, v any) {
	if v == nil {
		rc.RemoveUserValue(key)
	} else {
		rc.SetUserValue(key, v)
	}
	c, ok := Ctx(rc).(*requestContext)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v == nil {
		delete(c.vals, key)
		return
	}
	if c.vals == nil {
		c.vals = map[any]any{}
	}
	c.vals[key] = v
}

// plainContext is Ctx outside Begin: never cancelled, values from the request (only used
// where no server runs the request, so nothing reads it from another goroutine).
type plainContext struct{ rc *fasthttp.RequestCtx }

func (plainContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (plainContext) Done() <-chan struct{}       { return nil }
func (plainContext) Err() error                  { return nil }

func (c plainContext) Value(key any) any { return c.rc.UserValue(key) }
