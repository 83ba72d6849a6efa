package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
)

type healthBody struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// AppendJSON encodes the body by hand (api.JSONAppender): /health is what load balancers
// and the skeleton benchmark hit.
func (h healthBody) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = api.AppendString(b, h.Status)
	b = append(b, `,"version":`...)
	b = api.AppendString(b, h.Version)
	b = append(b, `,"commit":`...)
	b = api.AppendString(b, h.Commit)
	return append(b, '}')
}

func (s *Server) health(ctx *fasthttp.RequestCtx) {
	api.OK(ctx, healthBody{Status: "ok", Version: s.cfg.Version, Commit: s.cfg.Commit})
}

// ready checks every dependency within two seconds; any failure is 503 NOT_READY naming it.
func (s *Server) ready(ctx *fasthttp.RequestCtx) {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	var failed []string
	for _, rc := range s.deps.Ready {
		if err := rc.Check(c); err != nil && rc.Degraded {
			checks[rc.Name] = "degraded: " + err.Error()
			continue
		} else if err != nil {
			checks[rc.Name] = err.Error()
			failed = append(failed, rc.Name)
			continue
		}
		checks[rc.Name] = "ok"
	}
	if len(failed) > 0 {
		api.Fail(ctx, api.Errorf(api.CodeNotReady, "not ready: %s", strings.Join(failed, ", ")))
		return
	}
	api.OK(ctx, map[string]any{"status": "ready", "checks": checks})
}

func (s *Server) openapiJSON(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBody(s.docJSON)
}

func systemDocs() []openapi.Op {
	health := openapi.Obj(map[string]openapi.Schema{"status": openapi.Str("ok"), "version": openapi.Str("the build's version (git describe)"), "commit": openapi.Str("the build's commit")})
	ready := openapi.Obj(map[string]openapi.Schema{"status": openapi.Str("ready"), "checks": openapi.Schema{"type": "object", "additionalProperties": openapi.Str("")}})
	var ops []openapi.Op
	for _, prefix := range []string{"", "/v1"} {
		ops = append(ops,
			openapi.Op{Method: "GET", Path: prefix + "/health", Tag: "system", Summary: "Liveness: the process answers", Public: true,
				Responses: map[int]openapi.Response{200: {Description: "alive", Data: health}}},
			openapi.Op{Method: "GET", Path: prefix + "/ready", Tag: "system", Summary: "Readiness: every dependency (PostgreSQL, journal, engine) answers", Public: true,
				Responses: map[int]openapi.Response{200: {Description: "ready", Data: ready}}, Errors: []string{api.CodeNotReady}},
		)
	}
	ops = append(ops,
		openapi.Op{Method: "GET", Path: "/metrics", Tag: "system", Summary: "Prometheus metrics", Public: true,
			Responses: map[int]openapi.Response{200: {Description: "Prometheus text format", ContentType: "text/plain"}}},
		openapi.Op{Method: "GET", Path: "/v1/openapi.json", Tag: "system", Summary: "This OpenAPI document", Public: true,
			Responses: map[int]openapi.Response{200: {Description: "OpenAPI 3 document", ContentType: "application/json", Data: openapi.Schema{"type": "object"}}}},
	)
	return ops
}
