package transfers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
	"svc/payments/moneyout"
)

// Queue is the river queue of the money-out jobs (shared with withdrawals and payouts).
const Queue = moneyout.Queue

// PayoutArgs is the job that pays one transfer out, enqueued in the transaction that creates
// it; its worker (a jobs.StepWorker) takes a step, and a payout the bank has not settled yet
// is snoozed.
type PayoutArgs struct {
	TransferID uuid.UUID `json:"transfer_id"`
}

// Kind is the river job kind.
func (PayoutArgs) Kind() string { return "transfer_payout" }

// InsertOpts puts the job on the money-out queue.
func (PayoutArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Register adds the transfer worker.
func Register(workers *river.Workers, svc *Service) error {
	return jobs.AddStepWorker(workers, func(ctx context.Context, a PayoutArgs) (time.Duration, error) {
		return svc.Advance(ctx, a.TransferID)
	})
}
