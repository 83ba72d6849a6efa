// Package openapitest checks real responses against the OpenAPI document with
// github.com/getkin/kin-openapi (openapi3filter): the shared end-to-end helper
// (gateway/gatewaytest) runs every response its tests receive through a Validator, so a
// response that drifts from its documented schema fails the test that saw it.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Validator validates responses against one document.
type Validator struct {
	router routers.Router
}

// New loads and validates doc (the JSON of gateway/openapi.Doc) and prepares its router.
func New(doc []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: load: %w", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapitest: the document is not valid OpenAPI: %w", err)
	}
	d.Servers = openapi3.Servers{{URL: "/"}}
	r, err := legacy.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("openapitest: router: %w", err)
	}
	return &Validator{router: r}, nil
}

// Check validates one exchange: the response's status must be documented for the route
// (unless it is a 5xx) and a JSON body must match the documented schema. A request the
// document has no route for (a 404 or 405 of the router) is not checked. Statuses are
// enforced on /v1 operations that document a success; elsewhere (hosted pages, test
// fixtures documenting no success) only documented statuses are checked.
func (v *Validator) Check(method, target string, reqHeader http.Header, status int, respHeader http.Header, body []byte) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	u.Scheme, u.Host = "", ""
	req := &http.Request{Method: method, URL: u, Header: reqHeader, Host: "svc"}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return nil // not a documented route: nothing to check against
	}
	if route.Operation.Responses.Status(status) == nil && (status >= 500 || !strictStatus(route)) {
		return nil
	}
	ct := respHeader.Get("Content-Type")
	jsonBody := strings.HasPrefix(ct, "application/json") || (ct == "" && len(body) == 0)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: status,
		Header: respHeader,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			ExcludeResponseBody:   !jsonBody, // hosted HTML pages: the status is checked, not the markup
			MultiError:            true,
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		var me openapi3.MultiError
		if errors.As(err, &me) {
			parts := make([]string, 0, len(me))
			for _, e := range me {
				parts = append(parts, e.Error())
			}
			err = errors.New(strings.Join(parts, "\n"))
		}
		return fmt.Errorf("%s %s -> %d does not match the OpenAPI document (%s %s): %v\nbody: %.2000s",
			method, u.Path, status, route.Method, route.Path, err, body)
	}
	return nil
}

// strictStatus reports whether every status of route must be documented: /v1 API
// operations that document at least one success.
func strictStatus(route *routers.Route) bool {
	if !strings.HasPrefix(route.Path, "/v1/") {
		return false
	}
	for code := range route.Operation.Responses.Map() {
		if strings.HasPrefix(code, "2") {
			return true
		}
	}
	return false
}
