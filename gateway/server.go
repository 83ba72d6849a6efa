package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
)

// Config is the server's own configuration; cmd/svcd fills it from flags and environment.
type Config struct {
	Addr            string        // listen address, e.g. ":8080"
	BodyLimit       int           // largest request body in bytes (413 above it)
	ReadTimeout     time.Duration // whole request
	WriteTimeout    time.Duration
	IdleTimeout     time.Duration // keep-alive
	AccessLog       bool          // one structured log line per request
	Version         string        // reported by /health and the OpenAPI document
	Commit          string        // the build's commit, reported by /health
	ShutdownTimeout time.Duration // how long in-flight requests may take to drain
	// RequestTimeout is the deadline of every request's context (api.Ctx): database
	// queries, job inserts and provider calls still running then are cancelled and the
	// request answers 503 (api.Unavailable).
	RequestTimeout time.Duration
}

// DefaultConfig runs locally.
func DefaultConfig() Config {
	return Config{
		Addr:            ":8080",
		BodyLimit:       1 << 20,
		ReadTimeout:     30 * time.Second,
		WriteTimeout:    30 * time.Second,
		IdleTimeout:     120 * time.Second,
		AccessLog:       true,
		Version:         "dev",
		ShutdownTimeout: 20 * time.Second,
		RequestTimeout:  api.DefaultRequestTimeout,
	}
}

// ReadyCheck reports whether one dependency can serve (PostgreSQL, the journal, the engine).
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
	// Degraded: a failure is shown in /ready's checks ("degraded: ...") without making the
	// server unready, for a dependency only some operations need (a chain's node: svcd
	// serves everything else meanwhile).
	Degraded bool
}

// Authenticator proves who a request comes from. It answers an *api.Error (401, 403, 429)
// when the request must stop, and otherwise the principal the handler works for.
// Implementations also apply the merchant's IP whitelist and rate limit.
type Authenticator interface {
	Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error)
}

// Deps are the services the handlers call. A nil dependency leaves its routes answering
// 503 (or 401 for a nil Authenticator), so the skeleton runs before everything is wired.
type Deps struct {
	Logger   *slog.Logger
	Metrics  prometheus.Registerer
	Gatherer prometheus.Gatherer
	Auth     Authenticator
	Ready    []ReadyCheck
	// Routes lets other packages (gateway/auth, payments handlers, ...) register their own
	// routes and documentation on the server.
	Routes []RouteSet
}

// RouteSet is a group of routes with their documentation, registered by a package that owns
// them. Register receives the router and a Protect function that wraps a handler with the
// authentication middleware chain.
type RouteSet interface {
	Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler)
	Docs() []openapi.Op
}

// Server is the HTTP server.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	router  *router.Router
	doc     *openapi.Doc
	srv     *fasthttp.Server
	metrics *httpMetrics
	ids     *requestIDs
	timeout *api.Timeout
	docJSON []byte
}

// New builds the server and its routes; it does not listen yet.
func New(cfg Config, deps Deps) (*Server, error) {
	if cfg.BodyLimit <= 0 {
		return nil, errors.New("gateway: body limit must be positive")
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, deps: deps, log: log, ids: newRequestIDs(), timeout: api.NewTimeout(cfg.RequestTimeout)}
	if deps.Metrics != nil {
		m, err := newHTTPMetrics(deps.Metrics)
		if err != nil {
			return nil, err
		}
		s.metrics = m
	}
	s.router = router.New()
	s.router.SaveMatchedRoutePath = true
	s.router.RedirectTrailingSlash = false
	s.router.NotFound = func(ctx *fasthttp.RequestCtx) {
		api.Fail(ctx, api.Errorf(api.CodeNotFound, "no route %s %s", ctx.Method(), ctx.Path()))
	}
	s.router.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		api.Fail(ctx, api.Errorf(api.CodeMethodNotAllowed, "method %s is not allowed on %s", ctx.Method(), ctx.Path()))
	}
	s.doc = openapi.New("svc: exchange core and merchant payment gateway", cfg.Version,
		"Every route is under /v1. Authenticate with X-Api-Key (svc_sk_test_ for sandbox, svc_sk_live_ for live) or Authorization: Bearer <JWT>.",
		api.Codes())
	s.routes()
	if missing := s.undocumented(); len(missing) > 0 {
		return nil, fmt.Errorf("gateway: routes missing from the OpenAPI document: %s", strings.Join(missing, ", "))
	}
	var err error
	if s.docJSON, err = s.doc.JSON(); err != nil {
		return nil, fmt.Errorf("gateway: render OpenAPI document: %w", err)
	}
	s.srv = &fasthttp.Server{
		Handler:               s.Handler(),
		Name:                  "svc",
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		MaxRequestBodySize:    cfg.BodyLimit,
		CloseOnShutdown:       true,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		ErrorHandler:          s.parseError,
		Logger:                fasthttpLogger{log},
	}
	return s, nil
}

