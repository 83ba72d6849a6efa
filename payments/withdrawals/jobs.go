package withdrawals

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of the money-out jobs (withdrawals, transfers, payouts).
const Queue = "money_out"

// ProcessArgs is the job that drives one withdrawal to SETTLED or FAILED, enqueued in the
// transaction that creates it.
type ProcessArgs struct {
	WithdrawalID uuid.UUID `json:"withdrawal_id"`
}

// Kind is the river job kind.
func (ProcessArgs) Kind() string { return "withdrawal_process" }

// InsertOpts puts the job on the money-out queue.
func (ProcessArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Worker works ProcessArgs: it takes steps until the withdrawal is terminal or has to wait
// (snoozed).
type Worker = jobs.StepWorker[ProcessArgs]

// Register adds the withdrawal worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &Worker{Step: func(ctx context.Context, a ProcessArgs) (time.Duration, error) {
		return svc.Advance(ctx, a.WithdrawalID)
	}})
}
