package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
)

// request is a request of a live caller (or none) to path?query with {id} = id.
func request(caller bool, id, query, body string) *fasthttp.RequestCtx {
	ctx := new(fasthttp.RequestCtx)
	if caller {
		api.SetPrincipal(ctx, api.Principal{MerchantID: uuid.New(), Environment: api.Live})
	}
	ctx.SetUserValue("id", id)
	ctx.Request.SetRequestURI("/x?" + query)
	if body != "" {
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBodyString(body)
	}
	return ctx
}

type thing struct{ Name string }

func thingOut(t thing) map[string]string { return map[string]string{"name": t.Name} }

var (
	errThingNotFound = &payments.Error{Code: api.CodeNotFound, Message: "thing not found"}
	errDown          = errors.New("boom")
)

func TestGetUpdateDelete(t *testing.T) {
	id := uuid.New()
	res := api.Resource{NotFound: errThingNotFound, Timeout: time.Minute}
	get := func(c context.Context, _ payments.Tenant, got uuid.UUID) (thing, error) {
		if _, ok := c.Deadline(); !ok {
			return thing{}, errors.New("no deadline")
		}
		if got != id {
			return thing{}, errThingNotFound
		}
		return thing{"a"}, nil
	}
	update := func(c context.Context, tn payments.Tenant, got uuid.UUID, b struct {
		Name string `json:"name"`
	}) (thing, error) {
		if b.Name == "" {
			return thing{}, api.Invalid("name", "is required")
		}
		_, err := get(c, tn, got)
		return thing{b.Name}, err
	}
	del := func(c context.Context, tn payments.Tenant, got uuid.UUID) error {
		_, err := get(c, tn, got)
		return err
	}
	failing := func(context.Context, payments.Tenant, uuid.UUID) (thing, error) { return thing{}, errDown }
	for _, c := range []struct {
		name    string
		handler func(*fasthttp.RequestCtx)
		caller  bool
		id      string
		body    string
		status  int
		want    string // the body, or the error code
	}{
		{"get", func(ctx *fasthttp.RequestCtx) { api.Get(ctx, res, get, thingOut) }, true, id.String(), "", 200,
			`{"success":true,"data":{"name":"a"}}`},
		{"get without a caller", func(ctx *fasthttp.RequestCtx) { api.Get(ctx, res, get, thingOut) }, false, id.String(), "", 401, api.CodeUnauthorized},
		{"get of a non-UUID is the resource's 404", func(ctx *fasthttp.RequestCtx) { api.Get(ctx, res, get, thingOut) }, true, "x", "", 404, api.CodeNotFound},
		{"get of another id", func(ctx *fasthttp.RequestCtx) { api.Get(ctx, res, get, thingOut) }, true, uuid.NewString(), "", 404, api.CodeNotFound},
		{"get failing is 500", func(ctx *fasthttp.RequestCtx) { api.Get(ctx, res, failing, thingOut) }, true, id.String(), "", 500, api.CodeInternal},
		{"update", func(ctx *fasthttp.RequestCtx) { api.Update(ctx, res, update, thingOut) }, true, id.String(), `{"name":"b"}`, 200,
			`{"success":true,"data":{"name":"b"}}`},
		{"update with bad JSON", func(ctx *fasthttp.RequestCtx) { api.Update(ctx, res, update, thingOut) }, true, id.String(), `{"nme":"b"}`, 400, api.CodeValidation},
		{"update refused by the service", func(ctx *fasthttp.RequestCtx) { api.Update(ctx, res, update, thingOut) }, true, id.String(), `{}`, 400, api.CodeValidation},
		{"update of a non-UUID", func(ctx *fasthttp.RequestCtx) { api.Update(ctx, res, update, thingOut) }, true, "x", `{"name":"b"}`, 404, api.CodeNotFound},
		{"delete", func(ctx *fasthttp.RequestCtx) { api.Delete(ctx, res, del, "thing deleted") }, true, id.String(), "", 200,
			fmt.Sprintf(`{"success":true,"data":{"id":%q},"message":"thing deleted"}`, id)},
		{"delete of another id", func(ctx *fasthttp.RequestCtx) { api.Delete(ctx, res, del, "thing deleted") }, true, uuid.NewString(), "", 404, api.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := request(c.caller, c.id, "", c.body)
			c.handler(ctx)
			status, code, _ := answer(t, ctx)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, ctx.Response.Body())
			}
			if status < 300 && string(ctx.Response.Body()) != c.want || status >= 300 && code != c.want {
				t.Fatalf("answered %s, want %s", ctx.Response.Body(), c.want)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	create := func(_ context.Context, _ payments.Tenant, b struct {
		Name string `json:"name"`
	}) (thing, error) {
		return thing{b.Name}, nil
	}
	ctx := request(true, "", "", `{"name":"n"}`)
	api.Create(ctx, api.Resource{}, create, thingOut)
	if ctx.Response.StatusCode() != 201 || string(ctx.Response.Body()) != `{"success":true,"data":{"name":"n"}}` {
		t.Fatalf("answered %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	ctx = request(false, "", "", `{"name":"n"}`)
	api.Create(ctx, api.Resource{}, create, thingOut)
	if ctx.Response.StatusCode() != 401 {
		t.Fatalf("without a caller: %d", ctx.Response.StatusCode())
	}
}

func TestListPage(t *testing.T) {
	list := func(_ context.Context, q api.Listing) ([]thing, int64, error) {
		if q.Status == "broken" {
			return nil, 0, errDown
		}
		return []thing{{q.Status}}, 41, nil
	}
	for _, c := range []struct {
		name, query string
		status      int
		want        string // the body, or the field errors
	}{
		{"every status", "", 200, `{"success":true,"data":{"items":[{"name":""}],"meta":{"total":41,"page":1,"limit":20,"total_pages":3}}}`},
		{"one status, a page", "status=b&page=2&limit=10", 200, `{"success":true,"data":{"items":[{"name":"b"}],"meta":{"total":41,"page":2,"limit":10,"total_pages":5}}}`},
		{"an unknown status names the choices", "status=c", 400, `[{status must be one of [a b broken]}]`},
		{"paging is checked first", "status=c&limit=0", 400, `[{limit must be an integer from 1 to 100}]`},
		{"the service failing", "status=broken", 500, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := request(true, "", c.query, "")
			api.ListPage(ctx, api.Resource{}, list, thingOut, "a", "b", "broken")
			status, _, fields := answer(t, ctx)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, ctx.Response.Body())
			}
			got := string(ctx.Response.Body())
			if status == 400 {
				got = fmt.Sprint(fields)
			}
			if status != 500 && got != c.want {
				t.Fatalf("answered %s, want %s", got, c.want)
			}
		})
	}
}

