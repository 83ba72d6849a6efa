// Package webhooks_test is the end-to-end webhook delivery benchmark (issue 7): events
// recorded in PostgreSQL transactions, delivered by the river worker over HTTPS to a local
// receiver. Run it with
//
//	SVC_BENCH=1 go test -count=1 -run TestWebhookBench -v ./bench/webhooks/
//
// It prints deliveries per second (a backlog of jobs drained by the workers) and the
// commit-to-delivery latency at a modest steady rate; results go to bench/RESULTS.md.
package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/webhooks"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil || n <= 0 {
		return def
	}
	return n
}

func TestWebhookBench(t *testing.T) {
	if os.Getenv("SVC_BENCH") == "" {
		t.Skip("set SVC_BENCH=1 to run the webhook benchmark")
	}
	backlog := envInt("SVC_BENCH_EVENTS", 5000)
	runs := envInt("SVC_BENCH_RUNS", 3)
	workersN := envInt("SVC_BENCH_WORKERS", 100)

	var (
		mu      sync.Mutex
		arrived = map[string]time.Time{}
		count   int
		done    = make(chan struct{}, 1)
		target  int
	)
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		now := time.Now()
		mu.Lock()
		arrived[r.Header.Get("X-Svc-Event-Id")] = now
		count++
		if count == target {
			select {
			case done <- struct{}{}:
			default:
			}
		}
		mu.Unlock()
	}))
	defer recv.Close()
	roots := recv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	var throughput []float64
	var p50s, p99s []time.Duration
	for run := 0; run < runs; run++ {
		pool, _ := pgtest.New(t)
		ctx := context.Background()
		cipher := webhooks.DevCipher("bench")
		sender := webhooks.NewSender(webhooks.SenderConfig{AllowInsecure: true, RootCAs: roots, MaxConnsPerHost: workersN})
		svc := webhooks.NewService(pool, cipher, sender)
		tn := payments.Tenant{MerchantID: uuid.New(), Environment: "sandbox"}
		if _, err := svc.Create(ctx, tn, webhooks.CreateInput{URL: recv.URL + "/hook"}); err != nil {
			t.Fatal(err)
		}
		workers := river.NewWorkers()
		if err := webhooks.Register(workers, webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{})); err != nil {
			t.Fatal(err)
		}
		client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{events.Queue: workersN},
			FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		rec := events.NewRecorder(client)
		record := func(n int) {
			err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
				for i := 0; i < n; i++ {
					if _, err := rec.Record(ctx, tx, tn.MerchantID, tn.Environment, events.DepositSettled,
						events.Deposit{ID: "dep", Amount: "150000.00", Currency: "NGN", Status: "SETTLED"}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}

		// 1. Throughput: a backlog of deliveries, drained by the workers.
		for i := 0; i < backlog; i += 500 {
			record(min(500, backlog-i))
		}
		mu.Lock()
		count, target = 0, backlog
		clear(arrived)
		mu.Unlock()
		start := time.Now()
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("only %d of %d deliveries in 2 minutes", count, backlog)
		}
		elapsed := time.Since(start)
		rate := float64(backlog) / elapsed.Seconds()
		throughput = append(throughput, rate)

		// 2. Latency: commit to arrival at a modest steady rate.
		const perSecond, seconds = 50, 8
		mu.Lock()
		count, target = 0, perSecond*seconds
		clear(arrived)
		mu.Unlock()
		committed := map[string]time.Time{}
		tick := time.NewTicker(time.Second / perSecond)
		for i := 0; i < perSecond*seconds; i++ {
			<-tick.C
			var id uuid.UUID
			err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
				var err error
				id, err = rec.Record(ctx, tx, tn.MerchantID, tn.Environment, events.DepositSettled, events.Deposit{ID: "dep"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			committed[id.String()] = time.Now()
		}
		tick.Stop()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("latency phase: %d deliveries", count)
		}
		var lat []time.Duration
		mu.Lock()
		for id, c := range committed {
			lat = append(lat, arrived[id].Sub(c))
		}
		mu.Unlock()
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		p50s, p99s = append(p50s, p50), append(p99s, p99)
		t.Logf("run %d: %d deliveries in %s = %.0f/s; latency at %d/s: p50 %s p99 %s max %s",
			run+1, backlog, elapsed.Round(time.Millisecond), rate, perSecond, p50.Round(time.Millisecond/10), p99.Round(time.Millisecond/10), lat[len(lat)-1].Round(time.Millisecond))

		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = client.Stop(sctx)
		cancel()
	}
	slices.Sort(throughput)
	slices.Sort(p50s)
	slices.Sort(p99s)
	t.Logf("MEDIAN over %d runs: %.0f deliveries/s (backlog %d, %d workers); commit-to-delivery p50 %s, p99 %s",
		runs, throughput[len(throughput)/2], backlog, workersN, p50s[len(p50s)/2].Round(time.Millisecond/10), p99s[len(p99s)/2].Round(time.Millisecond/10))
}
