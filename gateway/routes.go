package gateway

// routes registers every route of the server and its documentation. Routes owned by other
// packages come in through Deps.Routes.
func (s *Server) routes() {
	r := s.router
	for _, prefix := range []string{"", "/v1"} {
		r.GET(prefix+"/health", s.health)
		r.GET(prefix+"/ready", s.ready)
	}
	r.GET("/metrics", s.metricsHandler())
	r.GET("/v1/openapi.json", s.openapiJSON)
	s.doc.Add(systemDocs()...)

	scoper, _ := s.deps.Auth.(interface {
		RequiredScope(method, path string) string
	})
	for _, rs := range s.deps.Routes {
		rs.Register(r, s.protect)
		ops := rs.Docs()
		for i := range ops {
			if scoper != nil && ops[i].Scope == "" {
				ops[i].Scope = scoper.RequiredScope(ops[i].Method, ops[i].Path)
			}
		}
		s.doc.Add(ops...)
	}
}
