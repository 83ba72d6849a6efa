// Package openapi builds the OpenAPI 3 document of the API from operation descriptions that
// each resource's handlers declare beside their routes. The document is served at
// /v1/openapi.json; a test checks every route of the router is in it, and another validates
// the whole document with github.com/getkin/kin-openapi.
//
// Resource schemas wrapped in Named become components (#/components/schemas/NAME) and are
// referenced wherever they appear; the list shapes built from them are components too:
// {items, meta} is NAMEPage, {items, next_cursor} is NAMECursorPage and an array is NAMEList
// (with the paging in the envelope's top-level meta). Authenticated operations carry the
// rate-limit response headers; operations marked Idempotent (or whose description names
// X-Idempotency-Key) carry the idempotency key header parameter.
package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Schema is a JSON Schema fragment as OpenAPI 3.0 writes it.
type Schema map[string]any

// Param is a query or path parameter.
type Param struct {
	Name        string
	In          string // "query" or "path"; path parameters are found from the path itself
	Description string
	Required    bool
	Schema      Schema
}

// Op describes one operation.
type Op struct {
	Method      string
	Path        string // router syntax: /v1/things/{id}
	Tag         string
	Summary     string
	Description string
	Public      bool // no authentication
	Query       []Param
	Body        Schema           // request body (application/json); nil for none
	Responses   map[int]Response // status -> response; errors are added from Errors
	Errors      []string         // error codes this operation answers with
	// Idempotent marks a POST that accepts X-Idempotency-Key (also inferred from a
	// description naming the header); IdempotencyKeyAlso adds the Idempotency-Key spelling.
	Idempotent         bool
	IdempotencyKeyAlso bool
	// Scope is what an API key needs for this operation (x-required-scope); the gateway
	// fills it from the authenticator's scope table.
	Scope string
}

// Response is one documented response.
type Response struct {
	Description string
	Data        Schema // the envelope's data; nil for none
	ContentType string // default application/json (enveloped)
	Example     any    // optional example of the envelope's data
}

// Doc collects operations.
type Doc struct {
	Title, Version, Description string
	ops                         []Op
	codes                       map[string]int
}

// New returns an empty document; codes maps error codes to statuses for error responses.
func New(title, version, description string, codes map[string]int) *Doc {
	return &Doc{Title: title, Version: version, Description: description, codes: codes}
}

// Add appends operations.
func (d *Doc) Add(ops ...Op) { d.ops = append(d.ops, ops...) }

// Has reports whether method and path are documented.
func (d *Doc) Has(method, path string) bool {
	for _, op := range d.ops {
		if op.Method == method && op.Path == path {
			return true
		}
	}
	return false
}

// Ops returns the documented operations.
func (d *Doc) Ops() []Op { return append([]Op(nil), d.ops...) }

// JSON renders the OpenAPI 3.0 document. It fails when two different schemas were given the
// same component name.
func (d *Doc) JSON() ([]byte, error) {
	r := &renderer{doc: d, schemas: map[string]any{}}
	for name, s := range sharedSchemas() {
		r.schemas[name] = s
	}
	paths := map[string]map[string]any{}
	for _, op := range d.ops {
		item := paths[op.Path]
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = r.operation(op)
	}
	if r.err != nil {
		return nil, r.err
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": d.Title, "version": d.Version, "description": d.Description},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-Api-Key",
					"description": "svc_sk_test_... (sandbox) or svc_sk_live_... (live)"},
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
					"description": "access token from POST /v1/auth/login (15 minutes); sandbox unless X-Svc-Environment: live"},
			},
			"schemas":    r.schemas,
			"parameters": sharedParameters(),
			"headers":    sharedHeaders(),
		},
		"security": []any{map[string]any{"apiKey": []any{}}, map[string]any{"bearer": []any{}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// renderer turns Named schemas into components while rendering operations.
type renderer struct {
	doc     *Doc
	schemas map[string]any
	err     error
}

// nameKey marks a Named schema until it is rendered; it never reaches the document.
const nameKey = "x-svc-component"

// Named gives a resource schema a component name: the document holds it once under
// #/components/schemas/NAME and references it wherever it is used.
func Named(name string, s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		out[k] = v
	}
	out[nameKey] = name
	return out
}

// NameOf returns the component name of a Named schema, or "".
func NameOf(s Schema) string {
	n, _ := s[nameKey].(string)
	return n
}

// component registers s (already rendered) under name and returns a reference to it.
func (r *renderer) component(name string, s Schema) Schema {
	if prev, ok := r.schemas[name]; ok {
		a, _ := json.Marshal(prev)
		b, _ := json.Marshal(s)
		if string(a) != string(b) && r.err == nil {
			r.err = fmt.Errorf("openapi: two different schemas are named %s:\n%s\n%s", name, a, b)
		}
	} else {
		r.schemas[name] = s
	}
	return Ref(name)
}

// schema renders s: Named schemas become references, list shapes of named items become
// their list components, page meta objects become PageMeta.
func (r *renderer) schema(s Schema) Schema {
	if s == nil {
		return nil
	}
	if name := NameOf(s); name != "" {
		plain := Schema{}
		for k, v := range s {
			if k != nameKey {
				plain[k] = v
			}
		}
		return r.component(name, r.walk(plain))
	}
	if isPageMeta(s) {
		return Ref("PageMeta")
	}
	if props, ok := s["properties"].(map[string]Schema); ok && s["type"] == "object" && len(props) == 2 {
		if items, ok := props["items"]; ok && items["type"] == "array" {
			if it, ok := items["items"].(Schema); ok && NameOf(it) != "" {
				if _, ok := props["meta"]; ok {
					ref := r.schema(it)
					return r.component(NameOf(it)+"Page", Obj(map[string]Schema{"items": Arr(ref), "meta": Ref("PageMeta")}, "items", "meta"))
				}
				if _, ok := props["next_cursor"]; ok {
					ref := r.schema(it)
					return r.component(NameOf(it)+"CursorPage", Obj(map[string]Schema{"items": Arr(ref),
						"next_cursor": Nullable(Str("pass as cursor for the next page; null on the last page"))}, "items", "next_cursor"))
				}
			}
		}
	}
	if s["type"] == "array" {
		if it, ok := s["items"].(Schema); ok && NameOf(it) != "" {
			return r.component(NameOf(it)+"List", Arr(r.schema(it)))
		}
	}
	return r.walk(s)
}

// walk renders the sub-schemas of s (properties, items, additionalProperties).
func (r *renderer) walk(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		switch k {
		case "properties":
			if props, ok := v.(map[string]Schema); ok {
				np := map[string]Schema{}
				for name, p := range props {
					np[name] = r.schema(p)
				}
				v = np
			}
		case "items", "additionalProperties":
			if sub, ok := v.(Schema); ok {
				v = r.schema(sub)
			}
		case "oneOf", "anyOf", "allOf":
			if subs, ok := v.([]Schema); ok {
				ns := make([]Schema, len(subs))
				for i, sub := range subs {
					ns[i] = r.schema(sub)
				}
				v = ns
			}
		}
		out[k] = v
	}
	return out
}

