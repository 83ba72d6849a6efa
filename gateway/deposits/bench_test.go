package deposits_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svc/gateway/gatewaytest"
)

// BenchmarkOnrampCreate is idempotent onramp creation end to end: HTTP through the real
// gateway (auth, idempotency middleware), a fresh quote from the engine, the bank
// simulator, the onramp row, onramp.completed with its webhook delivery job and the stored
// idempotent response, all in one transaction (no expiry job since issue 27: a periodic
// sweep stores EXPIRED). Every request carries its own X-Idempotency-Key. Reports
// creates/s and latency percentiles.
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreate -benchtime 4000x
func BenchmarkOnrampCreate(b *testing.B) {
	r := newRig(b, rigOptions{noWorkers: true})
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	body := map[string]any{"type": "TEMPORARY", "amount": 25000}
	warmPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, 32)
	b.ResetTimer()
	runCreates(b, r, key, body, 32)
	b.StopTimer()
}

// BenchmarkOnrampCreateCold is BenchmarkOnrampCreate on a cold pool, as the first two
// rounds of issue 22 measured it: the warm-up is 50 creates one after another, so one
// connection is open when 32 clients start and the run's first requests wait for the rest
// to open and prepare their statements. minConns=20 is the same with the pool opened at
// start (MinConns, as svcd opens its pool) and the same sequential warm-up. Compare the
// p99 with BenchmarkOnrampCreate's (warm pool).
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreateCold -benchtime 1000x
func BenchmarkOnrampCreateCold(b *testing.B) {
	for _, minConns := range []int32{0, 20} {
		b.Run(fmt.Sprintf("minConns=%d", minConns), func(b *testing.B) {
			r := newRig(b, rigOptions{noWorkers: true, maxConns: 20, minConns: minConns})
			r.endpoint(b, r.a.ID)
			key := r.a.SandboxKey
			body := map[string]any{"type": "TEMPORARY", "amount": 25000}
			for i := range 50 {
				r.srv.Must(b, 201, "POST", "/v1/payments/onramps", key, body, "X-Idempotency-Key", fmt.Sprintf("warm-%d", i))
			}
			b.ResetTimer()
			runCreates(b, r, key, body, 32)
			b.StopTimer()
		})
	}
}

// BenchmarkCustomerCreate is idempotent customer creation end to end at 32 clients: HTTP
// through the real gateway (auth, idempotency middleware), the customer row (its email
// unique per merchant and environment), customer.created with its webhook delivery job and
// the stored idempotent response, in one transaction. Every request carries its own
// X-Idempotency-Key and email.
//
//	go test ./gateway/deposits -run '^$' -bench CustomerCreate -benchtime 1000x
func BenchmarkCustomerCreate(b *testing.B) {
	r := newRig(b, rigOptions{noWorkers: true})
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	body := func(i int64) map[string]any {
		return map[string]any{"email": fmt.Sprintf("c%d@example.com", i), "first_name": "Ada", "last_name": "Obi"}
	}
	warmPosts(b, r, "/v1/customers", key, body, 32)
	b.ResetTimer()
	runPosts(b, r, "/v1/customers", key, body, 32)
	b.StopTimer()
}

// warmPosts warms the pool and the caches before a timed run: clients goroutines post 4
// creates each at once (keys warm-i), so every pool connection the run will use is open
// and has prepared the statements, as in a server that has been taking traffic. What a
// cold pool costs is measured apart (BenchmarkOnrampCreateCold).
func warmPosts(b *testing.B, r *rig, path, key string, body func(i int64) map[string]any, clients int) {
	gatewaytest.WarmUp(b, clients, func(_ int, i int64) gatewaytest.Response {
		return r.srv.Do(b, "POST", path, key, body(i), "X-Idempotency-Key", fmt.Sprintf("warm-%d", -1-i))
	})
}

// runCreates posts b.N onramp creates from clients goroutines, each with its own
// X-Idempotency-Key, and reports creates/s and the latency percentiles.
func runCreates(b *testing.B, r *rig, key string, body map[string]any, clients int) {
	runPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, clients)
}

// runPosts posts b.N creates to path from clients goroutines, the i-th with body(i) and
// X-Idempotency-Key bench-i, and reports creates/s and the latency percentiles.
func runPosts(b *testing.B, r *rig, path, key string, body func(i int64) map[string]any, clients int) {
	gatewaytest.Load(b, clients, func(_ int, i int64) gatewaytest.Response {
		return r.srv.Do(b, "POST", path, key, body(i), "X-Idempotency-Key", fmt.Sprintf("bench-%d", i))
	})
}

