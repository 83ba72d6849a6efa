package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"reflect"
	"strings"

	"github.com/valyala/fasthttp"
)

// Decode reads a JSON object body into dst (a pointer to a struct). Unknown fields are
// ignored. It answers, as an *Error:
//   - 415 UNSUPPORTED_MEDIA_TYPE when the Content-Type is not application/json;
//   - 400 INVALID_JSON for an empty or malformed body, or trailing data;
//   - 400 VALIDATION_ERROR listing every top-level field of the wrong type or out of range.
//
// Missing required fields are the caller's to check, with a Validator.
func Decode(ctx *fasthttp.RequestCtx, dst any) error {
	ct := string(ctx.Request.Header.ContentType())
	if ct != "" || len(ctx.PostBody()) > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return NewError(CodeUnsupportedMedia, "Content-Type must be application/json")
		}
	}
	return DecodeBytes(ctx.PostBody(), dst)
}

// DecodeBytes is Decode without the header check.
func DecodeBytes(body []byte, dst any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		var v any
		if err := json.Unmarshal(body, &v); err != nil && len(body) > 0 {
			return NewError(CodeInvalidJSON, syntaxDetail(err))
		}
		return NewError(CodeInvalidJSON, "request body must be a JSON object")
	}
	// Fast path: a well-formed body decodes in one pass. Only a failing body pays for the
	// field-by-field pass that reports every wrong field.
	if err := json.Unmarshal(body, dst); err == nil {
		return nil
	}
	rv := reflect.ValueOf(dst).Elem()
	rv.SetZero()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return NewError(CodeInvalidJSON, "request body must be a JSON object")
		}
		return NewError(CodeInvalidJSON, syntaxDetail(err))
	}
	if fields == nil {
		return NewError(CodeInvalidJSON, "request body must be a JSON object")
	}

	// Each top-level field on its own, so every wrong one is reported, not just the first.
	var fieldErrs []FieldError
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		name := jsonName(sf)
		if name == "" {
			continue
		}
		raw, ok := fields[name]
		if !ok {
			// encoding/json matches keys case-insensitively; so does this pass.
			for k, v := range fields {
				if strings.EqualFold(k, name) {
					raw, ok = v, true
					break
				}
			}
			if !ok {
				continue
			}
		}
		fv := reflect.New(sf.Type)
		if err := json.Unmarshal(raw, fv.Interface()); err != nil {
			fieldErrs = append(fieldErrs, typeError(name, sf.Type, err))
			continue
		}
		rv.Field(i).Set(fv.Elem())
	}
	if len(fieldErrs) > 0 {
		return &Error{Code: CodeValidation, Detail: "request validation failed", Fields: fieldErrs}
	}
	return nil
}

func jsonName(sf reflect.StructField) string {
	if !sf.IsExported() {
		return ""
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return sf.Name
	}
	return name
}

func typeError(field string, t reflect.Type, err error) FieldError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		path := field
		if typeErr.Field != "" {
			path = field + "." + typeErr.Field
		}
		if typeErr.Value == "number" && isNumber(typeErr.Type) {
			return FieldError{path, "is out of range"}
		}
		return FieldError{path, "must be " + jsonKind(typeErr.Type)}
	}
	var ve *Error
	if errors.As(err, &ve) && len(ve.Fields) > 0 { // custom UnmarshalJSON reporting a field
		return ve.Fields[0]
	}
	return FieldError{field, "must be " + jsonKind(t)}
}

func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a valid value"
}

func syntaxDetail(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error())
	}
	if errors.Is(err, errors.New("unexpected end of JSON input")) || strings.Contains(err.Error(), "unexpected end") {
		return "malformed JSON: unexpected end of input"
	}
	return "malformed JSON"
}
