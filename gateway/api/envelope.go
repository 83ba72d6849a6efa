package api

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/valyala/fasthttp"
)

// Keys of values the middleware keeps on a request.
const (
	keyCause     = "svc.cause"
	keyPrincipal = "svc.principal"
)

type okEnvelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data"`
	Message string `json:"message,omitempty"`
	Meta    any    `json:"meta,omitempty"`
}

type errEnvelope struct {
	Success   bool         `json:"success"`
	Message   string       `json:"message"`
	Detail    string       `json:"detail,omitempty"`
	Errors    []FieldError `json:"errors,omitempty"`
	RequestID string       `json:"request_id,omitempty"`
}

// JSONAppender is implemented by response values on hot paths (orders, health) that encode
// themselves by hand: AppendJSON appends the value's JSON to dst. OK and Created then write
// the envelope without reflection.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
}

// OK writes 200 {success: true, data}.
func OK(ctx *fasthttp.RequestCtx, data any) { writeData(ctx, http.StatusOK, data) }

// Created writes 201 {success: true, data}.
func Created(ctx *fasthttp.RequestCtx, data any) { writeData(ctx, http.StatusCreated, data) }

func writeData(ctx *fasthttp.RequestCtx, status int, data any) {
	a, ok := data.(JSONAppender)
	if !ok {
		write(ctx, status, okEnvelope{Success: true, Data: data})
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	bp := scratch.Get().(*[]byte)
	b := append((*bp)[:0], `{"success":true,"data":`...)
	b = a.AppendJSON(b)
	b = append(b, '}')
	ctx.Response.SetBody(b) // copies into fasthttp's own pooled buffer
	*bp = b
	scratch.Put(bp)
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Message writes 200 {success: true, data, message}; data may be nil.
func Message(ctx *fasthttp.RequestCtx, data any, message string) {
	write(ctx, http.StatusOK, okEnvelope{Success: true, Data: data, Message: message})
}

// Array writes 200 with data as the array itself and paging in a top-level meta, the shape
// DESIGN.md section 6 gives the lists the spec calls arrays.
func Array(ctx *fasthttp.RequestCtx, items any, meta *PageMeta) {
	env := okEnvelope{Success: true, Data: items}
	if meta != nil {
		env.Meta = meta
	}
	write(ctx, http.StatusOK, env)
}

// Page writes 200 {data: {items, meta}}, the page-object shape of the other lists.
func Page(ctx *fasthttp.RequestCtx, items any, meta PageMeta) {
	write(ctx, http.StatusOK, okEnvelope{Success: true, Data: struct {
		Items any      `json:"items"`
		Meta  PageMeta `json:"meta"`
	}{items, meta}})
}

// Fail writes the error envelope for err (see From). The cause of a 500 is kept on the
// request for the access log and never written to the client.
//
// Every 503 carries Retry-After (seconds) unless the caller already set one; its cause is
// kept for the access log like a 500's.
func Fail(ctx *fasthttp.RequestCtx, err error) {
	ae := From(err)
	status := ae.Status()
	if ae.Code == CodeInternal || (status == http.StatusServiceUnavailable && ae != err) {
		ctx.SetUserValue(keyCause, err)
	}
	env := errEnvelope{Success: false, Message: ae.Code, Detail: ae.Detail, Errors: ae.Fields}
	if status >= 500 {
		env.RequestID = RequestID(ctx)
	}
	if status == http.StatusServiceUnavailable && len(ctx.Response.Header.PeekBytes(headerRetryAfter)) == 0 {
		ctx.Response.Header.SetCanonical(headerRetryAfter, retryAfter(ae.Code))
	}
	write(ctx, ae.Status(), env)
}

var headerRetryAfter = []byte("Retry-After")

// retryAfter is the Retry-After of a 503 code: a busy engine drains in well under a second;
// a database or other dependency coming back takes longer.
func retryAfter(code string) []byte {
	switch code {
	case CodeEngineBusy:
		return []byte("1")
	default:
		return []byte("2")
	}
}

// Cause returns the internal error behind a 500 written by Fail, if any.
func Cause(ctx *fasthttp.RequestCtx) error {
	err, _ := ctx.UserValue(keyCause).(error)
	return err
}

func write(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		ctx.SetUserValue(keyCause, err)
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"message":"INTERNAL_ERROR","detail":"internal error"}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// RawJSON writes an already-encoded success body (hot paths that encode by hand).
func RawJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// HeaderRequestID carries the request id in and out.
const HeaderRequestID = "X-Request-Id"

// RequestID returns the id the middleware gave this request (it is kept in the response
// header, which is where the client sees it).
func RequestID(ctx *fasthttp.RequestCtx) string {
	return string(ctx.Response.Header.Peek(HeaderRequestID))
}

// PageOf is Page with each item rendered by out; an empty page is [], never null.
func PageOf[T, J any](ctx *fasthttp.RequestCtx, items []T, out func(T) J, meta PageMeta) {
	res := make([]J, len(items))
	for i, it := range items {
		res[i] = out(it)
	}
	Page(ctx, res, meta)
}