// BenchmarkSandboxDepositSettle is sandbox deposits end to end: POST
// /payments/sandbox/deposits (PENDING_FX, deposit.received) then the river jobs converting
// (PENDING_WITHDRAWAL) and settling (SETTLED, credit, events) each deposit, with the webhook
// delivery jobs of every event enqueued. b.N deposits into b.N onramps (created before the
// timer); the time is from the first POST until the last deposit is SETTLED.
//
//	go test ./gateway/deposits -run '^$' -bench SandboxDepositSettle -benchtime 2000x
func BenchmarkSandboxDepositSettle(b *testing.B) { benchSettle(b, rigOptions{}) }

// BenchmarkSandboxDepositSettleCooldown is BenchmarkSandboxDepositSettle with the river
// clients' FetchCooldown at 5 ms (the rig's default), 20 ms (svcd's) and 100 ms. It also
// spaces river's insert notifications: every NOTIFY takes PostgreSQL's one notify lock
// from before the commit to its end, so notifying commits run one at a time.
//
//	go test ./gateway/deposits -run '^$' -bench SandboxDepositSettleCooldown -benchtime 300x
func BenchmarkSandboxDepositSettleCooldown(b *testing.B) {
	for _, cd := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		b.Run("cooldown="+cd.String(), func(b *testing.B) { benchSettle(b, rigOptions{fetchCooldown: cd}) })
	}
}

// BenchmarkSandboxDepositSettleSvcd is BenchmarkSandboxDepositSettle with svcd's deposits
// options: "job", each deposit's conversion and settlement in its job's transaction
// (SettleInConversion); "receipt", in the intake's transaction, no job (ConvertOnReceipt
// too; issue 27). Every deposit is of one merchant: what the step batcher was built for.
//
//	go test ./gateway/deposits -run '^$' -bench SandboxDepositSettleSvcd -benchtime 300x
func BenchmarkSandboxDepositSettleSvcd(b *testing.B) {
	b.Run("job", func(b *testing.B) { benchSettle(b, rigOptions{settleInConversion: true}) })
	b.Run("receipt", func(b *testing.B) { benchSettle(b, rigOptions{settleInConversion: true, convertOnReceipt: true}) })
}

func benchSettle(b *testing.B, o rigOptions) {
	r := newRig(b, o)
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = r.temporary(b, key, 16080).ID
	}
	const clients = 16
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	smp, stopSampling := sampleActivity(context.Background(), b, r.pool.Config().ConnConfig.ConnString(), 50*time.Millisecond, time.Now)
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if rr := r.srv.Do(b, "POST", "/v1/payments/sandbox/deposits", key, map[string]any{"onramp_id": ids[i]}); rr.Status != 201 {
					b.Errorf("%s", rr)
					return
				}
			}
		}()
	}
	wg.Wait()
	posted := time.Since(start)
	if b.Failed() { // a POST failed (logged): its deposit will never settle
		return
	}
	for {
		var n int
		if err := r.pool.QueryRow(context.Background(), `select count(*) from deposits where status = 'SETTLED'`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == b.N {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d settled", n, b.N)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "settled/s")
	b.ReportMetric(float64(b.N)/posted.Seconds(), "posted/s")
	stopSampling()
	smp.log(b)
	logJobTimes(b, r)
	mustVerify(b, r)
}

// logJobTimes logs, per river job kind, how many ran and the median and 99th percentile
// of their wait (inserted -> first attempt) and their run (attempt -> finalized), from
// river's own table (-v): where a deposit's time between POST and SETTLED goes.
func logJobTimes(b *testing.B, r *rig) {
	rows, err := r.pool.Query(context.Background(), `select kind, count(*),
			percentile_cont(0.5) within group (order by extract(epoch from attempted_at - created_at)) * 1000,
			percentile_cont(0.99) within group (order by extract(epoch from attempted_at - created_at)) * 1000,
			percentile_cont(0.5) within group (order by extract(epoch from finalized_at - attempted_at)) * 1000,
			percentile_cont(0.99) within group (order by extract(epoch from finalized_at - attempted_at)) * 1000
		from river_job where finalized_at is not null group by kind order by kind`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var sb strings.Builder
	for rows.Next() {
		var (
			kind                   string
			n                      int64
			w50, w99, run50, run99 float64
		)
		if err := rows.Scan(&kind, &n, &w50, &w99, &run50, &run99); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&sb, "%-24s %5d jobs  wait p50 %7.1f ms p99 %7.1f ms  run p50 %7.1f ms p99 %7.1f ms\n", kind, n, w50, w99, run50, run99)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	b.Logf("river jobs:\n%s", sb.String())
}
