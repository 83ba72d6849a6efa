package deposits_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgCounter is a pgx tracer that counts what a request costs the database client side:
// statements (by their first words), batches and COPYs (one round trip each), pool
// acquires and the time spent waiting for a connection. Safe for concurrent use.
type pgCounter struct {
	mu        sync.Mutex
	stmts     map[string]*stmtStat
	batches   atomic.Int64
	copies    atomic.Int64
	acquires  atomic.Int64
	acquireNs atomic.Int64
}

type stmtStat struct {
	n  int64
	ns int64
}

type traceStart struct {
	sql string
	t0  time.Time
}

type startKey struct{}

func newPGCounter() *pgCounter { return &pgCounter{stmts: map[string]*stmtStat{}} }

func (c *pgCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, startKey{}, traceStart{sql: d.SQL, t0: time.Now()})
}

func (c *pgCounter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	s, ok := ctx.Value(startKey{}).(traceStart)
	if !ok {
		return
	}
	key := strings.Join(strings.Fields(s.sql), " ")
	if len(key) > 70 {
		key = key[:70]
	}
	c.mu.Lock()
	st := c.stmts[key]
	if st == nil {
		st = &stmtStat{}
		c.stmts[key] = st
	}
	st.n++
	st.ns += time.Since(s.t0).Nanoseconds()
	c.mu.Unlock()
}

func (c *pgCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	return ctx
}
func (c *pgCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *pgCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (c *pgCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.copies.Add(1)
	return ctx
}
func (c *pgCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

type acquireKey struct{}

func (c *pgCounter) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return context.WithValue(ctx, acquireKey{}, time.Now())
}

func (c *pgCounter) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if t0, ok := ctx.Value(acquireKey{}).(time.Time); ok {
		c.acquires.Add(1)
		c.acquireNs.Add(time.Since(t0).Nanoseconds())
	}
}

func (c *pgCounter) reset() {
	c.mu.Lock()
	c.stmts = map[string]*stmtStat{}
	c.mu.Unlock()
	c.batches.Store(0)
	c.copies.Store(0)
	c.acquires.Store(0)
	c.acquireNs.Store(0)
}

// report logs the per-request figures over n requests and reports the totals as metrics.
func (c *pgCounter) report(b *testing.B, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.stmts))
	var total, ns int64
	for k, st := range c.stmts {
		keys = append(keys, k)
		total += st.n
		ns += st.ns
	}
	sort.Slice(keys, func(i, j int) bool { return c.stmts[keys[i]].ns > c.stmts[keys[j]].ns })
	var sb strings.Builder
	for _, k := range keys {
		st := c.stmts[k]
		fmt.Fprintf(&sb, "%6.2f/req %7.2f ms/req  %s\n", float64(st.n)/float64(n), float64(st.ns)/1e6/float64(n), k)
	}
	b.Logf("statements by client-side time (per request, over %d requests):\n%s", n, sb.String())
	rt := total + c.batches.Load() + c.copies.Load()
	b.ReportMetric(float64(total)/float64(n), "stmts/req")
	b.ReportMetric(float64(rt)/float64(n), "roundtrips/req")
	b.ReportMetric(float64(ns)/1e6/float64(n), "db-ms/req")
	b.ReportMetric(float64(c.acquires.Load())/float64(n), "acquires/req")
	b.ReportMetric(float64(c.acquireNs.Load())/1e6/float64(n), "acquire-wait-ms/req")
}

// tracedPool opens a pool of maxConns connections (0: 20, as pgtest's; minConns of them
// opened at start) on url with tracer (if any) installed.
func tracedPool(t testing.TB, url string, tracer pgx.QueryTracer, maxConns, minConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 20
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.MinConns = min(minConns, cfg.MaxConns)
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	// pgxpool also reads its AcquireTracer from ConnConfig.Tracer.
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// BenchmarkOnrampCreateTraced is BenchmarkOnrampCreate with a pgx tracer on the pool: it
// reports statements, round trips, client-side database time, pool acquires and the wait
// for a connection per create, and logs the statements by time (-v). The tracer's own cost
// is small (a map update per statement) but this is a profile, not the speed figure.
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreateTraced -benchtime 1000x -v
func BenchmarkOnrampCreateTraced(b *testing.B) {
	c := newPGCounter()
	r := newRig(b, rigOptions{noWorkers: true, tracer: c})
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	body := map[string]any{"type": "TEMPORARY", "amount": 25000}
	warmPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32)
	c.reset()
	b.ResetTimer()
	runCreates(b, r, key, body, 32)
	b.StopTimer()
	c.report(b, b.N)
}

// BenchmarkOnrampCreatePool is BenchmarkOnrampCreate (32 clients) with pools of 10, 20
// (pgtest's), 32 (svcd's default --db-max-conns) and 48 connections: whether the wait for a
// connection or the database's own concurrency limits creates.
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreatePool -benchtime 1000x
func BenchmarkOnrampCreatePool(b *testing.B) {
	for _, n := range []int32{10, 20, 32, 48} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			r := newRig(b, rigOptions{noWorkers: true, maxConns: n})
			r.endpoint(b, r.a.ID)
			key := r.a.SandboxKey
			body := map[string]any{"type": "TEMPORARY", "amount": 25000}
			warmPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32)
			b.ResetTimer()
			runCreates(b, r, key, body, 32)
			b.StopTimer()
		})
	}
}

// BenchmarkOnrampCreateNotifyCooldown is BenchmarkOnrampCreate with the river client's
// insert notifications spaced 5 ms (the rig's default), 20 ms (svcd's FetchCooldown) and 1 s
// apart: every NOTIFY takes PostgreSQL's global notify lock from pre-commit to the end of the
// commit, so notifying transactions commit one at a time.
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreateNotifyCooldown -benchtime 1000x
func BenchmarkOnrampCreateNotifyCooldown(b *testing.B) {
	for _, cd := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, time.Second} {
		b.Run("cooldown="+cd.String(), func(b *testing.B) {
			r := newRig(b, rigOptions{noWorkers: true, fetchCooldown: cd})
			r.endpoint(b, r.a.ID)
			key := r.a.SandboxKey
			body := map[string]any{"type": "TEMPORARY", "amount": 25000}
			warmPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32)
			b.ResetTimer()
			runCreates(b, r, key, body, 32)
			b.StopTimer()
		})
	}
}
