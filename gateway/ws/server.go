package ws

import (
	"crypto/sha256"
	"errors"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
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

// Revalidator is an optional interface of the Authenticator: it re-checks a stream
// that p opened with the API key whose SHA-256 is keyHash, spending no rate limit: the
// key is still active, the merchant not suspended, the IP whitelist admits the client
// (ctx is a synthetic request from the connection's address with the upgrade's
// forwarding headers). Without it the server replays the key through Authenticate.
type Revalidator interface {
	Revalidate(ctx *fasthttp.RequestCtx, p api.Principal, keyHash [sha256.Size]byte) error
}

// Config configures the WebSocket endpoint.
type Config struct {
	Hubs map[api.Environment]*Hub
	Auth Authenticator
	Log  *slog.Logger
	// Events feeds the private events channel (events.go); nil: the channel is refused.
	Events EventFeed

	QueueLen         int           // frames queued per connection before it is a slow consumer (default 256)
	QueueBytes       int           // bytes queued per connection before it is a slow consumer (default 4 MiB)
	ConflateAt       int           // queued frames from which book diffs are replaced by a later snapshot (default 8, about 160 ms of diffs)
	Writers          int           // writer goroutines (default GOMAXPROCS)
	MaxSubscriptions int           // channels per connection (default 50)
	PingEvery        time.Duration // server pings (default 20 s)
	IdleTimeout      time.Duration // close when nothing at all arrives for this long (default 60 s)
	AuthTimeout      time.Duration // a connection must authenticate or subscribe within (default 10 s)
	WriteTimeout     time.Duration // frames pending this long close the connection (default 5 s)
	RecheckEvery     time.Duration // streams on private channels re-check their key (default 5 s)
	MaxMessage       int           // largest client message in bytes (default 4096)
	// PublicRate is how many upgrades and messages per minute one client address may send
	// without credentials (default 600); PublicConns the open unauthenticated connections
	// per address (default 200).
	PublicRate  int
	PublicConns int
	// DefaultEnv is the environment of unauthenticated connections that do not ask for
	// one with ?environment= (default live).
	DefaultEnv api.Environment
}

// Server is the /v1/ws endpoint: it adopts upgraded sockets, reads them with one poller
// and writes them with a small writer pool. Start it before serving and Close it at
// shutdown.
type Server struct {
	cfg      Config
	upgrader websocket.FastHTTPUpgrader
	limiter  *IPLimiter

	mu     sync.RWMutex
	conns  map[uint64]*conn
	perIP  map[string]int // open unauthenticated connections per address key
	nextID uint64

	clock   atomic.Int64 // unix ns, refreshed by the janitor
	writers writers
	poller  *poller
	wg      sync.WaitGroup
	stop    chan struct{}
	running atomic.Bool

	open        atomic.Int64
	openPrivate atomic.Int64  // authenticated connections among open
	queued      atomic.Uint64 // frames queued to connections
	slow        atomic.Uint64
	revoked     atomic.Uint64
	stalled     atomic.Uint64
	blocked     atomic.Uint64
	checking    atomic.Bool
	followers   followers // of the events channel (events.go)

	entry atomic.Pointer[OrderEntry] // order ops (orders.go); nil until SetOrderEntry
	ops   opWorkers                  // the goroutines that run order ops (orders.go)
	// runner runs a deferred answer's blocking work on ops (made once: an api.Runner)
	runner api.Runner
}

// NewServer returns the endpoint over one hub per environment.
func NewServer(cfg Config) *Server {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 256
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 4 << 20
	}
	if cfg.ConflateAt <= 0 {
		cfg.ConflateAt = max(min(8, cfg.QueueLen/4), 2)
	}
	if cfg.Writers <= 0 {
		cfg.Writers = runtime.GOMAXPROCS(0)
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
	if cfg.RecheckEvery <= 0 {
		cfg.RecheckEvery = 5 * time.Second
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 4096
	}
	if cfg.PublicRate <= 0 {
		cfg.PublicRate = 600
	}
	if cfg.PublicConns <= 0 {
		cfg.PublicConns = 200
	}
	if cfg.DefaultEnv == "" {
		cfg.DefaultEnv = api.Live
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, conns: map[uint64]*conn{}, perIP: map[string]int{}, stop: make(chan struct{}),
		limiter: NewIPLimiter(nil)}
	s.clock.Store(time.Now().UnixNano())
	s.runner = func(fn func()) { s.ops.do(s, fn) }
	s.upgrader = websocket.FastHTTPUpgrader{
		ReadBufferSize:  256,
		WriteBufferSize: 256,
		// Browsers send Origin; credentials are API keys, never cookies, so any origin may connect.
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
	}
	return s
}

// Start starts the poller, the writers and the janitor (pings, timeouts, key re-checks).
func (s *Server) Start() error {
	p, err := newPoller(s)
	if err != nil {
		return err
	}
	s.poller = p
	s.writers.start(s.cfg.Writers)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		p.run()
	}()
	go func() {
		defer s.wg.Done()
		s.janitor()
	}()
	s.running.Store(true)
	return nil
}

