package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/openapi"
)

// testRoutes exercises the skeleton's helpers the way real resources will.
type testRoutes struct {
	slow    chan struct{} // closed to let the slow handler finish
	entered chan struct{} // the slow handler sends on it (if there is room) once it runs
}

type createThing struct {
	Name     string `json:"name"`
	Quantity int    `json:"quantity"`
	Active   *bool  `json:"active"`
	Tags     []string
}

func (tr testRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/things", func(ctx *fasthttp.RequestCtx) {
		var req createThing
		if err := api.Decode(ctx, &req); err != nil {
			api.Fail(ctx, err)
			return
		}
		var v api.Validator
		v.Length("name", req.Name, 1, 10)
		v.Check(req.Quantity > 0, "quantity", "must be greater than 0")
		if err := v.Err(); err != nil {
			api.Fail(ctx, err)
			return
		}
		api.Created(ctx, map[string]any{"name": req.Name, "quantity": req.Quantity})
	})
	r.GET("/v1/things", func(ctx *fasthttp.RequestCtx) {
		p, err := api.Paging(ctx, "limit", 20, 100)
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		api.Page(ctx, []string{"a"}, p.Meta(41))
	})
	r.GET("/v1/panic", func(ctx *fasthttp.RequestCtx) { panic("secret internal detail") })
	r.GET("/v1/slow", func(ctx *fasthttp.RequestCtx) {
		select {
		case tr.entered <- struct{}{}:
		default:
		}
		<-tr.slow
		api.OK(ctx, "done")
	})
	r.GET("/v1/private", protect(func(ctx *fasthttp.RequestCtx) { api.OK(ctx, "private") }))
}

func (testRoutes) Docs() []openapi.Op {
	return []openapi.Op{
		{Method: "POST", Path: "/v1/things", Summary: "create"},
		{Method: "GET", Path: "/v1/things", Summary: "list"},
		{Method: "GET", Path: "/v1/panic", Summary: "panics"},
		{Method: "GET", Path: "/v1/slow", Summary: "slow"},
		{Method: "GET", Path: "/v1/private", Summary: "private"},
	}
}

type staticAuth struct{}

func (staticAuth) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	if string(ctx.Request.Header.Peek("X-Api-Key")) != "good" {
		return api.Principal{}, api.NewError(api.CodeUnauthorized, "missing or invalid credentials")
	}
	return api.Principal{MerchantID: uuid.New(), Environment: api.Sandbox}, nil
}

