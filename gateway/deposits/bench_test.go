package deposits_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BenchmarkOnrampCreate is idempotent onramp creation end to end: HTTP through the real
// gateway (auth, idempotency middleware), a fresh quote from the engine, the bank
// simulator, the onramp row, onramp.completed with its webhook delivery job, the expiry
// job and the stored idempotent response, all in one transaction. Every request carries
// its own X-Idempotency-Key. Reports creates/s and latency percentiles.
//
//	go test ./gateway/deposits -run '^$' -bench OnrampCreate -benchtime 4000x
func BenchmarkOnrampCreate(b *testing.B) {
	r := newRig(b, rigOptions{noWorkers: true})
	r.endpoint(b, r.a.ID)
	key := r.a.SandboxKey
	body := map[string]any{"type": "TEMPORARY", "amount": 25000}
	for i := range 50 { // warm up connections and caches
		r.srv.Must(b, 201, "POST", "/v1/payments/onramps", key, body, "X-Idempotency-Key", fmt.Sprintf("warm-%d", i))
	}
	b.ResetTimer()
	runCreates(b, r, key, body, 32)
	b.StopTimer()
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
	for i := range 50 {
		r.srv.Must(b, 201, "POST", "/v1/customers", key, body(int64(-1-i)), "X-Idempotency-Key", fmt.Sprintf("warm-%d", i))
	}
	b.ResetTimer()
	runPosts(b, r, "/v1/customers", key, body, 32)
	b.StopTimer()
}

// runCreates posts b.N onramp creates from clients goroutines, each with its own
// X-Idempotency-Key, and reports creates/s and the latency percentiles.
func runCreates(b *testing.B, r *rig, key string, body map[string]any, clients int) {
	runPosts(b, r, "/v1/payments/onramps", key, func(int64) map[string]any { return body }, clients)
}

// runPosts posts b.N creates to path from clients goroutines, the i-th with body(i) and
// X-Idempotency-Key bench-i, and reports creates/s and the latency percentiles.
func runPosts(b *testing.B, r *rig, path, key string, body func(i int64) map[string]any, clients int) {
	h := hdrhistogram.New(1, 10_000_000, 3) // microseconds
	var (
		mu   sync.Mutex
		next atomic.Int64
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := hdrhistogram.New(1, 10_000_000, 3)
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					break
				}
				t0 := time.Now()
				rr := r.srv.Do(b, "POST", path, key, body(i), "X-Idempotency-Key", fmt.Sprintf("bench-%d", i))
				if rr.Status != 201 {
					b.Errorf("%s", rr)
					return
				}
				_ = local.RecordValue(time.Since(t0).Microseconds())
			}
			mu.Lock()
			h.Merge(local)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(h.ValueAtQuantile(50))/1000, "p50-ms")
	b.ReportMetric(float64(h.ValueAtQuantile(99))/1000, "p99-ms")
}

// BenchmarkSandboxDepositSettle is sandbox deposits end to end: POST
// /payments/sandbox/deposits (PENDING_FX, deposit.received) then the river jobs converting
// (PENDING_WITHDRAWAL) and settling (SETTLED, credit, events) each deposit, with the webhook
// delivery jobs of every event enqueued. b.N deposits into b.N onramps (created before the
// timer); the time is from the first POST until the last deposit is SETTLED.
//
//	go test ./gateway/deposits -run '^$' -bench SandboxDepositSettle -benchtime 2000x
func BenchmarkSandboxDepositSettle(b *testing.B) {
	r := newRig(b, rigOptions{})
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
	mustVerify(b, r)
}
