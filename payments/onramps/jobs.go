package onramps

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of the money-in jobs (the onramp expiry sweep, deposit steps,
// balance transfers).
const Queue = "money_in"

// DefaultSweepInterval is how often the expiry sweep runs (docs/decisions.md, issue 27):
// reads report EXPIRED from expires_at whatever the stored status, so the interval only
// bounds how long a stored ACTIVE lags behind and how many rows one sweep moves.
const DefaultSweepInterval = time.Minute

// SweepArgs is the periodic job that expires the due TEMPORARY onramps (Service.ExpireDue).
type SweepArgs struct{}

// Kind is the river job kind.
func (SweepArgs) Kind() string { return "onramp_expire_sweep" }

// InsertOpts puts the job on the money-in queue; a failed run is retried a few times, and
// the next period sweeps anyway.
func (SweepArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue, MaxAttempts: 3} }

// Sweeper works SweepArgs.
type Sweeper struct {
	river.WorkerDefaults[SweepArgs]
	svc *Service
}

// Work runs one sweep.
func (w *Sweeper) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	if _, err := w.svc.ExpireDue(ctx); err != nil {
		return fmt.Errorf("onramps: sweep: %w", err)
	}
	return nil
}

// Sweep returns the periodic job of the expiry sweep, every interval (default
// DefaultSweepInterval) and once at start, to pass in jobs.Config.PeriodicJobs (river
// inserts periodic jobs on the elected leader only, so one process of a cluster sweeps).
// Register adds its worker.
func Sweep(interval time.Duration) *river.PeriodicJob {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	return river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true, ID: SweepArgs{}.Kind()})
}

// ExpireArgs is the job that expired one TEMPORARY onramp, scheduled at its expires_at in
// the transaction that created it, until the sweep replaced it (issue 27). Nothing enqueues
// it any more; its worker stays so that the jobs a database still holds run (Expire moves
// the row if the sweep has not, and does nothing otherwise).
type ExpireArgs struct {
	OnrampID uuid.UUID `json:"onramp_id"`
}

// Kind is the river job kind.
func (ExpireArgs) Kind() string { return "onramp_expire" }

// InsertOpts puts the job on the money-in queue.
func (ExpireArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// ExpireWorker works ExpireArgs.
type ExpireWorker = jobs.StepWorker[ExpireArgs]

// NewExpireWorker returns the worker over svc: it expires the onramp; one not due yet (the
// clock is behind the schedule) is snoozed.
func NewExpireWorker(svc *Service) *ExpireWorker {
	return &ExpireWorker{Step: func(ctx context.Context, a ExpireArgs) (time.Duration, error) {
		return svc.Expire(ctx, a.OnrampID)
	}}
}

// Register adds the onramp workers: the sweep's (its schedule is Sweep) and the per-onramp
// expiry of the jobs enqueued before it.
func Register(workers *river.Workers, svc *Service) error {
	if err := river.AddWorkerSafely(workers, &Sweeper{svc: svc}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, NewExpireWorker(svc))
}
