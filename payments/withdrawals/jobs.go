package withdrawals

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
	"svc/payments/moneyout"
)

// Queue is the river queue of the money-out jobs (withdrawals, transfers, payouts).
const Queue = moneyout.Queue

// ProcessArgs is the job that drives one withdrawal to SETTLED or FAILED, enqueued in the
// transaction that creates it; its worker (a jobs.StepWorker) takes steps until the
// withdrawal is terminal or has to wait (snoozed).
type ProcessArgs struct {
	WithdrawalID uuid.UUID `json:"withdrawal_id"`
}

// Kind is the river job kind.
func (ProcessArgs) Kind() string { return "withdrawal_process" }

// InsertOpts puts the job on the money-out queue.
func (ProcessArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Register adds the withdrawal worker.
func Register(workers *river.Workers, svc *Service) error {
	return jobs.AddStepWorker(workers, func(ctx context.Context, a ProcessArgs) (time.Duration, error) {
		return svc.Advance(ctx, a.WithdrawalID)
	})
}
