package main

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

func TestDomainMetrics(t *testing.T) {
	pool, _ := pgtest.New(t)
	if _, err := pool.Exec(context.Background(),
		`INSERT INTO river_job (kind, args, queue, state, max_attempts, scheduled_at) VALUES ('deposit_step', '{}', 'money_in', 'available', 5, now() - interval '30 seconds')`); err != nil {
		t.Fatal(err)
	}
	c := newDomainCollector(pool, []domainSource{{
		env:        "sandbox",
		offset:     func() uint64 { return 42 },
		failed:     func() bool { return false },
		projection: func() projection.Stats { return projection.Stats{Applied: 40, Lag: 2, Commits: 7, Rows: 99} },
	}})
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
			got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"svc_engine_journal_offset,env=sandbox":   42,
		"svc_engine_failed,env=sandbox":           0,
		"svc_projection_lag_records,env=sandbox":  2,
		"svc_projection_rows_total,env=sandbox":   99,
		"svc_jobs,queue=money_in,state=available": 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if age := got["svc_jobs_oldest_available_seconds,queue=money_in"]; age < 29 {
		t.Errorf("oldest available job age %v, want about 30 s", age)
	}
}