// Close closes every connection (1001 going away, best effort) and stops the goroutines.
func (s *Server) Close() {
	if !s.running.Swap(false) {
		return
	}
	for _, c := range s.all() {
		c.fail(CloseGoingAway, "server shutting down")
	}
	deadline := time.Now().Add(time.Second)
	for s.open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range s.all() {
		s.shutdown(c)
	}
	close(s.stop)
	s.poller.stop()
	s.writers.close()
	s.wg.Wait()
	s.poller.release()
}

// Connections is the number of open WebSocket connections.
func (s *Server) Connections() int64 { return s.open.Load() }

// PrivateConnections is the number of open connections that authenticated (with a key
// or token on the upgrade or by an auth message); the rest only stream public channels.
func (s *Server) PrivateConnections() int64 { return s.openPrivate.Load() }

// MessagesQueued is how many frames were queued to connections for sending (data,
// answers and control frames; a frame fanned out to n connections counts n times).
func (s *Server) MessagesQueued() uint64 { return s.queued.Load() }

// RateLimited is how many upgrades and messages without credentials were refused by the
// per-address limit (429 or an error message).
func (s *Server) RateLimited() uint64 { return s.limiter.Refused() }

// SlowConsumers is how many connections were closed because their queue was full or
// their frames stayed unread past the write timeout.
func (s *Server) SlowConsumers() uint64 { return s.slow.Load() + s.stalled.Load() }

// Blocked is how many writes found a socket's buffer full (the client reads slower than
// the server writes; the connection waits for it without holding a writer).
func (s *Server) Blocked() uint64 { return s.blocked.Load() }

// Revoked is how many authenticated streams were closed because their credentials no
// longer pass (key revoked or deleted, merchant suspended, address not whitelisted).
func (s *Server) Revoked() uint64 { return s.revoked.Load() }

// Register adds GET /v1/ws. The route authenticates itself: by X-Api-Key (or a bearer
// token) on the upgrade, by an auth message later, or not at all for public channels.
func (s *Server) Register(r *router.Router, _ func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/ws", s.Upgrade)
}