// undocumented lists registered routes the OpenAPI document does not describe, and
// documented operations no route serves; the server refuses to start with either.
func (s *Server) undocumented() []string {
	var out []string
	registered := map[string]bool{}
	for method, paths := range s.router.List() {
		for _, p := range paths {
			registered[method+" "+p] = true
			if !s.doc.Has(method, p) {
				out = append(out, method+" "+p)
			}
		}
	}
	for _, op := range s.doc.Ops() {
		if !registered[op.Method+" "+op.Path] {
			out = append(out, "(documented only) "+op.Method+" "+op.Path)
		}
	}
	sort.Strings(out)
	return out
}

// Handler is the whole middleware chain around the router (used by tests without sockets).
func (s *Server) Handler() fasthttp.RequestHandler {
	return s.recover(s.requestID(s.observe(s.deadline(s.router.Handler))))
}

// Router exposes the routes (the OpenAPI coverage test lists them).
func (s *Server) Router() *router.Router { return s.router }

// Doc is the OpenAPI document of the registered routes.
func (s *Server) Doc() *openapi.Doc { return s.doc }

// Serve answers on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// ListenAndServe listens on the configured address.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ln)
}

// Shutdown stops accepting connections and waits for in-flight requests to finish, up to
// the context's deadline.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.ShutdownWithContext(ctx) }

// parseError answers requests fasthttp could not read (body too large, malformed HTTP).
func (s *Server) parseError(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		api.Fail(ctx, api.Errorf(api.CodeBodyTooLarge, "request body is larger than %d bytes", s.cfg.BodyLimit))
		ctx.SetConnectionClose()
		lingerClose(ctx)
		return
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		ctx.SetStatusCode(fasthttp.StatusRequestTimeout)
		ctx.SetConnectionClose()
		return
	}
	api.Fail(ctx, api.NewError(api.CodeValidation, "malformed HTTP request"))
	ctx.SetConnectionClose()
}

// Bounds of lingerClose: the most it reads, for how long in all, and how long the client
// may pause before it is considered done sending.
const (
	lingerBytes = 64 << 20
	lingerTotal = 5 * time.Second
	lingerIdle  = 250 * time.Millisecond
)

// lingerClose answers a refused request on a connection the client is still writing to.
// fasthttp refuses an oversized body from its headers and closes the connection with the
// body unread, and closing a TCP socket with unread data sends a reset, which destroys the
// 413 before a client that writes its whole body first gets to read it. So the answer is
// written now, the sending side shut (FIN), and what the client still sends is read and
// dropped (bounded in bytes and time) before fasthttp closes the connection; the copy of
// the answer fasthttp then writes goes nowhere.
func lingerClose(ctx *fasthttp.RequestCtx) {
	c := ctx.Conn()
	if c == nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		ctx.Response.Header.SetConnectionClose()
		_ = c.SetWriteDeadline(time.Now().Add(lingerIdle * 4))
		if _, err := ctx.Response.WriteTo(c); err != nil {
			return
		}
		_ = cw.CloseWrite()
	}
	end := time.Now().Add(lingerTotal)
	buf := make([]byte, 32<<10)
	for n := 0; n < lingerBytes; {
		dl := time.Now().Add(lingerIdle)
		if dl.After(end) {
			dl = end
		}
		_ = c.SetReadDeadline(dl)
		m, err := c.Read(buf)
		n += m
		if err != nil {
			return
		}
	}
}

type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Warn(fmt.Sprintf(format, args...), "component", "fasthttp")
}
