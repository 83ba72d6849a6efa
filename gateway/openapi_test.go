package gateway_test

import (
	"testing"

	"svc/gateway"
)

// assertRoutesDocumented fails for every route registered on the router that the OpenAPI
// document does not describe, and for every documented operation with no route.
func assertRoutesDocumented(t *testing.T, srv *gateway.Server) {
	t.Helper()
	registered := map[string]bool{}
	for method, paths := range srv.Router().List() {
		for _, p := range paths {
			registered[method+" "+p] = true
			if !srv.Doc().Has(method, p) {
				t.Errorf("route %s %s is not in the OpenAPI document", method, p)
			}
		}
	}
	for _, op := range srv.Doc().Ops() {
		if !registered[op.Method+" "+op.Path] {
			t.Errorf("OpenAPI documents %s %s but no route serves it", op.Method, op.Path)
		}
	}
}