func TestQueryOneOf(t *testing.T) {
	for _, c := range []struct {
		query, want, err string
	}{
		{"", "", ""},
		{"status=b", "b", ""},
		{"status=B", "", "must be one of [a b]"},
	} {
		got, err := api.QueryOneOf(request(true, "", c.query, ""), "status", "a", "b")
		if c.err == "" {
			if err != nil || got != c.want {
				t.Fatalf("%q: %q, %v", c.query, got, err)
			}
			continue
		}
		if e := api.From(err); len(e.Fields) != 1 || e.Fields[0] != (api.FieldError{Field: "status", Message: c.err}) {
			t.Fatalf("%q: %v", c.query, err)
		}
	}
}

func TestOnAndOrNone(t *testing.T) {
	id := uuid.New()
	ctx := request(true, id.String(), "", "")
	api.On(ctx, api.Resource{NotFound: errThingNotFound}, func(_ context.Context, _ payments.Tenant, got uuid.UUID) (thing, error) {
		return thing{got.String()}, nil
	}, thingOut)
	if want := fmt.Sprintf(`{"success":true,"data":{"name":%q}}`, id); string(ctx.Response.Body()) != want {
		t.Fatalf("On answered %s", ctx.Response.Body())
	}
	calls := 0
	h := func(*fasthttp.RequestCtx) { calls++ }
	api.OrNone(nil)(h)(nil)
	wrapped := 0
	api.OrNone(func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) { wrapped++; next(ctx) }
	})(h)(nil)
	if calls != 2 || wrapped != 1 {
		t.Fatalf("calls %d, wrapped %d", calls, wrapped)
	}
}
