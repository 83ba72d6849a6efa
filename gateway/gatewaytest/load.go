package gatewaytest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// WarmUp sends 4 requests from each of clients goroutines at once, as a timed run will go,
// so every pool connection the run uses is open and has prepared its statements (a server
// taking traffic; a sequential warm-up left the run's first requests opening connections,
// which was the create benchmarks' p99). post(client, i) sends one request, i < 0 for a
// warm-up one (-1, -2, ...); each must answer 201.
func WarmUp(b *testing.B, clients int, post func(client int, i int64) Response) {
	b.Helper()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				if rr := post(c, -int64(c*4+j+1)); rr.Status != 201 {
					b.Errorf("warm-up: %s", rr)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Load sends b.N requests from clients goroutines in a closed loop, post(client, i) with i
// from 1 to b.N, each of which must answer 201, and reports creates/s and the latency
// percentiles p50-ms and p99-ms.
func Load(b *testing.B, clients int, post func(client int, i int64) Response) {
	b.Helper()
	h := hdrhistogram.New(1, 10_000_000, 3) // microseconds
	var (
		mu   sync.Mutex
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
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
				if rr := post(c, i); rr.Status != 201 {
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
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(h.ValueAtQuantile(50))/1000, "p50-ms")
	b.ReportMetric(float64(h.ValueAtQuantile(99))/1000, "p99-ms")
}
