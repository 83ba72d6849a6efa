package api_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
)

// answer decodes what a helper wrote to ctx: its status, code and field errors.
func answer(t *testing.T, ctx *fasthttp.RequestCtx) (int, string, []api.FieldError) {
	t.Helper()
	var env struct {
		Message string           `json:"message"`
		Errors  []api.FieldError `json:"errors"`
	}
	if len(ctx.Response.Body()) > 0 {
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
			t.Fatalf("body %q: %v", ctx.Response.Body(), err)
		}
	}
	return ctx.Response.StatusCode(), env.Message, env.Errors
}

func TestTenantAndTarget(t *testing.T) {
	merchant := uuid.New()
	id := uuid.New()
	notFound := &payments.Error{Code: api.CodeNotFound, Message: "thing not found"}
	for _, c := range []struct {
		name      string
		principal bool
		id        string
		ok        bool
		status    int
		code      string
	}{
		{"a caller and a UUID", true, id.String(), true, 200, ""},
		{"no caller is 401", false, id.String(), false, 401, api.CodeUnauthorized},
		{"an id that is not a UUID is the resource's 404", true, "nope", false, 404, api.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := new(fasthttp.RequestCtx)
			if c.principal {
				api.SetPrincipal(ctx, api.Principal{MerchantID: merchant, Environment: api.Live})
			}
			ctx.SetUserValue("id", c.id)
			tn, got, ok := api.Target(ctx, notFound)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			status, code, _ := answer(t, ctx)
			if status != c.status || code != c.code {
				t.Fatalf("answered %d %q, want %d %q", status, code, c.status, c.code)
			}
			if ok && (tn != payments.Tenant{MerchantID: merchant, Environment: payments.Live} || got != id) {
				t.Fatalf("Target = %+v %s", tn, got)
			}
		})
	}
}

func TestQuery(t *testing.T) {
	for _, c := range []struct {
		name, query string
		allowed     []string
		want        string
		ok          bool
		message     string
	}{
		{"absent is empty", "", []string{"A", "B"}, "", true, ""},
		{"any value without a list", "status=x", nil, "x", true, ""},
		{"an allowed value", "status=B", []string{"A", "B"}, "B", true, ""},
		{"another value is 400 naming the choices", "status=C", []string{"A", "B"}, "", false, "must be one of A, B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := new(fasthttp.RequestCtx)
			ctx.Request.SetRequestURI("/x?" + c.query)
			got, ok := api.Query(ctx, "status", c.allowed...)
			if got != c.want || ok != c.ok {
				t.Fatalf("Query = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
			if !ok {
				status, code, fields := answer(t, ctx)
				if status != 400 || code != api.CodeValidation || len(fields) != 1 || fields[0] != (api.FieldError{Field: "status", Message: c.message}) {
					t.Fatalf("answered %d %s %+v", status, code, fields)
				}
			}
		})
	}
}

func TestUUIDField(t *testing.T) {
	id := uuid.New().String()
	bad := "12"
	var v api.Validator
	if got := api.UUIDField(&v, "a", nil); got != nil || !v.Ok() {
		t.Fatalf("absent: %v, ok %v", got, v.Ok())
	}
	if got := api.UUIDField(&v, "b", &id); got == nil || got.String() != id || !v.Ok() {
		t.Fatalf("good: %v, ok %v", got, v.Ok())
	}
	if got := api.UUIDField(&v, "c", &bad); got != nil || v.Ok() {
		t.Fatalf("bad: %v, ok %v", got, v.Ok())
	}
	if e := api.From(v.Err()); len(e.Fields) != 1 || e.Fields[0] != (api.FieldError{Field: "c", Message: "must be a UUID"}) {
		t.Fatalf("errors %+v", e.Fields)
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 1, 2, 16, 4, 5, 123456789, time.FixedZone("WAT", 3600))
	if got, want := api.Time(at), "2026-01-02T15:04:05.123Z"; got != want {
		t.Fatalf("Time = %q, want %q", got, want)
	}
	if got := string(api.AppendTime([]byte("at "), at)); got != "at 2026-01-02T15:04:05.123Z" {
		t.Fatalf("AppendTime = %q", got)
	}
	if api.TimePtr(nil) != nil || *api.TimePtr(&at) != "2026-01-02T15:04:05.123Z" {
		t.Fatal("TimePtr")
	}
}

func TestFromListsEveryFieldOfAValidationError(t *testing.T) {
	var p payments.Problems
	p.Add("name", "is required")
	p.Add("price", "must be positive")
	e := api.From(fmt.Errorf("create: %w", p.Err()))
	want := []api.FieldError{{Field: "name", Message: "is required"}, {Field: "price", Message: "must be positive"}}
	if e.Code != api.CodeValidation || e.Status() != 400 || fmt.Sprint(e.Fields) != fmt.Sprint(want) {
		t.Fatalf("From = %+v", e)
	}
	fe := api.From(&payments.FieldError{Field: "amount", Message: "must be positive"})
	if fe.Code != api.CodeValidation || len(fe.Fields) != 1 || fe.Fields[0] != (api.FieldError{Field: "amount", Message: "must be positive"}) {
		t.Fatalf("From(FieldError) = %+v", fe)
	}
	re := api.From(&payments.Error{Code: api.CodeInvalidState, Message: "no"})
	if re.Code != api.CodeInvalidState || re.Detail != "no" {
		t.Fatalf("From(Error) = %+v", re)
	}
}
