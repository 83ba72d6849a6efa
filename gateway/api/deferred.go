package api

import "github.com/valyala/fasthttp"

// Deferred answers: an in-process caller of the gateway's handler (the WebSocket's order
// ops) may let a handler answer after it returned, from whatever completes the work (the
// engine's completion stage once the journal has an order), instead of the handler's
// goroutine parking until then. fasthttp answers a real request when the handler returns,
// so only in-process requests ask for it; a handler that cannot defer answers in the
// request as usual.
//
// A deferred answer is bounded like a request: the handler answers by the request's
// deadline even if the work has not completed (a 503 that says whether retrying is safe),
// and the work's own outcome, when it comes after that, is handed over once more as a
// Late answer that is never sent to the client.

// Answer is a deferred answer: what the handler would have written.
type Answer struct {
	Status     int
	Body       []byte // the body (the envelope); nil when Data is set
	Data       []byte // for a success that carries only data: the data, else nil
	RetryAfter string // the Retry-After header, if any
	Replayed   bool   // Idempotent-Replayed: true
	// Late marks the outcome of work whose answer already went out as a timeout: the
	// caller must not send it (the client has its answer) but may learn from it (for
	// example, track the order it placed). Only Status and Data are set.
	Late bool
}

// Deferred receives a deferred answer: once, and after a timeout answer once more with
// Late set, never at the same time. It may run on the goroutine that completes the work
// or on a timer's, so it must not block; the slices are valid only during the call.
type Deferred func(a *Answer)

// Runner runs work of a deferred answer that may block (a replay reading the order
// history) on the caller's goroutines, so that the goroutine completing the work (the
// engine's completion stage) never blocks and no goroutine is started per answer. It must
// not block itself.
type Runner func(work func())

const keyDeferral = "api.deferral"

type deferral struct {
	done  Deferred
	run   Runner
	taken bool
}

// Defer offers ctx's handler to answer through done later, running blocking work through
// run (not nil). After the handler returned, Taken says whether it will: if not, the
// answer is in ctx and done is never called.
func Defer(ctx *fasthttp.RequestCtx, done Deferred, run Runner) {
	ctx.SetUserValue(keyDeferral, &deferral{done: done, run: run})
}

// TakeDeferral is for handlers: the Deferred ctx was offered (nil if none) and the
// Runner for its blocking work; the handler now promises to call done; ctx's own answer
// is then ignored by the caller (the status is set to 202 for the middleware's metrics).
func TakeDeferral(ctx *fasthttp.RequestCtx) (Deferred, Runner) {
	d, _ := ctx.UserValue(keyDeferral).(*deferral)
	if d == nil {
		return nil, nil
	}
	d.taken = true
	ctx.SetStatusCode(fasthttp.StatusAccepted)
	return d.done, d.run
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