func isPageMeta(s Schema) bool {
	props, ok := s["properties"].(map[string]Schema)
	if !ok || len(props) != 4 {
		return false
	}
	for _, k := range []string{"total", "page", "limit", "total_pages"} {
		if _, ok := props[k]; !ok {
			return false
		}
	}
	return true
}

// idempotent reports whether op takes X-Idempotency-Key.
func idempotent(op Op) bool {
	return op.Idempotent || op.IdempotencyKeyAlso || strings.Contains(op.Description, "X-Idempotency-Key")
}

func (r *renderer) operation(op Op) map[string]any {
	d := r.doc
	o := map[string]any{
		"summary":     op.Summary,
		"operationId": operationID(op),
	}
	if op.Tag != "" {
		o["tags"] = []string{op.Tag}
	}
	if op.Description != "" {
		o["description"] = op.Description
	}
	if op.Public {
		o["security"] = []any{}
	}
	if op.Scope != "" {
		o["x-required-scope"] = op.Scope
	}
	var params []any
	for _, name := range pathParams(op.Path) {
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": Str("")})
	}
	for _, p := range op.Query {
		s := p.Schema
		if s == nil {
			s = Str("")
		}
		in := p.In
		if in == "" {
			in = "query"
		}
		param := map[string]any{"name": p.Name, "in": in, "required": p.Required, "schema": r.schema(s)}
		if s["type"] == "object" { // name[KEY]=VALUE (metadata filters)
			param["style"], param["explode"] = "deepObject", true
		}
		if p.Description != "" {
			param["description"] = p.Description
		}
		params = append(params, param)
	}
	if idempotent(op) {
		params = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKey"})
		if op.IdempotencyKeyAlso || strings.Contains(op.Description, "`Idempotency-Key`") {
			params = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKeyAlso"})
		}
	}
	if !op.Public {
		params = append(params, map[string]any{"$ref": "#/components/parameters/Environment"})
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != nil {
		o["requestBody"] = map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": map[string]any{"schema": r.schema(op.Body)}},
		}
	}
	responses := map[string]any{}
	for status, resp := range op.Responses {
		ct := resp.ContentType
		var schema Schema
		if ct == "" {
			ct = "application/json"
			props := map[string]Schema{"success": Bool(""), "message": Str("optional note for people")}
			if resp.Data != nil {
				props["data"] = r.schema(resp.Data)
				if resp.Data["type"] == "array" {
					props["meta"] = Ref("PageMeta")
				}
			}
			schema = Obj(props, "success")
		} else {
			schema = r.schema(resp.Data)
		}
		desc := resp.Description
		if desc == "" {
			desc = http.StatusText(status)
		}
		out := map[string]any{"description": desc}
		if schema != nil {
			media := map[string]any{"schema": schema}
			if resp.Example != nil {
				media["example"] = map[string]any{"success": true, "data": resp.Example}
			}
			out["content"] = map[string]any{ct: media}
		}
		headers := map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}}
		if !op.Public {
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
				headers[h] = map[string]any{"$ref": "#/components/headers/" + h}
			}
		}
		if idempotent(op) {
			headers["Idempotent-Replayed"] = map[string]any{"$ref": "#/components/headers/Idempotent-Replayed"}
		}
		out["headers"] = headers
		responses[strconv.Itoa(status)] = out
	}
	byStatus := map[int][]string{}
	for _, code := range op.Errors {
		byStatus[d.codes[code]] = append(byStatus[d.codes[code]], code)
	}
	if !op.Public && d.codes["UNAUTHORIZED"] != 0 {
		byStatus[401] = append(byStatus[401], "UNAUTHORIZED")
		byStatus[429] = append(byStatus[429], "RATE_LIMITED")
	}
	if !op.Public {
		// Every authenticated operation reads PostgreSQL (the key, the merchant): a slow or
		// absent database or an overloaded pool answers a prompt 503 with Retry-After.
		for _, code := range []string{"DATABASE_UNAVAILABLE", "SERVICE_UNAVAILABLE"} {
			if st := d.codes[code]; st != 0 && !slices.Contains(byStatus[st], code) {
				byStatus[st] = append(byStatus[st], code)
			}
		}
	}
	if idempotent(op) {
		byStatus[409] = append(byStatus[409], "IDEMPOTENCY_KEY_IN_USE")
		byStatus[422] = append(byStatus[422], "IDEMPOTENCY_KEY_REUSED")
		if !slices.Contains(byStatus[400], "VALIDATION_ERROR") { // a malformed key
			byStatus[400] = append(byStatus[400], "VALIDATION_ERROR")
		}
	}
	for status, codes := range byStatus {
		if status == 0 {
			continue // a code the error table does not know: documented in the description only
		}
		sort.Strings(codes)
		resp := map[string]any{
			"description": strings.Join(dedupe(codes), ", "),
			"content":     map[string]any{"application/json": map[string]any{"schema": Ref("Error")}},
		}
		switch status {
		case 429:
			resp["headers"] = map[string]any{
				"Retry-After":           map[string]any{"$ref": "#/components/headers/Retry-After"},
				"X-RateLimit-Limit":     map[string]any{"$ref": "#/components/headers/X-RateLimit-Limit"},
				"X-RateLimit-Remaining": map[string]any{"$ref": "#/components/headers/X-RateLimit-Remaining"},
				"X-RateLimit-Reset":     map[string]any{"$ref": "#/components/headers/X-RateLimit-Reset"},
			}
		case 503:
			resp["headers"] = map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/Retry-After"}}
		}
		responses[strconv.Itoa(status)] = resp
	}
	if len(responses) == 0 {
		responses["default"] = map[string]any{"description": "an error",
			"content": map[string]any{"application/json": map[string]any{"schema": Ref("Error")}}}
	}
	o["responses"] = responses
	return o
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return out
}

