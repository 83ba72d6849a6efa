package ws

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	o "svc/gateway/openapi"
)

// Authenticator proves who an upgrade request (or an auth message, replayed as a request
// carrying X-Api-Key) comes from; gateway/auth's Service is one. It applies the merchant's
// rate limit and IP whitelist like on every route.
type Authenticator interface {
	Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error)
}

// Config configures the WebSocket endpoint.
type Config struct {
	Hubs map[api.Environment]*Hub
	Auth Authenticator
	Log  *slog.Logger

	QueueLen         int           // messages queued per connection before it is a slow consumer (default 256)
	MaxSubscriptions int           // channels per connection (default 50)
	PingEvery        time.Duration // server pings (default 20 s)
	IdleTimeout      time.Duration // close when nothing at all arrives for this long (default 60 s)
	AuthTimeout      time.Duration // an unauthenticated connection must auth within (default 10 s)
	WriteTimeout     time.Duration // one write to the socket (default 5 s)
	MaxMessage       int64         // largest client message in bytes (default 4096)
}

// Server is the /v1/ws endpoint.
type Server struct {
	cfg      Config
	upgrader websocket.FastHTTPUpgrader
	conns    atomic.Int64
	slow     atomic.Uint64
}

// NewServer returns the endpoint over one hub per environment.
func NewServer(cfg Config) *Server {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 256
	}
	if cfg.MaxSubscriptions <= 0 {
		cfg.MaxSubscriptions = 50
	}
	if cfg.PingEvery <= 0 {
		cfg.PingEvery = 20 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 4096
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg}
	s.upgrader = websocket.FastHTTPUpgrader{
		ReadBufferSize:  256,
		WriteBufferPool: &writePool{},
		// Browsers send Origin; credentials are API keys, never cookies, so any origin may connect.
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
	}
	return s
}

// writePool lends write buffers to NextWriter; prepared messages never need one, so
// connections hold no write buffer of their own.
type writePool struct{ sync.Pool }

// Connections is the number of open WebSocket connections.
func (s *Server) Connections() int64 { return s.conns.Load() }

// SlowConsumers is how many connections were closed because their queue was full.
func (s *Server) SlowConsumers() uint64 { return s.slow.Load() }

// Register adds GET /v1/ws. The route authenticates itself: by X-Api-Key (or a bearer
// token) on the upgrade, or by an auth message first.
func (s *Server) Register(r *router.Router, _ func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/ws", s.Upgrade)
}

// Docs documents the upgrade; the protocol is in docs/websocket.md.
func (s *Server) Docs() []o.Op {
	return []o.Op{{Method: "GET", Path: "/v1/ws", Tag: "market data", Summary: "WebSocket stream (upgrade)",
		Description: "Upgrades to a WebSocket (RFC 6455). Authenticate with X-Api-Key on the upgrade or send " +
			"{\"op\":\"auth\",\"api_key\":\"...\"} first (within 10 s). Then {\"op\":\"subscribe\",\"channels\":[...]} to " +
			"orderbook:SYMBOL (snapshot, then diffs with first_sequence/last_sequence), trades:SYMBOL, ticker:SYMBOL, " +
			"klines:SYMBOL:INTERVAL, and the private orders and balances. Protocol, messages and examples: docs/websocket.md.",
		Responses: map[int]o.Response{101: {Description: "Switching Protocols: the WebSocket stream", ContentType: "application/octet-stream"}},
		Errors:    []string{"UNAUTHORIZED", "VALIDATION_ERROR", "RATE_LIMITED", "IP_NOT_WHITELISTED"}}}
}

type upgradeInfo struct {
	remote  net.Addr
	headers [][2]string // forwarding headers of the upgrade, for the auth message
}

var forwardHeaders = []string{"X-Forwarded-For", "X-Real-Ip", "User-Agent"}

// Upgrade is the GET /v1/ws handler.
func (s *Server) Upgrade(ctx *fasthttp.RequestCtx) {
	var p api.Principal
	authed := false
	if len(ctx.Request.Header.Peek("X-Api-Key")) > 0 || len(ctx.Request.Header.Peek("Authorization")) > 0 {
		var err error
		if p, err = s.authenticate(ctx); err != nil {
			api.Fail(ctx, err)
			return
		}
		authed = true
	}
	if !websocket.FastHTTPIsWebSocketUpgrade(ctx) {
		api.Fail(ctx, api.NewError(api.CodeValidation, "GET /v1/ws is a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)"))
		return
	}
	info := upgradeInfo{remote: ctx.RemoteAddr()}
	for _, h := range forwardHeaders {
		if v := ctx.Request.Header.Peek(h); len(v) > 0 {
			info.headers = append(info.headers, [2]string{h, string(v)})
		}
	}
	_ = s.upgrader.Upgrade(ctx, func(ws *websocket.Conn) { s.serve(ws, p, authed, info) })
}

func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	if s.cfg.Auth == nil {
		return api.Principal{}, api.NewError(api.CodeUnauthorized, "authentication is not configured")
	}
	p, err := s.cfg.Auth.Authenticate(ctx)
	if err != nil {
		return p, err
	}
	if s.cfg.Hubs[p.Environment] == nil {
		return p, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", p.Environment)
	}
	return p, nil
}

// authKey authenticates an auth message: the key is checked as if it came on a request
// from the connection's address (same rate limit, IP whitelist and revocation).
func (s *Server) authKey(key string, info upgradeInfo) (api.Principal, error) {
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI("/v1/ws")
	for _, h := range info.headers {
		req.Header.Set(h[0], h[1])
	}
	req.Header.Set("X-Api-Key", key)
	var rctx fasthttp.RequestCtx
	rctx.Init(&req, info.remote, nil)
	return s.authenticate(&rctx)
}

