package api

import "github.com/valyala/fasthttp"

// Deferred answers: an in-process caller of the gateway's handler (the WebSocket's order
// ops) may let a handler answer after it returned, from whatever completes the work (the
// engine's completion stage once the journal has an order), instead of the handler's
// goroutine parking until then. fasthttp answers a real request when the handler returns,
// so only in-process requests ask for it; a handler that cannot defer answers in the
// request as usual.

// Answer is a deferred answer: what the handler would have written.
type Answer struct {
	Status     int
	Body       []byte // the body (the envelope); nil when Data is set
	Data       []byte // for a success that carries only data: the data, else nil
	RetryAfter string // the Retry-After header, if any
	Replayed   bool   // Idempotent-Replayed: true
}

// Deferred receives a deferred answer, once. It may run on the goroutine that completes
// the work, so it must not block; the slices are valid only during the call.
type Deferred func(a *Answer)

const keyDeferral = "api.deferral"

type deferral struct {
	done  Deferred
	taken bool
}

// Defer offers ctx's handler to answer through done later. After the handler returned,
// Taken says whether it will: if not, the answer is in ctx and done is never called.
func Defer(ctx *fasthttp.RequestCtx, done Deferred) {
	ctx.SetUserValue(keyDeferral, &deferral{done: done})
}

// TakeDeferral is for handlers: the Deferred ctx was offered (nil if none), which the
// handler now promises to call; ctx's own answer is then ignored by the caller (the
// status is set to 202 for the middleware's metrics).
func TakeDeferral(ctx *fasthttp.RequestCtx) Deferred {
	d, _ := ctx.UserValue(keyDeferral).(*deferral)
	if d == nil {
		return nil
	}
	d.taken = true
	ctx.SetStatusCode(fasthttp.StatusAccepted)
	return d.done
}

// Deferrable reports whether ctx was offered a Deferred (without taking it).
func Deferrable(ctx *fasthttp.RequestCtx) bool {
	d, _ := ctx.UserValue(keyDeferral).(*deferral)
	return d != nil && !d.taken
}

// Taken reports whether ctx's handler took the Deferred given to Defer.
func Taken(ctx *fasthttp.RequestCtx) bool {
	d, _ := ctx.UserValue(keyDeferral).(*deferral)
	return d != nil && d.taken
}
