package webhooks_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway"
	"svc/gateway/api"
	gw "svc/gateway/webhooks"
	wh "svc/payments/webhooks"
	"svc/persistence/postgres/pgtest"
)

// headerAuth authenticates test requests from X-Test-Merchant and X-Test-Env.
type headerAuth struct{}

func (headerAuth) Authenticate(ctx *fasthttp.RequestCtx) (api.Principal, error) {
	id, err := uuid.Parse(string(ctx.Request.Header.Peek("X-Test-Merchant")))
	if err != nil {
		return api.Principal{}, api.NewError(api.CodeUnauthorized, "no test merchant")
	}
	env := api.Environment(ctx.Request.Header.Peek("X-Test-Env"))
	if env == "" {
		env = api.Sandbox
	}
	return api.Principal{MerchantID: id, Environment: env, Method: api.ByAPIKey}, nil
}

type client struct {
	t        *testing.T
	h        fasthttp.RequestHandler
	merchant uuid.UUID
	env      string
}

type reply struct {
	Status  int
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Meta    json.RawMessage `json:"meta"`
	Errors  []api.FieldError
}

func (c client) do(method, path, body string) reply {
	c.t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(path)
	ctx.Request.Header.Set("X-Test-Merchant", c.merchant.String())
	ctx.Request.Header.Set("X-Test-Env", c.env)
	if body != "" {
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBodyString(body)
	}
	c.h(&ctx)
	var r reply
	if err := json.Unmarshal(ctx.Response.Body(), &r); err != nil {
		c.t.Fatalf("%s %s: %v: %s", method, path, err, ctx.Response.Body())
	}
	r.Status = ctx.Response.StatusCode()
	return r
}

