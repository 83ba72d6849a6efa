package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
)

func TestAddTo(t *testing.T) {
	id := uuid.New()
	add := func(_ context.Context, _ payments.Tenant, got uuid.UUID, b struct {
		Name string `json:"name"`
	}) (thing, error) {
		if b.Name == "" {
			return thing{}, api.Invalid("name", "is required")
		}
		return thing{got.String() + "/" + b.Name}, nil
	}
	res := api.Resource{NotFound: errThingNotFound}
	for _, c := range []struct {
		name     string
		caller   bool
		id, body string
		status   int
		want     string // the body, or the error code
	}{
		{"added", true, id.String(), `{"name":"w"}`, 201, fmt.Sprintf(`{"success":true,"data":{"name":"%s/w"}}`, id)},
		{"without a caller", false, id.String(), `{"name":"w"}`, 401, api.CodeUnauthorized},
		{"a non-UUID is the resource's 404, before the body", true, "x", `{`, 404, api.CodeNotFound},
		{"bad JSON", true, id.String(), `{`, 400, api.CodeInvalidJSON},
		{"refused by the service", true, id.String(), `{}`, 400, api.CodeValidation},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := request(c.caller, c.id, "", c.body)
			api.AddTo(ctx, res, add, thingOut)
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

func TestListOn(t *testing.T) {
	id := uuid.New()
	list := func(c context.Context, _ payments.Tenant, got uuid.UUID, limit, offset int) ([]thing, int64, error) {
		switch {
		case got != id:
			return nil, 0, errThingNotFound
		case offset > 40:
			return nil, 41, nil
		case limit == 7:
			return nil, 0, errDown
		}
		return []thing{{fmt.Sprint(limit, "@", offset)}}, 41, nil
	}
	for _, c := range []struct {
		name, id, query string
		status          int
		want            string // the body, or the field errors, or the error code
	}{
		{"first page", id.String(), "", 200, `{"success":true,"data":[{"name":"20@0"}],"meta":{"total":41,"page":1,"limit":20,"total_pages":3}}`},
		{"a page", id.String(), "page=2&limit=10", 200, `{"success":true,"data":[{"name":"10@10"}],"meta":{"total":41,"page":2,"limit":10,"total_pages":5}}`},
		{"past the end is []", id.String(), "page=9", 200, `{"success":true,"data":[],"meta":{"total":41,"page":9,"limit":20,"total_pages":3}}`},
		{"a non-UUID is the resource's 404, before paging", "x", "page=0", 404, api.CodeNotFound},
		{"paging", id.String(), "limit=101", 400, `[{limit must be an integer from 1 to 100}]`},
		{"another record", uuid.NewString(), "", 404, api.CodeNotFound},
		{"the service failing", id.String(), "limit=7", 500, api.CodeInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := request(true, c.id, c.query, "")
			api.ListOn(ctx, api.Resource{NotFound: errThingNotFound}, list, thingOut)
			status, code, fields := answer(t, ctx)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, ctx.Response.Body())
			}
			got := string(ctx.Response.Body())
			switch {
			case status == 400:
				got = fmt.Sprint(fields)
			case status >= 300:
				got = code
			}
			if got != c.want {
				t.Fatalf("answered %s, want %s", got, c.want)
			}
		})
	}
	ctx := request(false, id.String(), "", "")
	api.ListOn(ctx, api.Resource{}, list, thingOut)
	if ctx.Response.StatusCode() != fasthttp.StatusUnauthorized {
		t.Fatalf("without a caller: %d", ctx.Response.StatusCode())
	}
}
