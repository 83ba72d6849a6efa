package gateway

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_http_requests_total",
			Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "svc_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route template.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *httpMetrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}

func (s *Server) metricsHandler() fasthttp.RequestHandler {
	if s.deps.Gatherer == nil {
		return func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusNotFound) }
	}
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.deps.Gatherer, promhttp.HandlerOpts{}))
}
