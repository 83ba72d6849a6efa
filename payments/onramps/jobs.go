package onramps

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// Queue is the river queue of the money-in jobs (onramp expiry, deposit steps, balance
// transfers).
const Queue = "money_in"

// ExpireArgs is the job that expires one TEMPORARY onramp, scheduled at its expires_at in
// the transaction that creates it.
type ExpireArgs struct {
	OnrampID uuid.UUID `json:"onramp_id"`
}

// Kind is the river job kind.
func (ExpireArgs) Kind() string { return "onramp_expire" }

// InsertOpts puts the job on the money-in queue.
func (ExpireArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// ExpireWorker works ExpireArgs.
type ExpireWorker struct {
	river.WorkerDefaults[ExpireArgs]
	svc *Service
}

// NewExpireWorker returns the worker over svc.
func NewExpireWorker(svc *Service) *ExpireWorker { return &ExpireWorker{svc: svc} }

// Work expires the onramp; one not due yet (the clock is behind the schedule) is snoozed.
func (w *ExpireWorker) Work(ctx context.Context, job *river.Job[ExpireArgs]) error {
	wait, err := w.svc.Expire(ctx, job.Args.OnrampID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Register adds the onramp workers.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, NewExpireWorker(svc))
}