type harness struct {
	srv     *gateway.Server
	client  *fasthttp.Client
	ln      *fasthttputil.InmemoryListener
	slow    chan struct{}
	entered chan struct{} // a slow request is in its handler
	done    chan error
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	slow, entered := make(chan struct{}), make(chan struct{}, 1)
	reg := prometheus.NewRegistry()
	srv, err := gateway.New(cfg, gateway.Deps{
		Metrics: reg, Gatherer: reg,
		Auth:   staticAuth{},
		Routes: []gateway.RouteSet{testRoutes{slow: slow, entered: entered}},
		Ready:  []gateway.ReadyCheck{{Name: "always", Check: func(context.Context) error { return nil }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	h := &harness{srv: srv, ln: ln, slow: slow, entered: entered, done: make(chan error, 1)}
	go func() { h.done <- srv.Serve(ln) }()
	h.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	t.Cleanup(func() {
		select {
		case <-slow:
		default:
			close(slow)
		}
		_ = srv.Shutdown(context.Background())
	})
	return h
}

type envelope struct {
	Success bool              `json:"success"`
	Data    json.RawMessage   `json:"data"`
	Message string            `json:"message"`
	Detail  string            `json:"detail"`
	Errors  []api.FieldError  `json:"errors"`
	Extra   map[string]string `json:"-"`
}

func (h *harness) do(t *testing.T, method, path, contentType, body string, headers ...string) (int, envelope, *fasthttp.Response) {
	t.Helper()
	req := fasthttp.AcquireRequest()
	resp := &fasthttp.Response{}
	req.Header.SetMethod(method)
	req.SetRequestURI("http://svc" + path)
	if contentType != "" {
		req.Header.SetContentType(contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.SetBodyString(body)
	if err := h.client.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var env envelope
	if strings.HasPrefix(string(resp.Header.ContentType()), "application/json") {
		if err := json.Unmarshal(resp.Body(), &env); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, resp.Body())
		}
	}
	return resp.StatusCode(), env, resp
}

func TestEnvelopeAndErrors(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		status      int
		code        string
		fields      []string
	}{
		{"created", "POST", "/v1/things", "application/json", `{"name":"ok","quantity":2,"unknown":1}`, 201, "", nil},
		{"charset is fine", "POST", "/v1/things", "application/json; charset=utf-8", `{"name":"ok","quantity":2}`, 201, "", nil},
		{"malformed JSON", "POST", "/v1/things", "application/json", `{"name":`, 400, api.CodeInvalidJSON, nil},
		{"empty body", "POST", "/v1/things", "application/json", ``, 400, api.CodeInvalidJSON, nil},
		{"not an object", "POST", "/v1/things", "application/json", `[1,2]`, 400, api.CodeInvalidJSON, nil},
		{"trailing garbage", "POST", "/v1/things", "application/json", `{"name":"a"} x`, 400, api.CodeInvalidJSON, nil},
		{"wrong types, every field reported", "POST", "/v1/things", "application/json", `{"name":5,"quantity":"2","active":"yes"}`, 400, api.CodeValidation, []string{"name", "quantity", "active"}},
		{"out of range", "POST", "/v1/things", "application/json", `{"name":"a","quantity":99999999999999999999}`, 400, api.CodeValidation, []string{"quantity"}},
		{"missing required and invalid", "POST", "/v1/things", "application/json", `{"quantity":0}`, 400, api.CodeValidation, []string{"name", "quantity"}},
		{"wrong content type", "POST", "/v1/things", "text/plain", `{"name":"a","quantity":1}`, 415, api.CodeUnsupportedMedia, nil},
		{"unknown route", "GET", "/v1/nothing", "", "", 404, api.CodeNotFound, nil},
		{"wrong method", "DELETE", "/v1/things", "", "", 405, api.CodeMethodNotAllowed, nil},
		{"bad page", "GET", "/v1/things?page=0&limit=101", "", "", 400, api.CodeValidation, []string{"page", "limit"}},
		{"unauthenticated", "GET", "/v1/private", "", "", 401, api.CodeUnauthorized, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, env, _ := h.do(t, tc.method, tc.path, tc.contentType, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%+v)", status, tc.status, env)
			}
			if tc.code == "" {
				if !env.Success {
					t.Fatalf("want success, got %+v", env)
				}
				return
			}
			if env.Success || env.Message != tc.code {
				t.Fatalf("envelope %+v, want code %s", env, tc.code)
			}
			var got []string
			for _, f := range env.Errors {
				got = append(got, f.Field)
				if f.Message == "" {
					t.Errorf("field %s has no message", f.Field)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
		})
	}
}

func TestBodyOverLimitIs413(t *testing.T) {
	h := newHarness(t)
	conn, err := h.ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"` + strings.Repeat("x", 1<<20+10) + `"}`
	go func() {
		// The server answers as soon as it sees Content-Length; the rest of the write may fail.
		_, _ = conn.Write([]byte("POST /v1/things HTTP/1.1\r\nHost: svc\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	}()
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(resp.Body(), &env); err != nil {
		t.Fatalf("%q", resp.Body())
	}
	if resp.StatusCode() != 413 || env.Message != api.CodeBodyTooLarge {
		t.Fatalf("%d %+v", resp.StatusCode(), env)
	}
}

func TestPageShape(t *testing.T) {
	h := newHarness(t)
	status, env, _ := h.do(t, "GET", "/v1/things?page=2&limit=20", "", "")
	if status != 200 {
		t.Fatal(status)
	}
	var data struct {
		Items []string     `json:"items"`
		Meta  api.PageMeta `json:"meta"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Meta != (api.PageMeta{Total: 41, Page: 2, Limit: 20, TotalPages: 3}) {
		t.Fatalf("meta %+v", data.Meta)
	}
}

func TestRequestID(t *testing.T) {
	h := newHarness(t)
	_, _, resp := h.do(t, "GET", "/health", "", "", "X-Request-Id", "abc-123")
	if got := string(resp.Header.Peek("X-Request-Id")); got != "abc-123" {
		t.Fatalf("echoed request id %q", got)
	}
	_, _, resp = h.do(t, "GET", "/health", "", "", "X-Request-Id", strings.Repeat("x", 200))
	if got := string(resp.Header.Peek("X-Request-Id")); got == "" || len(got) > 128 {
		t.Fatalf("an oversized id must be replaced by a fresh one, got %q", got)
	}
}

func TestPanicBecomes500WithoutLeaking(t *testing.T) {
	h := newHarness(t)
	status, env, resp := h.do(t, "GET", "/v1/panic", "", "")
	if status != 500 || env.Message != api.CodeInternal {
		t.Fatalf("status %d %+v", status, env)
	}
	body := string(resp.Body())
	if strings.Contains(body, "secret") || strings.Contains(body, "goroutine") {
		t.Fatalf("panic leaked into the response: %s", body)
	}
	if !strings.Contains(body, string(resp.Header.Peek("X-Request-Id"))) {
		t.Fatalf("500 body must carry the request id: %s", body)
	}
	// The server keeps serving.
	if status, _, _ := h.do(t, "GET", "/health", "", ""); status != 200 {
		t.Fatalf("after panic: %d", status)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/health", "/v1/health", "/ready", "/v1/ready"} {
		if status, env, _ := h.do(t, "GET", p, "", ""); status != 200 || !env.Success {
			t.Fatalf("%s: %d %+v", p, status, env)
		}
	}
	_, _, resp := h.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(string(resp.Body()), `svc_http_requests_total{method="GET",route="/health",status="200"}`) {
		t.Fatalf("metrics missing request counter:\n%s", resp.Body())
	}
}

func TestReadyFailsWhenADependencyIsDown(t *testing.T) {
	cfg := gateway.DefaultConfig()
	srv, err := gateway.New(cfg, gateway.Deps{Ready: []gateway.ReadyCheck{{Name: "postgres", Check: func(context.Context) error { return context.DeadlineExceeded }}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.SetRequestURI("/ready")
	srv.Handler()(ctx)
	if ctx.Response.StatusCode() != 503 || !strings.Contains(string(ctx.Response.Body()), "NOT_READY") {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

func TestShutdownDrainsSlowRequest(t *testing.T) {
	h := newHarness(t)
	var wg sync.WaitGroup
	var status int
	wg.Add(1)
	go func() {
		defer wg.Done()
		status, _, _ = h.do(t, "GET", "/v1/slow", "", "")
	}()
	// The request is in the handler (a sleep here was not enough on a loaded box: Shutdown
	// then closed the listener before the request was accepted).
	select {
	case <-h.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request never reached its handler")
	}
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- h.srv.Shutdown(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case <-shutdownDone:
		t.Fatal("shutdown returned while a request was in flight")
	default:
	}
	close(h.slow)
	wg.Wait()
	if status != http.StatusOK {
		t.Fatalf("in-flight request got %d, want 200", status)
	}
	if err := <-shutdownDone; err != nil {
		t.Fatal(err)
	}
	if err := <-h.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func TestEveryRouteIsDocumented(t *testing.T) {
	h := newHarness(t)
	assertRoutesDocumented(t, h.srv)
	raw, err := h.srv.Doc().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.OpenAPI == "" || len(doc.Paths) == 0 {
		t.Fatalf("bad document: %v", err)
	}
}

type undocumentedRoutes struct{}

func (undocumentedRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/secret-route", func(ctx *fasthttp.RequestCtx) {})
}
func (undocumentedRoutes) Docs() []openapi.Op { return nil }

func TestServerRefusesUndocumentedRoutes(t *testing.T) {
	_, err := gateway.New(gateway.DefaultConfig(), gateway.Deps{Routes: []gateway.RouteSet{undocumentedRoutes{}}})
	if err == nil || !strings.Contains(err.Error(), "GET /v1/secret-route") {
		t.Fatalf("err = %v", err)
	}
}
