package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth"
	"svc/gateway/auth/authtest"
	"svc/gateway/openapi"
	"svc/identity"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

var _ gateway.Authenticator = (*auth.Service)(nil)
var _ gateway.RouteSet = (*auth.Routes)(nil)

const testSecret = "test-secret-0123456789-0123456789-abcdef"

// clock is a test clock: real time plus an offset the test moves.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// syncBuf is a log sink safe for the server's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type env struct {
	t      *testing.T
	pool   *pgxpool.Pool
	url    string // database
	id     *identity.Service
	svc    *auth.Service
	clk    *clock
	logs   *syncBuf
	base4  string // http://127.0.0.1:port
	base6  string // http://[::1]:port
	mu     sync.Mutex
	bodies []string // every response body, for the secrets test
}

// pingRoutes is a trivial protected route answering the principal.
type pingRoutes struct{}

func (pingRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/test/ping", protect(func(ctx *fasthttp.RequestCtx) {
		p, _ := api.PrincipalOf(ctx)
		api.OK(ctx, map[string]any{"merchant_id": p.MerchantID, "environment": p.Environment, "method": p.Method})
	}))
}
func (pingRoutes) Docs() []openapi.Op {
	return []openapi.Op{{Method: "GET", Path: "/v1/test/ping", Summary: "test"}}
}

// probeRoutes serve real paths of other packages (stubs answering 200) so scope tests can
// reach routes of each scope through the real middleware.
type probeRoutes struct{}

var probes = []struct{ method, path string }{
	{"GET", "/v1/trading/orders"}, {"POST", "/v1/trading/orders"}, {"POST", "/v1/payments/withdrawals"}, {"POST", "/v1/customers"},
}

func (probeRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	for _, p := range probes {
		r.Handle(p.method, p.path, protect(func(ctx *fasthttp.RequestCtx) { api.OK(ctx, map[string]any{"probe": true}) }))
	}
}
func (probeRoutes) Docs() []openapi.Op {
	var out []openapi.Op
	for _, p := range probes {
		out = append(out, openapi.Op{Method: p.method, Path: p.path, Summary: "probe"})
	}
	return out
}

// config is what a test may change: identity's and the HTTP side's settings.
type config struct {
	identity.Config
	httpConfig
}

type httpConfig = auth.Config

func newEnv(t *testing.T, mod ...func(*config)) *env {
	t.Helper()
	pool, url := pgtest.New(t)
	return newEnvOn(t, pool, url, mod...)
}

func newEnvOn(t *testing.T, pool *pgxpool.Pool, url string, mod ...func(*config)) *env {
	t.Helper()
	e := &env{t: t, pool: pool, url: url, clk: &clock{}, logs: &syncBuf{}}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := config{
		Config:     identity.Config{JWTSecret: []byte(testSecret), Now: e.clk.now, LastUsedFlush: time.Hour},
		httpConfig: auth.Config{AuthRateLimit: 10_000, Now: e.clk.now},
	}
	for _, m := range mod {
		m(&cfg)
	}
	id, err := identity.New(pool, cfg.Config, authtest.Mailer(&mail.Outbox{DB: pool, Log: log}), log)
	if err != nil {
		t.Fatal(err)
	}
	id.Start()
	t.Cleanup(id.Stop)
	select {
	case <-id.Cache().Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("cache listener not ready")
	}
	svc, err := auth.New(id, cfg.httpConfig, log)
	if err != nil {
		t.Fatal(err)
	}
	e.id, e.svc = id, svc
	gcfg := gateway.DefaultConfig()
	srv, err := gateway.New(gcfg, gateway.Deps{Logger: log, Auth: svc, Routes: []gateway.RouteSet{svc.Routes(), pingRoutes{}, probeRoutes{}}})
	if err != nil {
		t.Fatal(err)
	}
	ln4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln4)
	go srv.Serve(ln6)
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	e.base4 = "http://" + ln4.Addr().String()
	e.base6 = "http://" + ln6.Addr().String()
	return e
}

type resp struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (r resp) code() string { s, _ := r.Body["message"].(string); return s }
func (r resp) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}
func (r resp) str(k string) string { s, _ := r.data()[k].(string); return s }

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// do sends a request to base (e.base4 or e.base6). hdr is "Name: value" pairs.
func (e *env) doAt(base, method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	e.mu.Lock()
	e.bodies = append(e.bodies, string(raw))
	e.mu.Unlock()
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

func (e *env) do(method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	return e.doAt(e.base4, method, path, body, hdr...)
}

func (e *env) want(r resp, status int, code string) {
	e.t.Helper()
	if r.Status != status || (code != "" && r.code() != code) {
		e.t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.code(), status, code, r.Raw)
	}
}

var codeRe = regexp.MustCompile(`\b(\d{6})\b`)

// lastCode reads the newest one-time code mailed to email from the outbox.
func (e *env) lastCode(email string) string {
	e.t.Helper()
	ms, err := mail.ListOutbox(context.Background(), e.pool, email, 1)
	if err != nil || len(ms) == 0 {
		e.t.Fatalf("no mail for %s: %v", email, err)
	}
	m := codeRe.FindStringSubmatch(ms[0].Body)
	if m == nil {
		e.t.Fatalf("no code in mail %q", ms[0].Body)
	}
	return m[1]
}

// registered makes a verified merchant through the API and returns email and password.
func (e *env) registered() (string, string) {
	e.t.Helper()
	email := "u-" + uuid.NewString()[:8] + "@example.test"
	pw := "pw-" + uuid.NewString()
	e.want(e.do("POST", "/v1/auth/register", map[string]string{"email": email, "password": pw, "business_name": "Acme",
		"first_name": "Ada", "last_name": "Lovelace"}), 201, "")
	e.want(e.do("POST", "/v1/auth/verify-email", map[string]string{"email": email, "otp": e.lastCode(email)}), 200, "")
	return email, pw
}

func (e *env) login(email, pw string) (access, refresh string) {
	e.t.Helper()
	r := e.do("POST", "/v1/auth/login", map[string]string{"email": email, "password": pw})
	e.want(r, 200, "")
	return r.str("access_token"), r.str("refresh_token")
}

func bearer(tok string) string { return "Authorization: Bearer " + tok }
func apiKey(k string) string   { return "X-Api-Key: " + k }

// mails counts the mail kept in the outbox for email.
func (e *env) mails(email string) int {
	e.t.Helper()
	ms, err := mail.ListOutbox(context.Background(), e.pool, email, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ms)
}