// Docs documents the upgrade; the protocol is in docs/websocket.md.
func (s *Server) Docs() []o.Op {
	return []o.Op{{Method: "GET", Path: "/v1/ws", Tag: "market data", Summary: "WebSocket stream (upgrade)",
		Description: "Upgrades to a WebSocket (RFC 6455). Public channels need no credentials (?environment=sandbox|live, " +
			"default live; rate limited per client address): orderbook:SYMBOL (snapshot, then diffs with " +
			"first_sequence/last_sequence), trades:SYMBOL, ticker:SYMBOL, klines:SYMBOL:INTERVAL. The private orders " +
			"and balances channels need X-Api-Key on the upgrade or {\"op\":\"auth\",\"api_key\":\"...\"}. Then " +
			"{\"op\":\"subscribe\",\"channels\":[...]}. Protocol, limits and close codes: docs/websocket.md.",
		Responses: map[int]o.Response{101: {Description: "Switching Protocols: the WebSocket stream", ContentType: "application/octet-stream"}},
		Errors:    []string{"UNAUTHORIZED", "VALIDATION_ERROR", "RATE_LIMITED", "IP_NOT_WHITELISTED", "ENGINE_UNAVAILABLE"}}}
}

type upgradeInfo struct {
	cred    [2]string // the credential header of the upgrade, for order ops (orders.go)
	remote  net.Addr
	ipKey   string      // the client address's limiter key ("" when authenticated on the upgrade)
	headers [][2]string // forwarding headers of the upgrade, for the auth message
}

var forwardHeaders = []string{"X-Forwarded-For", "X-Real-Ip", "User-Agent"}

// Upgrade is the GET /v1/ws handler.
func (s *Server) Upgrade(ctx *fasthttp.RequestCtx) {
	if !s.running.Load() {
		api.Fail(ctx, api.NewError(api.CodeEngineUnavailable, "the WebSocket endpoint is not running"))
		return
	}
	var p api.Principal
	var hub *Hub
	key := ctx.Request.Header.Peek("X-Api-Key")
	info := upgradeInfo{remote: ctx.RemoteAddr()}
	if len(key) > 0 || len(ctx.Request.Header.Peek("Authorization")) > 0 {
		var err error
		if p, err = s.authenticate(ctx); err != nil {
			api.Fail(ctx, err)
			return
		}
		if len(key) > 0 {
			info.cred = [2]string{"X-Api-Key", string(key)}
		} else {
			info.cred = [2]string{"Authorization", string(ctx.Request.Header.Peek("Authorization"))}
		}
		hub = s.cfg.Hubs[p.Environment]
	} else {
		info.ipKey = IPKey(ctx.RemoteIP())
		if d := s.limiter.Take(info.ipKey, s.cfg.PublicRate); !d.Allowed {
			d.Fail(ctx)
			return
		}
		env := s.cfg.DefaultEnv
		switch v := string(ctx.QueryArgs().Peek("environment")); v {
		case "":
		case string(api.Sandbox), string(api.Live):
			env = api.Environment(v)
		default:
			api.Fail(ctx, api.Invalid("environment", "must be sandbox or live"))
			return
		}
		if hub = s.cfg.Hubs[env]; hub == nil {
			api.Fail(ctx, api.Errorf(api.CodeEngineUnavailable, "the %s exchange is not running", env))
			return
		}
		s.mu.RLock()
		n := s.perIP[info.ipKey]
		s.mu.RUnlock()
		if n >= s.cfg.PublicConns {
			api.Fail(ctx, api.Errorf(api.CodeRateLimited, "at most %d connections without credentials per client address", s.cfg.PublicConns))
			return
		}
	}
	if !websocket.FastHTTPIsWebSocketUpgrade(ctx) {
		api.Fail(ctx, api.NewError(api.CodeValidation, "GET /v1/ws is a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)"))
		return
	}
	for _, h := range forwardHeaders {
		if v := ctx.Request.Header.Peek(h); len(v) > 0 {
			info.headers = append(info.headers, [2]string{h, string(v)})
		}
	}
	authed := p.MerchantID != [16]byte{}
	k := string(key)
	_ = s.upgrader.Upgrade(ctx, func(ws *websocket.Conn) {
		if err := s.adopt(ws, p, authed, k, hub, info); err != nil {
			s.cfg.Log.Warn("websocket adopt", "error", err)
		}
	})
}

// unsafeConner is fasthttp's hijacked connection, which can hand over the socket.
type unsafeConner interface{ UnsafeConn() net.Conn }

