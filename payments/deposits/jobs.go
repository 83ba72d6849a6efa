package deposits

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/onramps"
)

// StepArgs is the job that runs a deposit's next lifecycle step from status From; enqueued
// in the transaction of the step before.
type StepArgs struct {
	DepositID uuid.UUID `json:"deposit_id"`
	From      string    `json:"from"`
}

// Kind is the river job kind.
func (StepArgs) Kind() string { return "deposit_step" }

// InsertOpts puts the job on the money-in queue; a step whose provider is down retries for
// about a day.
func (StepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: onramps.Queue, MaxAttempts: 20}
}

// Register adds the deposit workers: StepArgs runs the step.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[StepArgs]) error {
		return svc.Advance(ctx, job.Args.DepositID, job.Args.From)
	}))
}
