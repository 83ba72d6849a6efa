package products_test

import (
	"encoding/json"
	"testing"

	"svc/payments"
	"svc/payments/products"
)

// TestPatchRequire: a field that refuses null keeps its value when unset and takes a sent
// value; null, or for RequireOneOf a value it does not take, is the field's problem and
// leaves the value as it was.
func TestPatchRequire(t *testing.T) {
	require := func(p *payments.Problems, in products.Patch[string], dst *string) { in.Require(p, "status", dst) }
	oneOf := func(p *payments.Problems, in products.Patch[string], dst *string) {
		products.RequireOneOf(p, "status", in, dst, "active", "inactive")
	}
	const notNull, notOneOf = "invalid request: status must not be null", "invalid request: status must be one of [active inactive]"
	for _, c := range []struct {
		name                string
		apply               func(*payments.Problems, products.Patch[string], *string)
		body, want, problem string
	}{
		{"Require unset", require, `{}`, "active", ""},
		{"Require a value", require, `{"status":"new"}`, "new", ""},
		{"Require empty", require, `{"status":""}`, "", ""},
		{"Require null", require, `{"status":null}`, "active", notNull},
		{"RequireOneOf unset", oneOf, `{}`, "active", ""},
		{"RequireOneOf one of them", oneOf, `{"status":"inactive"}`, "inactive", ""},
		{"RequireOneOf another", oneOf, `{"status":"paused"}`, "active", notOneOf},
		{"RequireOneOf null", oneOf, `{"status":null}`, "active", notOneOf},
	} {
		var in struct {
			Status products.Patch[string] `json:"status"`
		}
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		var p payments.Problems
		got := "active"
		c.apply(&p, in.Status, &got)
		problem := ""
		if err := p.Err(); err != nil {
			problem = err.Error()
		}
		if got != c.want || problem != c.problem {
			t.Errorf("%s: %q %q, want %q %q", c.name, got, problem, c.want, c.problem)
		}
	}
}
