package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"svc/engine"
	"svc/gateway/ws"
	"svc/payments/webhooks"
	"svc/persistence/journal"
	"svc/persistence/projection"
)

// domainSource is what one environment's exchange exposes for metrics. Any func may be
// nil: its series are then absent.
type domainSource struct {
	env        string
	offset     func() uint64 // last journal offset the engine holds
	failed     func() bool   // fail-stopped after a journal error
	projection func() projection.Stats
	commands   func([]engine.CommandCount) []engine.CommandCount
	rings      func([]engine.RingStats) []engine.RingStats
	commits    func() journal.CommitStats // group commits of the journal
	hub        hubStats
}

// hubStats is what a market-data hub counts (ws.Hub).
type hubStats interface {
	Dropped() uint64
	Conflated() uint64
	Resyncs() uint64
}

// wsStats is what the WebSocket endpoint counts (ws.Server).
type wsStats interface {
	Connections() int64
	PrivateConnections() int64
	MessagesQueued() uint64
	SlowConsumers() uint64
	Blocked() uint64
	Revoked() uint64
}

// rateLimit is one limiter's refusal count; kind is one of a fixed set (see
// svc_rate_limited_total), and limiters of the same kind are summed.
type rateLimit struct {
	kind string
	n    func() uint64
}

var (
	_ hubStats = (*ws.Hub)(nil)
	_ wsStats  = (*ws.Server)(nil)
)

// domainCollector exports the domain series read at scrape time from what the packages
// expose (engine, journal, projector, WebSocket and webhook counters) and from the job
// queue's table. Labels are bounded: env (sandbox, live), kind and code (the engine's
// fixed enums), symbol (the configured pairs), visibility (public, private), outcome
// (the webhook worker's fixed set), queue and state (river's fixed sets).
type domainCollector struct {
	sources []domainSource
	pool    *pgxpool.Pool
	// Set before the server serves (Collect only runs on a scrape).
	ws       wsStats
	webhooks func() webhooks.DeliveryStats
	limits   []rateLimit

	engineOffset, engineFailed, engineCommands, engineRingDepth, engineRingCap, engineBusy *prometheus.Desc
	journalCommitSeconds, journalCommitRecords                                             *prometheus.Desc
	projApplied, projLag, projLagSeconds, projCommits, projRows                            *prometheus.Desc
	hubDropped, hubConflated, hubResyncs                                                   *prometheus.Desc
	wsConns, wsMessages, wsSlow, wsBlocked, wsRevoked                                      *prometheus.Desc
	webhookDeliveries, webhookSeconds, rateLimited                                         *prometheus.Desc
	jobs, jobsOldestAvailableAge                                                           *prometheus.Desc
}

