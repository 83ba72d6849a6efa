package webhooks_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/webhooks"
	"svc/persistence/postgres"
)

// startCrashChild runs this test binary as a worker process (TestCrashChild) on the database
// at dbURL; the caller kills it.
func startCrashChild(t *testing.T, dbURL, caFile string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SVC_WEBHOOK_CRASH_CHILD="+dbURL, "SVC_WEBHOOK_CRASH_CA="+caFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

// TestCrashChild is the worker process of TestCrashMidDeliveryLosesNothing: it works
// deliveries until it is killed.
func TestCrashChild(t *testing.T) {
	dbURL := os.Getenv("SVC_WEBHOOK_CRASH_CHILD")
	if dbURL == "" {
		t.Skip("only runs as TestCrashMidDeliveryLosesNothing's child process")
	}
	ctx := context.Background()
	pool, err := postgres.Open(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := webhooks.LoadCAFile(os.Getenv("SVC_WEBHOOK_CRASH_CA"))
	if err != nil {
		t.Fatal(err)
	}
	sender := webhooks.NewSender(webhooks.SenderConfig{AllowInsecure: true, RootCAs: roots, Timeout: time.Minute})
	workers := river.NewWorkers()
	cipher := webhooks.DevCipher("test")
	if err := webhooks.Register(workers, webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{})); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers, Queues: map[string]int{events.Queue: 2}, FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute) // killed long before
}
