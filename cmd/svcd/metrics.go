package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"svc/persistence/projection"
)

// domainSource is what one environment's exchange already exposes for metrics.
type domainSource struct {
	env        string
	offset     func() uint64 // last journal offset the engine holds
	failed     func() bool   // fail-stopped after a journal error
	projection func() projection.Stats
}

// domainCollector exports the domain series read at scrape time from what the packages
// expose (engine offset and fail-stop, projector Stats) and from the job queue's table.
// Labels are bounded: env (sandbox, live), queue and state (river's fixed sets).
type domainCollector struct {
	sources []domainSource
	pool    *pgxpool.Pool

	engineOffset, engineFailed             *prometheus.Desc
	projApplied, projLag, projCommits      *prometheus.Desc
	projRows, jobs, jobsOldestAvailableAge *prometheus.Desc
}

func newDomainCollector(pool *pgxpool.Pool, sources []domainSource) *domainCollector {
	env := []string{"env"}
	return &domainCollector{
		sources:      sources,
		pool:         pool,
		engineOffset: prometheus.NewDesc("svc_engine_journal_offset", "Last journal offset (batch record) the engine holds.", env, nil),
		engineFailed: prometheus.NewDesc("svc_engine_failed", "1 when the engine has fail-stopped after a journal error.", env, nil),
		projApplied:  prometheus.NewDesc("svc_projection_applied_offset", "Last journal offset written to PostgreSQL by the projector.", env, nil),
		projLag:      prometheus.NewDesc("svc_projection_lag_records", "Durable journal records the projector has not written yet.", env, nil),
		projCommits:  prometheus.NewDesc("svc_projection_commits_total", "Projector transactions committed.", env, nil),
		projRows:     prometheus.NewDesc("svc_projection_rows_total", "Order and trade rows written by the projector.", env, nil),
		jobs:         prometheus.NewDesc("svc_jobs", "Jobs in the durable queue by queue and state.", []string{"queue", "state"}, nil),
		jobsOldestAvailableAge: prometheus.NewDesc("svc_jobs_oldest_available_seconds",
			"Age of the oldest job waiting to run, by queue (0 when none waits).", []string{"queue"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *domainCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.engineOffset, c.engineFailed, c.projApplied, c.projLag, c.projCommits, c.projRows, c.jobs, c.jobsOldestAvailableAge} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The job query is bounded to one second: a slow
// database drops the job series from that scrape, never hangs it.
func (c *domainCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sources {
		if s.offset != nil {
			ch <- prometheus.MustNewConstMetric(c.engineOffset, prometheus.GaugeValue, float64(s.offset()), s.env)
		}
		if s.failed != nil {
			v := 0.0
			if s.failed() {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.engineFailed, prometheus.GaugeValue, v, s.env)
		}
		if s.projection != nil {
			st := s.projection()
			ch <- prometheus.MustNewConstMetric(c.projApplied, prometheus.GaugeValue, float64(st.Applied), s.env)
			ch <- prometheus.MustNewConstMetric(c.projLag, prometheus.GaugeValue, float64(st.Lag), s.env)
			ch <- prometheus.MustNewConstMetric(c.projCommits, prometheus.CounterValue, float64(st.Commits), s.env)
			ch <- prometheus.MustNewConstMetric(c.projRows, prometheus.CounterValue, float64(st.Rows), s.env)
		}
	}
	if c.pool == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT queue, state::text, count(*),
		COALESCE(EXTRACT(EPOCH FROM now() - min(scheduled_at) FILTER (WHERE state = 'available')), 0)
		FROM river_job GROUP BY queue, state`)
	if err != nil {
		return
	}
	defer rows.Close()
	oldest := map[string]float64{}
	for rows.Next() {
		var queue, state string
		var n int64
		var age float64
		if err := rows.Scan(&queue, &state, &n, &age); err != nil {
			return
		}
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), queue, state)
		if age > oldest[queue] {
			oldest[queue] = age
		}
		if _, ok := oldest[queue]; !ok {
			oldest[queue] = 0
		}
	}
	for q, age := range oldest {
		ch <- prometheus.MustNewConstMetric(c.jobsOldestAvailableAge, prometheus.GaugeValue, age, q)
	}
}

// domainSources lists what each environment's exchange exposes for metrics.
func (xs exchanges) domainSources() []domainSource {
	var out []domainSource
	for env, x := range xs {
		s := domainSource{env: string(env), offset: x.engine.Offset, failed: x.engine.Failed}
		if x.projector != nil {
			s.projection = x.projector.Stats
		}
		out = append(out, s)
	}
	return out
}