// adopt takes the upgraded socket over: fasthttp closes the hijacked connection when the
// upgrade handler returns, so the server keeps a duplicate of the descriptor (a net.Conn
// of its own) and lets the handler goroutine end. From here no goroutine belongs to the
// connection.
func (s *Server) adopt(ws *websocket.Conn, p api.Principal, authed bool, key string, hub *Hub, info upgradeInfo) error {
	nc := ws.NetConn()
	if u, ok := nc.(unsafeConner); ok {
		nc = u.UnsafeConn()
	}
	type filer interface{ File() (*os.File, error) }
	fc, ok := nc.(filer)
	if !ok {
		return errors.New("upgraded connection has no descriptor")
	}
	f, err := fc.File()
	if err != nil {
		return err
	}
	own, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return err
	}
	rcer, ok := own.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		_ = own.Close()
		return errors.New("adopted connection has no raw descriptor")
	}
	rc, err := rcer.SyscallConn()
	if err != nil {
		_ = own.Close()
		return err
	}
	now := s.clock.Load()
	c := &conn{srv: s, nc: own, rc: rc, principal: p, hub: hub, info: info, opened: now, lastPing: now}
	if !authed {
		c.principal = api.Principal{}
	}
	if key != "" {
		c.setKey(key)
	}
	c.sess.cred = info.cred
	c.lastRead.Store(now)
	s.mu.Lock()
	if !s.running.Load() {
		s.mu.Unlock()
		_ = own.Close()
		return errors.New("server closed")
	}
	s.nextID++
	c.id = s.nextID
	s.conns[c.id] = c
	if info.ipKey != "" {
		s.perIP[info.ipKey]++
	}
	s.mu.Unlock()
	s.open.Add(1)
	if authed {
		c.markPrivate()
	}
	if err := s.poller.add(c); err != nil {
		s.shutdown(c)
		return err
	}
	return nil
}

func (s *Server) lookup(id uint64) *conn {
	s.mu.RLock()
	c := s.conns[id]
	s.mu.RUnlock()
	return c
}

func (s *Server) all() []*conn {
	s.mu.RLock()
	out := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	s.mu.RUnlock()
	return out
}

// shutdown closes c's socket at once (after its close frame, or on an I/O error) and
// unsubscribes it.
func (s *Server) shutdown(c *conn) {
	if !c.markDone() {
		return
	}
	s.mu.Lock()
	delete(s.conns, c.id)
	if c.info.ipKey != "" {
		if s.perIP[c.info.ipKey]--; s.perIP[c.info.ipKey] <= 0 {
			delete(s.perIP, c.info.ipKey)
		}
	}
	s.mu.Unlock()
	s.poller.remove(c)
	_ = c.nc.Close()
	s.open.Add(-1)
	s.cancelOnDisconnect(c)
	s.unfollow(c)
	c.rmu.Lock()
	hub, chs := c.hub, make([]channel, 0, len(c.chans))
	for _, ch := range c.chans {
		chs = append(chs, ch)
	}
	c.chans = nil
	c.rmu.Unlock()
	if hub != nil && len(chs) > 0 {
		hub.do(func() { hub.unsubscribe(c, chs, nil) })
	}
}

// waitWritable parks one goroutine until c's socket drains (only while a reader is
// behind), then hands c back to the writers.
func (s *Server) waitWritable(c *conn) {
	s.blocked.Add(1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		first := true
		err := c.rc.Write(func(uintptr) bool {
			if first { // the first call returns false: wait until the socket is writable
				first = false
				return false
			}
			return true
		})
		if err != nil {
			s.shutdown(c)
			return
		}
		s.writers.schedule(c)
	}()
}

