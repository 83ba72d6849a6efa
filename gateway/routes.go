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

	for _, rs := range s.deps.Routes {
		rs.Register(r, s.protect)
		s.doc.Add(rs.Docs()...)
	}
}
