package api

import (
	"encoding/json"
	"strings"
	"svc/payments"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// UUIDField parses the optional UUID request field s (nil when absent); a malformed one is
// recorded in v as field's error and gives nil.
func UUIDField(v *Validator, field string, s *string) *uuid.UUID {
	if s == nil {
		return nil
	}
	id, err := uuid.Parse(*s)
	if err != nil {
		v.Add(field, "must be a UUID")
		return nil
	}
	return &id
}

// Query reads the query parameter name and, when allowed is given, checks that it is one of
// them (an absent parameter is ""); a value outside allowed is answered 400 and false.
func Query(ctx *fasthttp.RequestCtx, name string, allowed ...string) (string, bool) {
	v := string(ctx.QueryArgs().Peek(name))
	if v == "" || len(allowed) == 0 {
		return v, true
	}
	for _, a := range allowed {
		if a == v {
			return v, true
		}
	}
	Fail(ctx, Invalid(name, "must be one of "+strings.Join(allowed, ", ")))
	return "", false
}

// StrPtr is nil (a JSON null) for "", else &s.
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Num is a decimal written as a JSON number (the spec's "number" amounts), digit for digit:
// never through a float. The empty Num is 0.
type Num string

// MarshalJSON writes the digits as they are.
func (n Num) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	return []byte(n), nil
}

// NumText returns a request number's text, or nil when absent.
func NumText(n *json.Number) *string {
	if n == nil {
		return nil
	}
	s := n.String()
	return &s
}

// invalidFields is the 400 VALIDATION_ERROR listing every field of ve.
func invalidFields(ve *payments.ValidationError) *Error {
	fields := make([]FieldError, len(ve.Fields))
	for i, f := range ve.Fields {
		fields[i] = FieldError{Field: f.Field, Message: f.Message}
	}
	return &Error{Code: CodeValidation, Detail: "request validation failed", Fields: fields}
}
