package api

import (
	"testing"
)

type fuzzBody struct {
	Name   string            `json:"name"`
	Amount string            `json:"amount"`
	Count  int               `json:"count"`
	Flag   *bool             `json:"flag"`
	Items  []struct{ X int } `json:"items"`
	Meta   map[string]string `json:"meta"`
}

// FuzzDecodeBytes: any body gives nil or an *Error with a known code, never a panic, and a
// VALIDATION_ERROR always names its fields.
func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"a","count":1}`, `{"count":"x"}`, `[`, `null`, `{"items":[{"X":"y"}]}`, `{"count":1e400}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var dst fuzzBody
		err := DecodeBytes(body, &dst)
		if err == nil {
			return
		}
		ae, ok := err.(*Error)
		if !ok {
			t.Fatalf("not an *Error: %T %v", err, err)
		}
		switch ae.Code {
		case CodeInvalidJSON:
		case CodeValidation:
			if len(ae.Fields) == 0 {
				t.Fatalf("validation error without fields for %q", body)
			}
		default:
			t.Fatalf("unexpected code %s", ae.Code)
		}
	})
}

func TestDecodeNestedFieldPath(t *testing.T) {
	var dst fuzzBody
	err := DecodeBytes([]byte(`{"items":[{"X":"y"}],"meta":{"a":1}}`), &dst)
	ae, _ := err.(*Error)
	if ae == nil || len(ae.Fields) != 2 || ae.Fields[0].Field != "items.X" || ae.Fields[1].Field != "meta" {
		t.Fatalf("%+v", ae.Fields)
	}
}

func TestStatusTable(t *testing.T) {
	cases := map[string]int{
		CodeValidation: 400, CodeInvalidOTP: 400, CodeUnauthorized: 401, CodeTokenRevoked: 401,
		CodeIPNotWhitelisted: 403, CodeSandboxOnly: 403, CodeNotFound: 404, CodeEmailInUse: 409,
		CodeIdempotencyInUse: 409, CodeAlreadyVerified: 422, CodeInsufficientBalance: 422,
		CodeIdempotencyKeyReused: 422, CodeRateLimited: 429, CodeEngineBusy: 503, "SOMETHING_NEW": 500,
	}
	for code, want := range cases {
		if got := Status(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}