// operationID is method_path: get_trading_orders_id for GET /v1/trading/orders/{id}; a route
// outside /v1 gets root_ (get_root_health), so /health and /v1/health differ.
func operationID(op Op) string {
	p := strings.TrimPrefix(op.Path, "/v1/")
	if p == op.Path {
		p = "root/" + strings.TrimPrefix(op.Path, "/")
	}
	r := strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_")
	return strings.ToLower(op.Method) + "_" + r.Replace(p)
}

// Str is a string schema.
func Str(description string) Schema { return desc(Schema{"type": "string"}, description) }

// Decimal is a decimal-string schema.
func Decimal(description string) Schema {
	return desc(Schema{"type": "string", "pattern": `^[0-9]+(\.[0-9]+)?$`, "example": "1500.00"}, description)
}

// Enum is a string enum.
func Enum(values ...string) Schema {
	s := Schema{"type": "string", "enum": values}
	if len(values) > 0 {
		s["example"] = values[0]
	}
	return s
}

// Int is an integer schema.
func Int(description string) Schema { return desc(Schema{"type": "integer"}, description) }

// Bool is a boolean schema.
func Bool(description string) Schema { return desc(Schema{"type": "boolean"}, description) }

// Time is an ISO 8601 timestamp.
func Time(description string) Schema {
	return desc(Schema{"type": "string", "format": "date-time", "example": "2026-01-02T15:04:05.000Z"}, description)
}

// UUID is a UUID string.
func UUID(description string) Schema {
	return desc(Schema{"type": "string", "format": "uuid", "example": "01936f3a-8b2c-7d4e-9f10-2a3b4c5d6e7f"}, description)
}

// Arr is an array of items.
func Arr(items Schema) Schema { return Schema{"type": "array", "items": items} }

// Obj is an object with properties and required names.
func Obj(props map[string]Schema, required ...string) Schema {
	s := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Nullable marks a schema nullable.
func Nullable(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		out[k] = v
	}
	out["nullable"] = true
	return out
}

// Ref points at a component schema.
func Ref(name string) Schema { return Schema{"$ref": "#/components/schemas/" + name} }

func desc(s Schema, d string) Schema {
	if d != "" {
		s["description"] = d
	}
	return s
}
