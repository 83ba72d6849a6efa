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

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// tailTracer is a pgx tracer that keeps every slow event (a pool acquire, statement or
// batch over slowAfter) with the time it ended, and histograms of acquire waits and of
// statement/batch latencies, to find where the slowest requests spent their time.
type tailTracer struct {
	t0        time.Time
	slowAfter time.Duration
	mu        sync.Mutex
	slow      []tailEvent
	acquire   *hdrhistogram.Histogram // µs
	stmt      *hdrhistogram.Histogram // µs
}

type tailEvent struct {
	end  time.Duration // since t0
	dur  time.Duration
	what string
	pid  uint32
}

type tailStart struct{ t time.Time }
type tailSQL struct{ sql string }

func newTailTracer(slowAfter time.Duration) *tailTracer {
	return &tailTracer{t0: time.Now(), slowAfter: slowAfter,
		acquire: hdrhistogram.New(1, 60_000_000, 3), stmt: hdrhistogram.New(1, 60_000_000, 3)}
}

func (c *tailTracer) reset() {
	c.mu.Lock()
	c.t0, c.slow = time.Now(), nil
	c.acquire.Reset()
	c.stmt.Reset()
	c.mu.Unlock()
}

func (c *tailTracer) note(h *hdrhistogram.Histogram, t0 time.Time, what string, conn *pgx.Conn) {
	d := time.Since(t0)
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = h.RecordValue(d.Microseconds())
	if d >= c.slowAfter {
		var pid uint32
		if conn != nil {
			pid = conn.PgConn().PID()
		}
		c.slow = append(c.slow, tailEvent{end: time.Since(c.t0), dur: d, what: what, pid: pid})
	}
}

func shortSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func (c *tailTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(context.WithValue(ctx, tailStart{}, time.Now()), tailSQL{}, d.SQL)
}

func (c *tailTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryEndData) {
	if t0, ok := ctx.Value(tailStart{}).(time.Time); ok {
		sql, _ := ctx.Value(tailSQL{}).(string)
		c.note(c.stmt, t0, "stmt "+shortSQL(sql), conn)
	}
}

func (c *tailTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	first := ""
	if d.Batch != nil && len(d.Batch.QueuedQueries) > 0 {
		for _, q := range d.Batch.QueuedQueries {
			first += shortSQL(q.SQL)[:min(20, len(shortSQL(q.SQL)))] + "; "
		}
	}
	return context.WithValue(context.WithValue(ctx, tailStart{}, time.Now()), tailSQL{}, first)
}
func (c *tailTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *tailTracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchEndData) {
	if t0, ok := ctx.Value(tailStart{}).(time.Time); ok {
		sql, _ := ctx.Value(tailSQL{}).(string)
		c.note(c.stmt, t0, "batch "+sql, conn)
	}
}

type tailAcquire struct{}

func (c *tailTracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return context.WithValue(ctx, tailAcquire{}, time.Now())
}

func (c *tailTracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, d pgxpool.TraceAcquireEndData) {
	if t0, ok := ctx.Value(tailAcquire{}).(time.Time); ok {
		var conn *pgx.Conn
		if d.Conn != nil {
			conn = d.Conn
		}
		c.note(c.acquire, t0, "acquire", conn)
	}
}

// activitySampler samples pg_stat_activity of one database every interval on its own
// connection: wait events of active client backends, and backends that are not client
// backends (autovacuum, checkpointer) when they are active.
type activitySampler struct {
	mu      sync.Mutex
	samples int
	waits   map[string]int
	notes   []string
}

func sampleActivity(ctx context.Context, t testing.TB, url string, every time.Duration, t0 func() time.Time) (*activitySampler, func()) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	s := &activitySampler{waits: map[string]int{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer conn.Close(context.Background())
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := conn.Query(ctx, `select backend_type, coalesce(wait_event_type,'CPU'), coalesce(wait_event,''), state,
				extract(epoch from (clock_timestamp() - coalesce(xact_start, query_start)))*1000, left(regexp_replace(query, '\s+', ' ', 'g'), 50), pid
				from pg_stat_activity where pid <> pg_backend_pid() and (datname = current_database() or backend_type not in ('client backend'))
				and state is distinct from 'idle'`)
			if err != nil {
				return
			}
			now := time.Since(t0())
			s.mu.Lock()
			s.samples++
			for rows.Next() {
				var bt, wt, we, q string
				var st *string
				var ms *float64
				var pid int32
				if rows.Scan(&bt, &wt, &we, &st, &ms, &q, &pid) != nil {
					continue
				}
				if bt != "client backend" {
					s.notes = append(s.notes, fmt.Sprintf("%7.3fs %s %s/%s", now.Seconds(), bt, wt, we))
					continue
				}
				state := ""
				if st != nil {
					state = *st
				}
				s.waits[fmt.Sprintf("%-20s %-24s %.40s", state, wt+"/"+we, q)]++
				if ms != nil && *ms > 200 {
					s.notes = append(s.notes, fmt.Sprintf("%7.3fs pid %d xact %.0f ms %s %s/%s %s", now.Seconds(), pid, *ms, state, wt, we, q))
				}
			}
			rows.Close()
			s.mu.Unlock()
		}
	}()
	return s, func() { cancel(); <-done }
}

