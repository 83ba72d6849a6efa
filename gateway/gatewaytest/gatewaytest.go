// Package gatewaytest runs the real gateway (router, middleware, identity and access) with
// a given set of routes on an in-memory listener, against a pgtest database, and gives tests
// a small client for enveloped JSON. Every resource's end-to-end tests use it, and every
// response they receive is checked against the server's own OpenAPI document
// (gateway/openapi/openapitest): an undocumented status or a body that does not match its
// schema fails the test.
package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"svc/gateway"
	"svc/gateway/api"
	"svc/gateway/auth"
	"svc/gateway/auth/authtest"
	gwidem "svc/gateway/idempotency"
	"svc/gateway/openapi/openapitest"
	"svc/identity"
	"svc/payments/idempotency"
	"svc/payments/providers/mail"
)

// Server is a running gateway for one test.
type Server struct {
	Server   *gateway.Server
	Auth     *auth.Service
	Identity *identity.Service // the merchants, sessions and keys Auth serves
	client   *fasthttp.Client
	ln       *fasthttputil.InmemoryListener
	// Validator checks every response of Do against the document; nil turns it off (a
	// test of a deliberately undocumented answer).
	Validator *openapitest.Validator
}

// New starts the gateway with routes on pool. Rate limits are raised so tests are not
// throttled unless they mean to be.
func New(t testing.TB, pool *pgxpool.Pool, routes ...gateway.RouteSet) *Server {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	return NewWithConfig(t, pool, cfg, routes...)
}

// NewWithConfig is New with the server's configuration (e.g. a short request timeout).
func NewWithConfig(t testing.TB, pool *pgxpool.Pool, cfg gateway.Config, routes ...gateway.RouteSet) *Server {
	t.Helper()
	id, err := identity.New(pool, identity.Config{
		JWTSecret:        []byte("gatewaytest-secret-gatewaytest-secret!"),
		DefaultRateLimit: 100_000,
	}, authtest.Mailer(&mail.Outbox{DB: pool}), nil)
	if err != nil {
		t.Fatal(err)
	}
	authSvc, err := auth.New(id, auth.Config{AuthRateLimit: 100_000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id.Start()
	// The API keys' creates and revocations honour X-Idempotency-Key, as in svcd.
	keyRoutes := authSvc.Routes().Idempotent(gwidem.Middleware(idempotency.New(pool, idempotency.Config{})))
	srv, err := gateway.New(cfg, gateway.Deps{Auth: authSvc, Routes: append([]gateway.RouteSet{keyRoutes}, routes...)})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := srv.Doc().JSON()
	if err != nil {
		t.Fatal(err)
	}
	validator, err := openapitest.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		id.Stop()
	})
	return &Server{Server: srv, Auth: authSvc, Identity: id, Validator: validator, ln: ln, client: &fasthttp.Client{
		Dial:         func(string) (net.Conn, error) { return ln.Dial() },
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
	}}
}

// HTTPClient is a net/http client whose every connection reaches this server (any URL's
// host), for clients built on net/http such as the generated one (gateway/openapi/client).
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) { return s.ln.Dial() },
	}}
}

// Response is a decoded envelope.
type Response struct {
	Status  int
	Success bool              `json:"success"`
	Data    json.RawMessage   `json:"data"`
	Meta    json.RawMessage   `json:"meta"`
	Message string            `json:"message"`
	Detail  string            `json:"detail"`
	Errors  []api.FieldError  `json:"errors"`
	Header  map[string]string `json:"-"`
	Body    []byte            `json:"-"`
}

// Fields lists the fields of a 400's errors.
func (r Response) Fields() []string {
	var out []string
	for _, f := range r.Errors {
		out = append(out, f.Field)
	}
	return out
}

// Decode unmarshals data into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", r.Data, err)
	}
}

// Do sends a request with the API key (empty: none) and a JSON body (nil: none; a string
// is sent as is, anything else is marshalled). Extra headers come as name, value pairs.
func (s *Server) Do(t testing.TB, method, path, key string, body any, headers ...string) Response {
	t.Helper()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://svc" + path)
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	switch b := body.(type) {
	case nil:
	case string:
		req.Header.SetContentType("application/json")
		req.SetBodyString(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.SetContentType("application/json")
		req.SetBody(raw)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if err := s.client.Do(req, resp); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	out := Response{Status: resp.StatusCode(), Body: append([]byte(nil), resp.Body()...), Header: map[string]string{}}
	resp.Header.VisitAll(func(k, v []byte) { out.Header[string(k)] = string(v) })
	if s.Validator != nil {
		reqHeader, respHeader := http.Header{}, http.Header{}
		req.Header.VisitAll(func(k, v []byte) { reqHeader.Add(string(k), string(v)) })
		resp.Header.VisitAll(func(k, v []byte) { respHeader.Add(string(k), string(v)) })
		respHeader.Set("Content-Type", string(resp.Header.ContentType()))
		if err := s.Validator.Check(method, path, reqHeader, out.Status, respHeader, out.Body); err != nil {
			t.Errorf("gatewaytest: %v", err)
		}
	}
	if strings.HasPrefix(string(resp.Header.ContentType()), "application/json") && len(out.Body) > 0 {
		if err := json.Unmarshal(out.Body, &out); err != nil {
			t.Fatalf("%s %s: body is not JSON: %s", method, path, out.Body)
		}
	}
	return out
}

// Must is Do that fails the test unless the status is want.
func (s *Server) Must(t testing.TB, want int, method, path, key string, body any, headers ...string) Response {
	t.Helper()
	r := s.Do(t, method, path, key, body, headers...)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// String renders a response for failure messages.
func (r Response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }
