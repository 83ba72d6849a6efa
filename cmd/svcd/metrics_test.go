package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"svc/engine"
	"svc/payments/webhooks"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

type fakeHub struct{}

func (fakeHub) Dropped() uint64   { return 1 }
func (fakeHub) Conflated() uint64 { return 2 }
func (fakeHub) Resyncs() uint64   { return 3 }

type fakeWS struct{}

func (fakeWS) Connections() int64        { return 5 }
func (fakeWS) PrivateConnections() int64 { return 2 }
func (fakeWS) MessagesQueued() uint64    { return 100 }
func (fakeWS) SlowConsumers() uint64     { return 4 }
func (fakeWS) Blocked() uint64           { return 6 }
func (fakeWS) Revoked() uint64           { return 7 }

func TestDomainMetrics(t *testing.T) {
	pool, _ := pgtest.New(t)
	if _, err := pool.Exec(context.Background(),
		`INSERT INTO river_job (kind, args, queue, state, max_attempts, scheduled_at) VALUES ('deposit_step', '{}', 'money_in', 'available', 5, now() - interval '30 seconds')`); err != nil {
		t.Fatal(err)
	}
	c := newDomainCollector(pool, []domainSource{{
		env:    "sandbox",
		offset: func() uint64 { return 42 },
		failed: func() bool { return false },
		projection: func() projection.Stats {
			return projection.Stats{Applied: 40, Lag: 2, LagSeconds: 1.5, Commits: 7, Rows: 99}
		},
		commands: func(dst []engine.CommandCount) []engine.CommandCount {
			return append(dst, engine.CommandCount{Kind: engine.CmdPlace, Code: engine.OK, N: 10},
				engine.CommandCount{Kind: engine.CmdPlace, Code: engine.RejectInsufficientFunds, N: 3})
		},
		rings: func(dst []engine.RingStats) []engine.RingStats {
			return append(dst, engine.RingStats{Symbol: "USDT-NGN", Depth: 12, Capacity: 64, Busy: 9}, engine.RingStats{Capacity: 64})
		},
		commits: func() journal.CommitStats {
			st := journal.CommitStats{Commits: 3, SecondsSum: 0.006, RecordsSum: 30}
			st.SecondsBuckets[4], st.RecordsBuckets[4] = 3, 3 // <= 2.5 ms, <= 16 records
			return st
		},
		hub: fakeHub{},
	}})
	c.ws = fakeWS{}
	c.limits = []rateLimit{{"pay", func() uint64 { return 2 }}, {"public_market_data", func() uint64 { return 1 }},
		{"public_market_data", func() uint64 { return 4 }}}
	c.webhooks = func() webhooks.DeliveryStats {
		st := webhooks.DeliveryStats{Count: 4, SecondsSum: 0.4}
		st.Attempts[webhooks.OutcomeSuccess], st.Attempts[webhooks.OutcomeExhausted] = 3, 1
		st.SecondsBuckets[1] = 4
		return st
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	for key, want := range map[string]float64{
		"svc_engine_journal_offset,env=sandbox":                                      42,
		"svc_engine_failed,env=sandbox":                                              0,
		"svc_projection_lag_records,env=sandbox":                                     2,
		"svc_projection_rows_total,env=sandbox":                                      99,
		"svc_jobs,queue=money_in,state=available":                                    1,
		"svc_engine_commands_total,code=OK,env=sandbox,kind=place":                   10,
		"svc_engine_commands_total,code=INSUFFICIENT_BALANCE,env=sandbox,kind=place": 3,
		"svc_engine_ring_depth,env=sandbox,symbol=USDT-NGN":                          12,
		"svc_engine_ring_capacity,env=sandbox,symbol=funds":                          64,
		"svc_engine_busy_total,env=sandbox,symbol=USDT-NGN":                          9,
		"svc_journal_commit_seconds,env=sandbox":                                     3,
		"svc_journal_commit_records,env=sandbox":                                     3,
		"svc_projection_lag_seconds,env=sandbox":                                     1.5,
		"svc_ws_hub_dropped_batches_total,env=sandbox":                               1,
		"svc_ws_conflated_total,env=sandbox":                                         2,
		"svc_ws_connections,visibility=private":                                      2,
		"svc_ws_connections,visibility=public":                                       3,
		"svc_ws_messages_total":                                                      100,
		"svc_ws_slow_consumer_closes_total":                                          4,
		"svc_webhook_deliveries_total,outcome=success":                               3,
		"svc_webhook_deliveries_total,outcome=retry_exhausted":                       1,
		"svc_webhook_deliveries_total,outcome=failure":                               0,
		"svc_webhook_delivery_seconds":                                               4,
		"svc_rate_limited_total,kind=pay":                                            2,
		"svc_rate_limited_total,kind=public_market_data":                             5,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if age := got["svc_jobs_oldest_available_seconds,queue=money_in"]; age < 29 {
		t.Errorf("oldest available job age %v, want about 30 s", age)
	}
}

// TestMetricsScrape starts the whole server and reads /metrics over HTTP: every domain
// series family is there from the start.
func TestMetricsScrape(t *testing.T) {
	_, dbURL := pgtest.New(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out safeBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", addr, "--database-url", dbURL, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--webhook-allow-insecure"}, func(string) string { return "" }, &out, &out)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("svcd did not stop")
		}
	}()
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	var body string
	for {
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				body = string(b)
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("svcd stopped: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd did not answer /metrics:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, series := range []string{
		`svc_engine_failed{env="sandbox"} 0`,
		`svc_engine_journal_offset{env="live"}`,
		`svc_engine_ring_depth{env="sandbox",symbol="USDT-NGN"}`,
		`svc_engine_ring_capacity{env="live",symbol="funds"}`,
		`svc_engine_busy_total{env="sandbox",symbol="USDT-NGN"}`,
		`svc_journal_commit_seconds_bucket{env="sandbox",le="0.001"}`,
		`svc_journal_commit_records_count{env="live"}`,
		`svc_projection_lag_records{env="sandbox"}`,
		`svc_projection_lag_seconds{env="sandbox"}`,
		`svc_ws_hub_dropped_batches_total{env="live"}`,
		`svc_ws_conflated_total{env="sandbox"}`,
		`svc_ws_connections{visibility="public"}`,
		`svc_ws_connections{visibility="private"}`,
		`svc_ws_messages_total`,
		`svc_ws_slow_consumer_closes_total`,
		`svc_webhook_deliveries_total{outcome="retry_exhausted"}`,
		`svc_webhook_delivery_seconds_bucket{le="1"}`,
		`svc_rate_limited_total{kind="merchant"}`,
		`svc_rate_limited_total{kind="auth_address"}`,
		`svc_rate_limited_total{kind="pay"}`,
		`svc_rate_limited_total{kind="public_market_data"}`,
	} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
