package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
)

// recover turns a panic anywhere below into a 500 envelope carrying the request id; the
// panic value and stack go to the log only.
func (s *Server) recover(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in handler",
					"request_id", api.RequestID(ctx),
					"method", string(ctx.Method()), "path", string(ctx.Path()),
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				ctx.ResetBody()
				api.Fail(ctx, api.NewError(api.CodeInternal, "internal error"))
			}
		}()
		next(ctx)
	}
}

// requestID takes a sane X-Request-Id from the client or makes one, and echoes it.
func (s *Server) requestID(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		// The response header is where the id lives (api.RequestID reads it back): no copy
		// into a user value, no allocation on the hot path.
		id := ctx.Request.Header.PeekBytes(headerRequestID)
		if validRequestID(id) {
			ctx.Response.Header.SetCanonical(headerRequestID, id)
		} else {
			var buf [40]byte
			ctx.Response.Header.SetCanonical(headerRequestID, s.ids.append(buf[:0]))
		}
		next(ctx)
	}
}

// requestIDs makes request ids without a syscall or lock: a random per-process prefix and
// a counter, so ids are unique across restarts and instances without coordination.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &requestIDs{prefix: hex.EncodeToString(b[:])}
}

var headerRequestID = []byte(api.HeaderRequestID)

func (r *requestIDs) append(dst []byte) []byte {
	dst = append(dst, r.prefix...)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, r.n.Add(1), 36)
}

func validRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// deadline runs the handler under the request's deadline (api.Begin) and cancels the
// request's context when it returns (api.End), so nothing started for the request outlives
// it.
func (s *Server) deadline(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		s.timeout.Begin(ctx)
		defer api.End(ctx)
		next(ctx)
	}
}

// observe records metrics and writes the access log line after the handler ran.
func (s *Server) observe(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		next(ctx)
		elapsed := time.Since(start)
		route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
		if route == "" {
			route = "unmatched"
		}
		status := ctx.Response.StatusCode()
		if s.metrics != nil {
			s.metrics.observe(ctx.Method(), route, status, elapsed)
		}
		cause := api.Cause(ctx)
		if !s.cfg.AccessLog && cause == nil {
			return
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		if !s.log.Enabled(context.Background(), level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("request_id", api.RequestID(ctx)),
			slog.String("method", string(ctx.Method())),
			slog.String("route", route),
			slog.String("path", string(ctx.Path())),
			slog.Int("status", status),
			slog.Float64("ms", float64(elapsed.Microseconds())/1000),
			slog.String("ip", ctx.RemoteIP().String()),
			slog.Int("bytes", len(ctx.Response.Body())),
		}
		if p, ok := api.PrincipalOf(ctx); ok {
			attrs = append(attrs, slog.String("merchant_id", p.MerchantID.String()), slog.String("environment", string(p.Environment)))
		}
		if cause != nil {
			attrs = append(attrs, slog.String("error", cause.Error()))
		}
		s.log.LogAttrs(context.Background(), level, "request", attrs...)
	}
}

// protect wraps a handler with authentication; without an Authenticator every protected
// route is 401.
func (s *Server) protect(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if s.deps.Auth == nil {
			api.Fail(ctx, api.NewError(api.CodeUnauthorized, "authentication is not configured"))
			return
		}
		p, err := s.deps.Auth.Authenticate(ctx)
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		api.SetPrincipal(ctx, p)
		next(ctx)
	}
}
