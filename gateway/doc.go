// Package gateway is the HTTP edge of the service: one fasthttp server whose router serves
// every /v1 route of the spec, the middleware every request passes (request id, panic
// recovery, access log and metrics, then auth, IP whitelist, rate limit and idempotency on
// the protected routes), the health and readiness probes, Prometheus metrics and the
// OpenAPI document.
//
// Handlers depend on small interfaces declared here (an authenticator, an order submitter,
// ...), never on the structs of the engine or the payments services, so those can move out
// of process later. routes.go lists every route in one place.
package gateway
