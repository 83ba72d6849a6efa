package transfers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of the money-out jobs (shared with withdrawals and payouts).
const Queue = "money_out"

// PayoutArgs is the job that pays one transfer out, enqueued in the transaction that creates
// it.
type PayoutArgs struct {
	TransferID uuid.UUID `json:"transfer_id"`
}

// Kind is the river job kind.
func (PayoutArgs) Kind() string { return "transfer_payout" }

// InsertOpts puts the job on the money-out queue.
func (PayoutArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Worker works PayoutArgs: it takes a step; a payout the bank has not settled yet is
// snoozed.
type Worker = jobs.StepWorker[PayoutArgs]

// Register adds the transfer worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &Worker{Step: func(ctx context.Context, a PayoutArgs) (time.Duration, error) {
		return svc.Advance(ctx, a.TransferID)
	}})
}
