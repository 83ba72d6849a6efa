package products_test

import (
	"encoding/json"
	"testing"

	"svc/payments"
	"svc/payments/products"
)

// TestPatchRequire: a field that refuses null keeps its value when unset, takes a sent
// value, and answers null with the field's problem, leaving the value as it was.
func TestPatchRequire(t *testing.T) {
	for _, c := range []struct {
		body, want, problem string
	}{
		{`{}`, "old", ""},
		{`{"name":"new"}`, "new", ""},
		{`{"name":""}`, "", ""},
		{`{"name":null}`, "old", "invalid request: name must not be null"},
	} {
		var in struct {
			Name products.Patch[string] `json:"name"`
		}
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		var p payments.Problems
		got := "old"
		in.Name.Require(&p, "name", &got)
		problem := ""
		if err := p.Err(); err != nil {
			problem = err.Error()
		}
		if got != c.want || problem != c.problem {
			t.Errorf("%s: %q %q, want %q %q", c.body, got, problem, c.want, c.problem)
		}
	}
}

// TestRequireOneOf: a status-like field takes one of its values; null or another value is
// the field's problem, naming the values, and leaves the status as it was.
func TestRequireOneOf(t *testing.T) {
	for _, c := range []struct {
		body, want, problem string
	}{
		{`{}`, "active", ""},
		{`{"status":"inactive"}`, "inactive", ""},
		{`{"status":"paused"}`, "active", "invalid request: status must be one of [active inactive]"},
		{`{"status":null}`, "active", "invalid request: status must be one of [active inactive]"},
	} {
		var in struct {
			Status products.Patch[string] `json:"status"`
		}
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		var p payments.Problems
		got := "active"
		products.RequireOneOf(&p, "status", in.Status, &got, "active", "inactive")
		problem := ""
		if err := p.Err(); err != nil {
			problem = err.Error()
		}
		if got != c.want || problem != c.problem {
			t.Errorf("%s: %q %q, want %q %q", c.body, got, problem, c.want, c.problem)
		}
	}
}