func (s *Server) serve(ws *websocket.Conn, p api.Principal, authed bool, info upgradeInfo) {
	s.conns.Add(1)
	defer s.conns.Add(-1)
	c := &conn{srv: s, ws: ws, out: make(chan *websocket.PreparedMessage, s.cfg.QueueLen),
		kill: make(chan struct{}), writerDone: make(chan struct{})}
	if authed {
		c.principal, c.hub = p, s.cfg.Hubs[p.Environment]
	}
	go c.writeLoop()
	ws.SetReadLimit(s.cfg.MaxMessage)
	authBy := time.Now().Add(s.cfg.AuthTimeout)
	deadline := func() {
		d := time.Now().Add(s.cfg.IdleTimeout)
		if c.hub == nil && authBy.Before(d) {
			d = authBy
		}
		if !c.closing.Load() {
			_ = ws.SetReadDeadline(d)
		}
	}
	deadline()
	ws.SetPongHandler(func(string) error { deadline(); return nil })
	for {
		mt, data, err := ws.ReadMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout() && c.hub == nil:
				c.fail(websocket.ClosePolicyViolation, "authentication required")
			case errors.As(err, &ne) && ne.Timeout():
				c.fail(websocket.CloseGoingAway, "idle timeout")
			case errors.Is(err, websocket.ErrReadLimit):
				c.fail(websocket.CloseMessageTooBig, "message too big")
			default:
				c.fail(websocket.CloseAbnormalClosure, "")
			}
			break
		}
		deadline()
		if mt != websocket.TextMessage {
			c.sendJSON(errorMsg{Type: "error", Code: "INVALID_MESSAGE", Message: "messages are JSON text frames"})
			continue
		}
		s.handle(c, data, info)
	}
	if c.hub != nil && len(c.chans) > 0 {
		chs := make([]channel, 0, len(c.chans))
		for _, ch := range c.chans {
			chs = append(chs, ch)
		}
		hub := c.hub
		hub.do(func() { hub.unsubscribe(c, chs, nil) })
	}
	<-c.writerDone
	_ = ws.Close()
}

type request struct {
	Op       string          `json:"op"`
	ID       json.RawMessage `json:"id,omitempty"`
	Channels []string        `json:"channels"`
	APIKey   string          `json:"api_key"`
}

type errorMsg struct {
	Type    string          `json:"type"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Channel string          `json:"channel,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

type ackMsg struct {
	Type     string          `json:"type"`
	Op       string          `json:"op"`
	Channels []string        `json:"channels,omitempty"`
	ID       json.RawMessage `json:"id,omitempty"`
	// auth
	MerchantID  string `json:"merchant_id,omitempty"`
	Environment string `json:"environment,omitempty"`
}

func (s *Server) handle(c *conn, data []byte, info upgradeInfo) {
	var r request
	if err := json.Unmarshal(data, &r); err != nil {
		c.sendJSON(errorMsg{Type: "error", Code: "INVALID_JSON", Message: "malformed message: " + err.Error()})
		return
	}
	fail := func(code, msg, ch string) {
		c.sendJSON(errorMsg{Type: "error", Code: code, Message: msg, Channel: ch, ID: r.ID})
	}
	switch r.Op {
	case "ping":
		c.sendJSON(ackMsg{Type: "pong", Op: "ping", ID: r.ID})
	case "auth":
		if c.hub != nil {
			fail("ALREADY_AUTHENTICATED", "this connection is authenticated", "")
			return
		}
		if r.APIKey == "" {
			fail(api.CodeValidation, "api_key is required", "")
			return
		}
		p, err := s.authKey(r.APIKey, info)
		if err != nil {
			ae := api.From(err)
			fail(ae.Code, ae.Detail, "")
			c.fail(websocket.ClosePolicyViolation, "authentication failed")
			return
		}
		c.principal, c.hub = p, s.cfg.Hubs[p.Environment]
		_ = c.ws.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		c.sendJSON(ackMsg{Type: "ack", Op: "auth", ID: r.ID, MerchantID: p.MerchantID.String(), Environment: string(p.Environment)})
	case "subscribe", "unsubscribe":
		if c.hub == nil {
			fail(api.CodeUnauthorized, "authenticate first: X-Api-Key on the upgrade or {\"op\":\"auth\",\"api_key\":...}", "")
			return
		}
		if len(r.Channels) == 0 {
			fail(api.CodeValidation, "channels is required", "")
			return
		}
		chs := make([]channel, 0, len(r.Channels))
		for _, name := range r.Channels {
			ch, err := c.hub.parseChannel(name)
			if err != nil {
				fail("INVALID_CHANNEL", err.Error(), name)
				return
			}
			chs = append(chs, ch)
		}
		ack, _ := json.Marshal(ackMsg{Type: "ack", Op: r.Op, Channels: r.Channels, ID: r.ID})
		if c.chans == nil {
			c.chans = map[string]channel{}
		}
		hub := c.hub
		if r.Op == "unsubscribe" {
			for _, ch := range chs {
				delete(c.chans, ch.name)
			}
			hub.do(func() { hub.unsubscribe(c, chs, ack) })
			return
		}
		n := len(c.chans)
		for _, ch := range chs {
			if _, ok := c.chans[ch.name]; !ok {
				n++
			}
		}
		if n > s.cfg.MaxSubscriptions {
			fail("TOO_MANY_SUBSCRIPTIONS", "at most "+itoa(s.cfg.MaxSubscriptions)+" channels per connection", "")
			return
		}
		for _, ch := range chs {
			c.chans[ch.name] = ch
		}
		hub.do(func() { hub.subscribe(c, chs, ack) })
	default:
		fail("UNKNOWN_OP", "op must be auth, subscribe, unsubscribe or ping", "")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
