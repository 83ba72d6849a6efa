package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"svc/payments"
)

// Housekeeping: one periodic job (river's periodic jobs run on the elected leader only, so
// one process of a cluster does it) that puts away rows time has made useless: it deletes
// expired, never-locked rate quotes and expired idempotency keys, blanks the bodies of old
// outbox mail, and stores EXPIRED on TEMPORARY onramps past their expiry (issue 27; reads
// derive that from expires_at, so the interval's lag is not seen).

// HousekeepingQueue is the queue of the housekeeping job.
const HousekeepingQueue = "housekeeping"

// DefaultHousekeepingInterval is how often the housekeeping job runs.
const DefaultHousekeepingInterval = 10 * time.Minute

// PurgeArgs is the housekeeping job.
type PurgeArgs struct{}

// Kind names the job.
func (PurgeArgs) Kind() string { return "housekeeping.purge" }

// InsertOpts puts it on its queue; a failed run is retried a few times, and the next
// period runs it anyway.
func (PurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: HousekeepingQueue, MaxAttempts: 3}
}

// Purger puts away one kind of expired row (deletes it, or stores the state time gave it)
// and says how many rows it moved; now is the job's clock.
type Purger struct {
	Name  string
	Purge func(ctx context.Context, now time.Time) (int64, error)
}

// Housekeeping is the worker of PurgeArgs.
type Housekeeping struct {
	river.WorkerDefaults[PurgeArgs]
	purgers []Purger
	log     *slog.Logger
	now     func() time.Time
}

// Work runs every purger (one failing does not stop the others) and logs what each did.
func (h *Housekeeping) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	now := h.now()
	var errs []error
	for _, p := range h.purgers {
		n, err := p.Purge(ctx, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("purge %s: %w", p.Name, err))
			continue
		}
		if n > 0 {
			h.log.Info("housekeeping: purged", "what", p.Name, "rows", n)
		}
	}
	return errors.Join(errs...)
}

// HousekeepingConfig says what the job purges and how often.
type HousekeepingConfig struct {
	Purgers  []Purger
	Interval time.Duration    // default DefaultHousekeepingInterval
	Logger   *slog.Logger     // default: discard
	Now      func() time.Time // default time.Now
}

// RegisterHousekeeping adds the housekeeping worker to workers and its queue to queues, and
// returns the periodic job to pass in Config.PeriodicJobs (it also runs once at start).
func RegisterHousekeeping(workers *river.Workers, queues map[string]int, cfg HousekeepingConfig) ([]*river.PeriodicJob, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultHousekeepingInterval
	}
	cfg.Logger = payments.OrDiscard(cfg.Logger)
	cfg.Now = payments.OrNow(cfg.Now)
	if err := river.AddWorkerSafely(workers, &Housekeeping{purgers: cfg.Purgers, log: cfg.Logger, now: cfg.Now}); err != nil {
		return nil, fmt.Errorf("jobs: housekeeping worker: %w", err)
	}
	queues[HousekeepingQueue] = 1
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cfg.Interval),
		func() (river.JobArgs, *river.InsertOpts) { return PurgeArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true, ID: "housekeeping.purge"})}, nil
}
