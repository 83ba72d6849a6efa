package openapitest_test

import (
	"net/http"
	"strings"
	"testing"

	o "svc/gateway/openapi"
	"svc/gateway/openapi/openapitest"
)

func TestCheck(t *testing.T) {
	doc := o.New("t", "1", "", map[string]int{"NOT_FOUND": 404, "UNAUTHORIZED": 401, "RATE_LIMITED": 429})
	thing := o.Named("Thing", o.Obj(map[string]o.Schema{"id": o.UUID(""), "amount": o.Decimal("")}, "id", "amount"))
	doc.Add(o.Op{Method: "GET", Path: "/v1/things/{id}", Summary: "get",
		Responses: map[int]o.Response{200: {Description: "the thing", Data: thing}}, Errors: []string{"NOT_FOUND"}})
	raw, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	v, err := openapitest.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	js := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name, path string
		status     int
		body       string
		want       string // "" = valid
	}{
		{"valid", "/v1/things/01936f3a-8b2c-7d4e-9f10-2a3b4c5d6e7f?x=1", 200, `{"success":true,"data":{"id":"01936f3a-8b2c-7d4e-9f10-2a3b4c5d6e7f","amount":"1.50"}}`, ""},
		{"missing field", "/v1/things/1", 200, `{"success":true,"data":{"id":"01936f3a-8b2c-7d4e-9f10-2a3b4c5d6e7f"}}`, "amount"},
		{"wrong type", "/v1/things/1", 200, `{"success":true,"data":{"id":"01936f3a-8b2c-7d4e-9f10-2a3b4c5d6e7f","amount":1.5}}`, "amount"},
		{"documented error", "/v1/things/1", 404, `{"success":false,"message":"NOT_FOUND"}`, ""},
		{"undocumented status", "/v1/things/1", 409, `{"success":false,"message":"CONFLICT"}`, "409"},
		{"no such route", "/v1/nothing", 404, `{}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check("GET", tc.path, http.Header{}, tc.status, js, []byte(tc.body))
			if tc.want == "" && err != nil {
				t.Fatalf("want valid: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("want an error naming %q, got %v", tc.want, err)
			}
		})
	}
}