func newDomainCollector(pool *pgxpool.Pool, sources []domainSource) *domainCollector {
	env := []string{"env"}
	d := prometheus.NewDesc
	return &domainCollector{
		sources:      sources,
		pool:         pool,
		engineOffset: d("svc_engine_journal_offset", "Last journal offset (batch record) the engine holds.", env, nil),
		engineFailed: d("svc_engine_failed", "1 when the engine has fail-stopped after a journal error.", env, nil),
		engineCommands: d("svc_engine_commands_total",
			"Commands the engine answered, by kind and result code (OK, ALREADY_APPLIED or a rejection code).", []string{"env", "kind", "code"}, nil),
		engineRingDepth: d("svc_engine_ring_depth", "Commands queued in a runner's ring, not yet taken (symbol \"funds\": credits and debits).", []string{"env", "symbol"}, nil),
		engineRingCap:   d("svc_engine_ring_capacity", "Slots in a runner's ring.", []string{"env", "symbol"}, nil),
		engineBusy:      d("svc_engine_busy_total", "Submissions refused because the ring was full (503 ENGINE_BUSY answers).", []string{"env", "symbol"}, nil),
		journalCommitSeconds: d("svc_journal_commit_seconds",
			"Time to write and make durable one group commit of the journal (fsync for the file journal).", env, nil),
		journalCommitRecords: d("svc_journal_commit_records", "Records made durable by one group commit.", env, nil),
		projApplied:          d("svc_projection_applied_offset", "Last journal offset written to PostgreSQL by the projector.", env, nil),
		projLag:              d("svc_projection_lag_records", "Durable journal records the projector has not written yet.", env, nil),
		projLagSeconds: d("svc_projection_lag_seconds",
			"How long the projection has been behind: time since the journal's last offset was last seen fully projected (0 when caught up).", env, nil),
		projCommits:  d("svc_projection_commits_total", "Projector transactions committed.", env, nil),
		projRows:     d("svc_projection_rows_total", "Order and trade rows written by the projector.", env, nil),
		hubDropped:   d("svc_ws_hub_dropped_batches_total", "Engine event batches the market-data hub dropped because its queue was full.", env, nil),
		hubConflated: d("svc_ws_conflated_total", "Order-book diffs (and superseded snapshots) not sent to lagging subscribers: a later snapshot took their place.", env, nil),
		hubResyncs:   d("svc_ws_hub_resyncs_total", "Times the hub rebuilt its books from the engine after dropping batches.", env, nil),
		wsConns:      d("svc_ws_connections", "Open WebSocket connections: private (authenticated) or public.", []string{"visibility"}, nil),
		wsMessages:   d("svc_ws_messages_total", "Frames queued to WebSocket connections (a fan-out to n connections counts n).", nil, nil),
		wsSlow:       d("svc_ws_slow_consumer_closes_total", "Connections closed because their queue was full or their frames stayed unread past the write timeout.", nil, nil),
		wsBlocked:    d("svc_ws_blocked_writes_total", "Writes that found a socket's buffer full (the client reads slower than the server writes).", nil, nil),
		wsRevoked:    d("svc_ws_revoked_total", "Authenticated streams closed because their credentials no longer pass.", nil, nil),
		webhookDeliveries: d("svc_webhook_deliveries_total",
			"Webhook delivery attempts by outcome: success, failure (retried), retry_exhausted (last attempt failed), gone (410: endpoint disabled).", []string{"outcome"}, nil),
		webhookSeconds: d("svc_webhook_delivery_seconds", "Duration of one webhook HTTP attempt.", nil, nil),
		rateLimited: d("svc_rate_limited_total",
			"Requests refused with 429 by a rate limiter: merchant (per-merchant bucket), auth_address (per-address /v1/auth and failed authentications), pay (hosted checkout pages per address), partner_address (partner notifications per address), public_market_data (REST and WebSocket without credentials, per address).", []string{"kind"}, nil),
		jobs: d("svc_jobs", "Jobs in the durable queue by queue and state.", []string{"queue", "state"}, nil),
		jobsOldestAvailableAge: d("svc_jobs_oldest_available_seconds",
			"Age of the oldest job waiting to run, by queue (0 when none waits).", []string{"queue"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *domainCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.engineOffset, c.engineFailed, c.engineCommands, c.engineRingDepth, c.engineRingCap, c.engineBusy,
		c.journalCommitSeconds, c.journalCommitRecords, c.projApplied, c.projLag, c.projLagSeconds, c.projCommits, c.projRows,
		c.hubDropped, c.hubConflated, c.hubResyncs, c.wsConns, c.wsMessages, c.wsSlow, c.wsBlocked, c.wsRevoked,
		c.webhookDeliveries, c.webhookSeconds, c.rateLimited, c.jobs, c.jobsOldestAvailableAge} {
		ch <- d
	}
}

// histogram turns per-bucket counts (the last past the highest bound) into a constant
// Prometheus histogram.
func histogram(d *prometheus.Desc, bounds []float64, perBucket []uint64, count uint64, sum float64, labels ...string) prometheus.Metric {
	cum, n := make(map[float64]uint64, len(bounds)), uint64(0)
	for i, b := range bounds {
		n += perBucket[i]
		cum[b] = n
	}
	return prometheus.MustNewConstHistogram(d, count, sum, cum, labels...)
}

// Collect implements prometheus.Collector. The job query is bounded to one second: a slow
// database drops the job series from that scrape, never hangs it.
func (c *domainCollector) Collect(ch chan<- prometheus.Metric) {
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	for _, s := range c.sources {
		if s.offset != nil {
			ch <- prometheus.MustNewConstMetric(c.engineOffset, gauge, float64(s.offset()), s.env)
		}
		if s.failed != nil {
			v := 0.0
			if s.failed() {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.engineFailed, gauge, v, s.env)
		}
		if s.commands != nil {
			for _, n := range s.commands(nil) {
				ch <- prometheus.MustNewConstMetric(c.engineCommands, counter, float64(n.N), s.env, n.Kind.String(), n.Code.String())
			}
		}
		if s.rings != nil {
			for _, r := range s.rings(nil) {
				sym := r.Symbol
				if sym == "" {
					sym = "funds"
				}
				ch <- prometheus.MustNewConstMetric(c.engineRingDepth, gauge, float64(r.Depth), s.env, sym)
				ch <- prometheus.MustNewConstMetric(c.engineRingCap, gauge, float64(r.Capacity), s.env, sym)
				ch <- prometheus.MustNewConstMetric(c.engineBusy, counter, float64(r.Busy), s.env, sym)
			}
		}
		if s.commits != nil {
			st := s.commits()
			ch <- histogram(c.journalCommitSeconds, journal.CommitSecondsBounds(), st.SecondsBuckets[:], st.Commits, st.SecondsSum, s.env)
			ch <- histogram(c.journalCommitRecords, journal.CommitRecordsBounds(), st.RecordsBuckets[:], st.Commits, float64(st.RecordsSum), s.env)
		}
		if s.projection != nil {
			st := s.projection()
			ch <- prometheus.MustNewConstMetric(c.projApplied, gauge, float64(st.Applied), s.env)
			ch <- prometheus.MustNewConstMetric(c.projLag, gauge, float64(st.Lag), s.env)
			ch <- prometheus.MustNewConstMetric(c.projLagSeconds, gauge, st.LagSeconds, s.env)
			ch <- prometheus.MustNewConstMetric(c.projCommits, counter, float64(st.Commits), s.env)
			ch <- prometheus.MustNewConstMetric(c.projRows, counter, float64(st.Rows), s.env)
		}
		if s.hub != nil {
			ch <- prometheus.MustNewConstMetric(c.hubDropped, counter, float64(s.hub.Dropped()), s.env)
			ch <- prometheus.MustNewConstMetric(c.hubConflated, counter, float64(s.hub.Conflated()), s.env)
			ch <- prometheus.MustNewConstMetric(c.hubResyncs, counter, float64(s.hub.Resyncs()), s.env)
		}
	}
	if c.ws != nil {
		open, private := c.ws.Connections(), c.ws.PrivateConnections()
		ch <- prometheus.MustNewConstMetric(c.wsConns, gauge, float64(private), "private")
		ch <- prometheus.MustNewConstMetric(c.wsConns, gauge, float64(max(open-private, 0)), "public")
		ch <- prometheus.MustNewConstMetric(c.wsMessages, counter, float64(c.ws.MessagesQueued()))
		ch <- prometheus.MustNewConstMetric(c.wsSlow, counter, float64(c.ws.SlowConsumers()))
		ch <- prometheus.MustNewConstMetric(c.wsBlocked, counter, float64(c.ws.Blocked()))
		ch <- prometheus.MustNewConstMetric(c.wsRevoked, counter, float64(c.ws.Revoked()))
	}
	if c.webhooks != nil {
		st := c.webhooks()
		for o, n := range st.Attempts {
			ch <- prometheus.MustNewConstMetric(c.webhookDeliveries, counter, float64(n), webhooks.Outcome(o).String())
		}
		ch <- histogram(c.webhookSeconds, webhooks.DeliverySecondsBounds(), st.SecondsBuckets[:], st.Count, st.SecondsSum)
	}
	sums := map[string]uint64{}
	for _, l := range c.limits {
		sums[l.kind] += l.n()
	}
	for kind, n := range sums {
		ch <- prometheus.MustNewConstMetric(c.rateLimited, counter, float64(n), kind)
	}
	c.collectJobs(ch)
}

func (c *domainCollector) collectJobs(ch chan<- prometheus.Metric) {
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
		s := domainSource{env: string(env), offset: x.engine.Offset, failed: x.engine.Failed,
			commands: x.engine.CommandCounts, rings: x.engine.Rings}
		if x.projector != nil {
			s.projection = x.projector.Stats
		}
		if cs, ok := x.journal.(interface{ CommitStats() journal.CommitStats }); ok {
			s.commits = cs.CommitStats
		}
		if x.hub != nil {
			s.hub = x.hub
		}
		out = append(out, s)
	}
	return out
}
