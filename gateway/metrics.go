package gateway

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// series caches the children per (method, route, status): the vectors' own label
	// hashing costs more than the rest of a small request.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct {
	method, route string
	status        int
}

type series struct {
	count   prometheus.Counter
	latency prometheus.Observer
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

// knownMethods are the methods that get their own label; any other token fasthttp accepts
// (clients can invent them) is counted as OTHER, so a client cannot grow /metrics.
var knownMethods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true,
	"DELETE": true, "OPTIONS": true, "CONNECT": true, "TRACE": true,
}

// methodLabel is the metrics label of a request method.
func methodLabel(method []byte) string {
	if knownMethods[string(method)] {
		return string(method)
	}
	return "OTHER"
}

func (m *httpMetrics) observe(method []byte, route string, status int, d time.Duration) {
	if !knownMethods[string(method)] {
		method = otherMethod
	}
	// string(method) in a map key does not allocate.
	v, ok := m.series.Load(seriesKey{string(method), route, status})
	if !ok {
		k := seriesKey{methodLabel(method), route, status}
		v, _ = m.series.LoadOrStore(k, &series{
			count:   m.requests.WithLabelValues(k.method, route, strconv.Itoa(status)),
			latency: m.latency.WithLabelValues(k.method, route),
		})
	}
	sr := v.(*series)
	sr.count.Inc()
	sr.latency.Observe(d.Seconds())
}

var otherMethod = []byte("OTHER")

func (s *Server) metricsHandler() fasthttp.RequestHandler {
	if s.deps.Gatherer == nil {
		return func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusNotFound) }
	}
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.deps.Gatherer, promhttp.HandlerOpts{}))
}