// janitor keeps the clock, pings, and closes idle, stalled and unauthenticated
// connections; every RecheckEvery it re-checks authenticated streams.
func (s *Server) janitor() {
	tick := min(time.Second, s.cfg.AuthTimeout/4, s.cfg.PingEvery/2)
	tick = max(tick, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastCheck int64
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			ns := now.UnixNano()
			s.clock.Store(ns)
			s.sweep(ns)
			if ns-lastCheck >= int64(s.cfg.RecheckEvery) && !s.checking.Load() {
				lastCheck = ns
				s.checking.Store(true)
				s.wg.Add(1)
				go func() {
					defer s.wg.Done()
					defer s.checking.Store(false)
					s.recheck()
				}()
			}
		}
	}
}

func (s *Server) sweep(now int64) {
	var pings []*conn
	for _, c := range s.all() {
		switch {
		case c.stalled(now):
			s.stalled.Add(1)
			s.shutdown(c)
		case now-c.lastRead.Load() > int64(s.cfg.IdleTimeout):
			c.fail(CloseGoingAway, "idle timeout")
		case c.codSilent(now):
			// Cancel-on-disconnect with a shorter timeout: the session is dead for the
			// trader's purpose; the socket goes now, so its orders are cancelled now.
			s.shutdown(c)
		case now-c.opened > int64(s.cfg.AuthTimeout) && c.idleAnonymous():
			c.fail(ClosePolicyViolation, "authentication required: authenticate or subscribe in time")
		case now-c.lastPing >= int64(s.cfg.PingEvery):
			c.lastPing = now
			if c.push(pingFrame) {
				pings = append(pings, c)
			}
		}
	}
	s.writers.schedule(pings...)
}

// idleAnonymous: not authenticated and subscribed to nothing.
func (c *conn) idleAnonymous() bool {
	if !c.rmu.TryLock() {
		return false
	}
	defer c.rmu.Unlock()
	return c.principal.MerchantID == [16]byte{} && len(c.chans) == 0 && !c.authing
}

// recheck re-validates every stream authenticated by an API key that holds a private
// channel; one that no longer passes is closed with 1008 and the refusal's code as reason.
func (s *Server) recheck() {
	rv, _ := s.cfg.Auth.(Revalidator)
	for _, c := range s.all() {
		c.rmu.Lock()
		p, key, hash, apiKey, authed := c.principal, c.info, c.keyHash, c.apiKey, c.principal.MerchantID != [16]byte{}
		private := false
		for _, ch := range c.chans {
			private = private || ch.private
		}
		c.rmu.Unlock()
		if !authed || !private || p.Method != api.ByAPIKey {
			continue // public data is public; bearer tokens are not re-checked (see docs/websocket.md)
		}
		var err error
		if rv != nil {
			rctx := syntheticRequest(key, "")
			api.Begin(rctx, 5*time.Second)
			err = rv.Revalidate(rctx, p, hash)
			api.End(rctx)
		} else if apiKey != "" {
			_, err = s.authKey(apiKey, key)
		}
		if err == nil {
			continue
		}
		ae := api.From(err)
		if st := ae.Status(); st != 401 && st != 403 {
			continue // not a verdict on the credentials (rate limit, database down)
		}
		s.revoked.Add(1)
		c.fail(ClosePolicyViolation, "credentials no longer valid: "+ae.Code)
	}
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
	rctx := syntheticRequest(info, key)
	api.Begin(rctx, 10*time.Second)
	defer api.End(rctx)
	return s.authenticate(rctx)
}

// syntheticRequest is a GET /v1/ws from the connection's address with the upgrade's
// forwarding headers (and X-Api-Key when key is set), for the Authenticator.
func syntheticRequest(info upgradeInfo, key string) *fasthttp.RequestCtx {
	req := &fasthttp.Request{}
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI("/v1/ws")
	for _, h := range info.headers {
		req.Header.Set(h[0], h[1])
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	rctx := &fasthttp.RequestCtx{}
	rctx.Init(req, info.remote, nil)
	return rctx
}
