// Package jobs builds the river clients of the process: the durable PostgreSQL job queue
// every payments domain runs its background work on (DESIGN.md section 4).
//
// A process has two clients over the same tables. The insert-only client (no Workers) is
// built first and handed to every service, which enqueues its next steps inside its own
// transactions through it; it never works a job. Once the services exist, each domain adds
// its workers to one *river.Workers and names its queue, and the working client is built
// with all of them and started; it is stopped first at shutdown:
//
//	inserter, err := jobs.New(pool, jobs.Config{})   // insert-only: never started
//	recorder := events.NewRecorder(inserter)         // Record enqueues through it
//	deliverer := webhooks.NewWorker(pool, ...)        // ... and every other service
//	workers := river.NewWorkers()
//	webhooks.Register(workers, deliverer)            // adds the webhook delivery worker
//	client, err := jobs.New(pool, jobs.Config{
//		Workers: workers,
//		Queues:  map[string]int{events.Queue: 50},   // queue -> concurrent jobs
//	})
//	err = client.Start(ctx) ... client.Stop(ctx)
//
// Give both the same FetchCooldown: it also spaces the insert notifications (NOTIFY) a
// client sends per queue. An insert-only client does not check that a worker exists for a
// job's kind (the working client would); each domain's Register adds the workers of every
// kind it enqueues. Tools such as `svc webhooks replay` use an insert-only client alone.
package jobs

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Client is the river client of the process, with pgx transactions.
type Client = river.Client[pgx.Tx]

// Config says what the client works.
type Config struct {
	// Workers holds every domain's workers; nil builds an insert-only client (see the
	// package comment).
	Workers *river.Workers
	// Queues maps each queue to the number of jobs worked at once on it. Required with
	// Workers.
	Queues map[string]int
	// FetchPollInterval is how often idle queues are polled as a fallback to LISTEN/NOTIFY
	// (default 1s; tests use less).
	FetchPollInterval time.Duration
	// FetchCooldown is the shortest time between two fetches of a queue (default 100ms;
	// lower it for throughput).
	FetchCooldown time.Duration
	// RescueStuckJobsAfter is how long a running job may go without finishing before it is
	// considered lost with its process (killed mid-job) and retried (default
	// DefaultRescueAfter; river's own default of an hour left a payment step killed with
	// svcd waiting an hour before it ran again).
	RescueStuckJobsAfter time.Duration
	// JobTimeout is the default time a job may run (workers may set their own; default 1m).
	JobTimeout time.Duration
	// PeriodicJobs are inserted on their schedule by the elected leader (RegisterHousekeeping
	// returns one).
	PeriodicJobs []*river.PeriodicJob
	Logger       *slog.Logger
}

// DefaultRescueAfter is when a job still marked running is taken for lost with its process
// and retried: five times the longest job timeout we set (a minute), so a job that is really
// still running (bounded by its timeout) is never run a second time beside itself.
const DefaultRescueAfter = 5 * time.Minute

// New builds the client; it works nothing until Start.
func New(pool *pgxpool.Pool, cfg Config) (*Client, error) {
	if cfg.RescueStuckJobsAfter <= 0 {
		cfg.RescueStuckJobsAfter = DefaultRescueAfter
	}
	rc := &river.Config{
		Logger:               cfg.Logger,
		FetchPollInterval:    cfg.FetchPollInterval,
		FetchCooldown:        cfg.FetchCooldown,
		RescueStuckJobsAfter: cfg.RescueStuckJobsAfter,
		JobTimeout:           cfg.JobTimeout,
		PeriodicJobs:         cfg.PeriodicJobs,
	}
	if rc.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers != nil {
		if len(cfg.Queues) == 0 {
			return nil, errors.New("jobs: Queues is required when there are Workers")
		}
		rc.Workers = cfg.Workers
		rc.Queues = make(map[string]river.QueueConfig, len(cfg.Queues))
		for name, n := range cfg.Queues {
			rc.Queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	c, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: new river client: %w", err)
	}
	return c, nil
}