// BenchmarkOnrampCreateTail is BenchmarkOnrampCreate with the tail taken apart: every
// request's start and duration, a tracer keeping every pool acquire, statement and batch
// slower than 50 ms (with its backend's pid), and pg_stat_activity sampled every 20 ms.
// It logs the slowest requests with the slow events and samples around them (-v).
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreateTail -benchtime 1000x -v
func BenchmarkOnrampCreateTail(b *testing.B) {
	tr := newTailTracer(50 * time.Millisecond)
	r := newRig(b, rigOptions{noWorkers: true, tracer: tr})
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	body := map[string]any{"type": "TEMPORARY", "amount": 25000}
	warmPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32)
	tr.reset()
	smp, stop := sampleActivity(context.Background(), b, r.pool.Config().ConnConfig.ConnString(), 20*time.Millisecond, func() time.Time { return tr.t0 })
	b.ResetTimer()
	reqs := runPostsTimed(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32, tr.t0)
	b.StopTimer()
	stop()

	sort.Slice(reqs, func(i, j int) bool { return reqs[i].dur > reqs[j].dur })
	var sb strings.Builder
	n := max(1, len(reqs)/50) // the slowest 2%
	for _, q := range reqs[:min(n, len(reqs))] {
		fmt.Fprintf(&sb, "request %7.3fs..%7.3fs %6.1f ms\n", q.start.Seconds(), (q.start + q.dur).Seconds(), float64(q.dur.Microseconds())/1000)
	}
	tr.mu.Lock()
	fmt.Fprintf(&sb, "acquire wait p50 %.1f ms p99 %.1f ms max %.1f ms; statement/batch p50 %.1f ms p99 %.1f ms max %.1f ms\n",
		float64(tr.acquire.ValueAtQuantile(50))/1000, float64(tr.acquire.ValueAtQuantile(99))/1000, float64(tr.acquire.Max())/1000,
		float64(tr.stmt.ValueAtQuantile(50))/1000, float64(tr.stmt.ValueAtQuantile(99))/1000, float64(tr.stmt.Max())/1000)
	sort.Slice(tr.slow, func(i, j int) bool { return tr.slow[i].end < tr.slow[j].end })
	for _, e := range tr.slow {
		fmt.Fprintf(&sb, "slow %7.3fs %6.1f ms pid %d %s\n", e.end.Seconds(), float64(e.dur.Microseconds())/1000, e.pid, e.what)
	}
	tr.mu.Unlock()
	sb.WriteString(smp.summary(true))
	b.Logf("tail:\n%s", sb.String())
}

// summary is the wait events counted over the samples, most frequent first, and the
// notes (long transactions, active background processes) when notes is set.
func (s *activitySampler) summary(notes bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	keys := make([]string, 0, len(s.waits))
	for k := range s.waits {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.waits[keys[i]] > s.waits[keys[j]] })
	fmt.Fprintf(&sb, "pg_stat_activity: %d samples\n", s.samples)
	for _, k := range keys {
		fmt.Fprintf(&sb, "  %5d %s\n", s.waits[k], k)
	}
	if notes {
		for _, n := range s.notes {
			fmt.Fprintf(&sb, "  %s\n", n)
		}
	}
	return sb.String()
}

// log logs the summary without the notes (-v).
func (s *activitySampler) log(b *testing.B) { b.Logf("%s", s.summary(false)) }

type timedReq struct{ start, dur time.Duration }

// runPostsTimed is runPosts that also returns every request's start (since t0) and duration.
func runPostsTimed(b *testing.B, r *rig, path, key string, body func(i int64) map[string]any, clients int, t0 time.Time) []timedReq {
	var (
		mu   sync.Mutex
		out  []timedReq
		next atomic.Int64
		wg   sync.WaitGroup
	)
	h := hdrhistogram.New(1, 60_000_000, 3)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []timedReq
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					break
				}
				s := time.Now()
				rr := r.srv.Do(b, "POST", path, key, body(i), "X-Idempotency-Key", fmt.Sprintf("bench-%d", i))
				if rr.Status != 201 {
					b.Errorf("%s", rr)
					return
				}
				local = append(local, timedReq{start: s.Sub(t0), dur: time.Since(s)})
			}
			mu.Lock()
			out = append(out, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, q := range out {
		_ = h.RecordValue(q.dur.Microseconds())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(h.ValueAtQuantile(50))/1000, "p50-ms")
	b.ReportMetric(float64(h.ValueAtQuantile(99))/1000, "p99-ms")
	return out
}