func TestEndpointsAPI(t *testing.T) {
	pool, _ := pgtest.New(t)
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Svc-Test-Mode") != "true" {
			w.WriteHeader(400)
		}
	}))
	defer recv.Close()
	roots := recv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	sender := wh.NewSender(wh.SenderConfig{AllowInsecure: true, RootCAs: roots})
	svc := wh.NewService(pool, wh.DevCipher("test"), sender)
	srv, err := gateway.New(gateway.DefaultConfig(), gateway.Deps{Auth: headerAuth{}, Routes: []gateway.RouteSet{gw.New(svc)}})
	if err != nil {
		t.Fatal(err)
	}
	for method, paths := range srv.Router().List() {
		for _, p := range paths {
			if strings.HasPrefix(p, "/v1/webhooks") && !srv.Doc().Has(method, p) {
				t.Errorf("%s %s is not in the OpenAPI document", method, p)
			}
		}
	}
	m1 := client{t, srv.Handler(), uuid.New(), "sandbox"}
	m2 := client{t, srv.Handler(), uuid.New(), "sandbox"}
	m1live := client{t, srv.Handler(), m1.merchant, "live"}

	var ep struct {
		ID       string   `json:"id"`
		URL      string   `json:"url"`
		Events   []string `json:"events"`
		IsActive bool     `json:"is_active"`
		Secret   string   `json:"secret"`
	}
	t.Run("create answers 201 with the secret", func(t *testing.T) {
		r := m1.do("POST", "/v1/webhooks/endpoints", `{"url":"`+recv.URL+`/hook","events":["deposit.settled","deposit.settled"]}`)
		if r.Status != 201 || !r.Success {
			t.Fatalf("%+v", r)
		}
		_ = json.Unmarshal(r.Data, &ep)
		if !strings.HasPrefix(ep.Secret, "whsec_") || !ep.IsActive || len(ep.Events) != 1 {
			t.Fatalf("%s", r.Data)
		}
	})
	t.Run("create validates", func(t *testing.T) {
		for body, field := range map[string]string{
			`{}`: "url",
			`{"url":"https://example.com","events":["nope"]}`: "events[0]",
			`{"url":"https://example.com","events":"all"}`:    "events",
			`{"url":"ftp://example.com/"}`:                    "url",
		} {
			r := m1.do("POST", "/v1/webhooks/endpoints", body)
			if r.Status != 400 || r.Message != "VALIDATION_ERROR" || len(r.Errors) != 1 || r.Errors[0].Field != field {
				t.Errorf("%s: %+v", body, r)
			}
		}
		if r := m1live.do("POST", "/v1/webhooks/endpoints", `{"url":"https://example.com"}`); r.Status != 503 {
			t.Errorf("live endpoint with the development key: %+v", r)
		}
	})
	t.Run("list shows no secret", func(t *testing.T) {
		r := m1.do("GET", "/v1/webhooks/endpoints", "")
		if r.Status != 200 || strings.Contains(string(r.Data), "whsec_") || !strings.Contains(string(r.Data), ep.ID) {
			t.Fatalf("%+v %s", r, r.Data)
		}
		if r := m2.do("GET", "/v1/webhooks/endpoints", ""); string(r.Data) != "[]" {
			t.Fatalf("m2 sees %s", r.Data)
		}
		if r := m1live.do("GET", "/v1/webhooks/endpoints", ""); string(r.Data) != "[]" {
			t.Fatalf("live sees %s", r.Data)
		}
	})
	t.Run("another merchant's endpoint is 404", func(t *testing.T) {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/webhooks/endpoints/" + ep.ID, ""},
			{"PATCH", "/v1/webhooks/endpoints/" + ep.ID, `{"is_active":false}`},
			{"DELETE", "/v1/webhooks/endpoints/" + ep.ID, ""},
			{"POST", "/v1/webhooks/endpoints/" + ep.ID + "/rotate-secret", ""},
			{"POST", "/v1/webhooks/endpoints/" + ep.ID + "/test", ""},
			{"GET", "/v1/webhooks/endpoints/not-a-uuid", ""},
		} {
			for _, who := range []client{m2, m1live} {
				if r := who.do(c.method, c.path, c.body); r.Status != 404 || r.Message != "NOT_FOUND" {
					t.Errorf("%s %s as %s/%s: %+v", c.method, c.path, who.merchant, who.env, r)
				}
			}
		}
	})
	t.Run("patch, rotate, test", func(t *testing.T) {
		r := m1.do("PATCH", "/v1/webhooks/endpoints/"+ep.ID, `{"events":[],"is_active":false}`)
		if r.Status != 200 || !strings.Contains(string(r.Data), `"events":[]`) || !strings.Contains(string(r.Data), `"is_active":false`) {
			t.Fatalf("%+v %s", r, r.Data)
		}
		r = m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/rotate-secret", "")
		var rot struct{ ID, Secret string }
		_ = json.Unmarshal(r.Data, &rot)
		if r.Status != 200 || rot.ID != ep.ID || rot.Secret == ep.Secret || !strings.HasPrefix(rot.Secret, "whsec_") {
			t.Fatalf("rotate %+v %s", r, r.Data)
		}
		if !strings.Contains(string(r.Data), `"previous_secret_expires_at":"`) {
			t.Fatalf("rotate without expires_in keeps the old secret 24 h: %s", r.Data)
		}
		r = m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/rotate-secret", `{"expires_in":0}`)
		if r.Status != 200 || !strings.Contains(string(r.Data), `"previous_secret_expires_at":null`) {
			t.Fatalf("rotate expires_in 0: %+v %s", r, r.Data)
		}
		for _, body := range []string{`{"expires_in":-1}`, `{"expires_in":604801}`, `{"expires_in":"1h"}`} {
			if r = m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/rotate-secret", body); r.Status != 400 || len(r.Errors) != 1 || r.Errors[0].Field != "expires_in" {
				t.Fatalf("rotate %s: %+v", body, r)
			}
		}
		r = m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/test", `{"event":"deposit.failed"}`)
		if r.Status != 200 || !strings.Contains(string(r.Data), `"success":true`) || !strings.Contains(string(r.Data), `"status_code":200`) {
			t.Fatalf("test %+v %s", r, r.Data)
		}
		if r = m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/test", `{"event":"nope"}`); r.Status != 400 {
			t.Fatalf("unknown test event %+v", r)
		}
	})
	t.Run("logs filter and page", func(t *testing.T) {
		m1.do("POST", "/v1/webhooks/endpoints/"+ep.ID+"/test", "")
		r := m1.do("GET", "/v1/webhooks/logs?limit=1", "")
		var page struct {
			Items []map[string]any `json:"items"`
			Meta  api.PageMeta     `json:"meta"`
		}
		_ = json.Unmarshal(r.Data, &page)
		if r.Status != 200 || len(page.Items) != 1 || page.Meta.Total != 2 || page.Meta.TotalPages != 2 || page.Items[0]["event"] != "test.webhook" {
			t.Fatalf("%+v %s", r, r.Data)
		}
		r = m1.do("GET", "/v1/webhooks/logs?event=deposit.failed&success=true&endpoint_id="+ep.ID, "")
		_ = json.Unmarshal(r.Data, &page)
		if len(page.Items) != 1 || page.Items[0]["payload"].(map[string]any)["event"] != "deposit.failed" {
			t.Fatalf("filtered %s", r.Data)
		}
		r = m1.do("GET", "/v1/webhooks/logs?success=false", "")
		_ = json.Unmarshal(r.Data, &page)
		if len(page.Items) != 0 {
			t.Fatalf("success=false %s", r.Data)
		}
		if r := m2.do("GET", "/v1/webhooks/logs", ""); !strings.Contains(string(r.Data), `"total":0`) {
			t.Fatalf("m2 sees logs %s", r.Data)
		}
		r = m1.do("GET", "/v1/webhooks/logs?limit=101&success=maybe&endpoint_id=x&event=nope", "")
		if r.Status != 400 || len(r.Errors) != 4 {
			t.Fatalf("bad query %+v", r)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if r := m1.do("DELETE", "/v1/webhooks/endpoints/"+ep.ID, ""); r.Status != 200 {
			t.Fatalf("%+v", r)
		}
		if r := m1.do("GET", "/v1/webhooks/endpoints/"+ep.ID, ""); r.Status != 404 {
			t.Fatalf("after delete %+v", r)
		}
	})
}
