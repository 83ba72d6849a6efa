// Package openapi builds the OpenAPI 3 document of the API from operation descriptions that
// each resource's handlers declare beside their routes. The document is served at
// /v1/openapi.json; a test checks every route of the router is in it.
package openapi

import (
	"encoding/json"
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
	// Scope is what an API key needs for this operation (x-required-scope); the gateway
	// fills it from the authenticator's scope table.
	Scope string
}

// Response is one documented response.
type Response struct {
	Description string
	Data        Schema // the envelope's data; nil for none
	ContentType string // default application/json (enveloped)
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

// JSON renders the OpenAPI 3.0 document.
func (d *Doc) JSON() ([]byte, error) {
	paths := map[string]map[string]any{}
	for _, op := range d.ops {
		item := paths[op.Path]
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = d.operation(op)
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": d.Title, "version": d.Version, "description": d.Description},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-Api-Key"},
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
			},
			"schemas": map[string]any{
				"Error": Obj(map[string]Schema{
					"success": Bool(""),
					"message": Str("machine-readable error code"),
					"detail":  Str("sentence for people"),
					"errors": Arr(Obj(map[string]Schema{
						"field":   Str(""),
						"message": Str(""),
					}, "field", "message")),
				}, "success", "message"),
			},
		},
		"security": []any{map[string]any{"apiKey": []any{}}, map[string]any{"bearer": []any{}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

func (d *Doc) operation(op Op) map[string]any {
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
		params = append(params, map[string]any{"name": p.Name, "in": in, "required": p.Required, "description": p.Description, "schema": s})
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != nil {
		o["requestBody"] = map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": map[string]any{"schema": op.Body}},
		}
	}
	responses := map[string]any{}
	for status, r := range op.Responses {
		ct := r.ContentType
		var schema Schema
		if ct == "" {
			ct = "application/json"
			props := map[string]Schema{"success": Bool(""), "message": Str("")}
			if r.Data != nil {
				props["data"] = r.Data
			}
			schema = Obj(props, "success")
		} else {
			schema = r.Data
		}
		resp := map[string]any{"description": r.Description}
		if schema != nil {
			resp["content"] = map[string]any{ct: map[string]any{"schema": schema}}
		}
		responses[strconv.Itoa(status)] = resp
	}
	byStatus := map[int][]string{}
	for _, code := range op.Errors {
		byStatus[d.codes[code]] = append(byStatus[d.codes[code]], code)
	}
	if !op.Public && d.codes["UNAUTHORIZED"] != 0 {
		byStatus[401] = append(byStatus[401], "UNAUTHORIZED")
		byStatus[429] = append(byStatus[429], "RATE_LIMITED")
	}
	for status, codes := range byStatus {
		sort.Strings(codes)
		responses[strconv.Itoa(status)] = map[string]any{
			"description": strings.Join(dedupe(codes), ", "),
			"content":     map[string]any{"application/json": map[string]any{"schema": Ref("Error")}},
		}
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

func operationID(op Op) string {
	r := strings.NewReplacer("/v1/", "", "/", "_", "{", "", "}", "", "-", "_")
	return strings.ToLower(op.Method) + "_" + r.Replace(op.Path)
}

// Str is a string schema.
func Str(description string) Schema { return desc(Schema{"type": "string"}, description) }

// Decimal is a decimal-string schema.
func Decimal(description string) Schema {
	return desc(Schema{"type": "string", "pattern": `^[0-9]+(\.[0-9]+)?$`}, description)
}

// Enum is a string enum.
func Enum(values ...string) Schema { return Schema{"type": "string", "enum": values} }

// Int is an integer schema.
func Int(description string) Schema { return desc(Schema{"type": "integer"}, description) }

// Bool is a boolean schema.
func Bool(description string) Schema { return desc(Schema{"type": "boolean"}, description) }

// Time is an ISO 8601 timestamp.
func Time(description string) Schema {
	return desc(Schema{"type": "string", "format": "date-time"}, description)
}

// UUID is a UUID string.
func UUID(description string) Schema {
	return desc(Schema{"type": "string", "format": "uuid"}, description)
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
