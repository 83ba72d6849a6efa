package offramps

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of the money-out jobs (shared with withdrawals and transfers).
const Queue = "money_out"

// PayoutArgs is the job that pays out one offramp deposit in NGN, enqueued in the
// transaction that converts the deposit.
type PayoutArgs struct {
	PayoutID uuid.UUID `json:"payout_id"`
}

// Kind is the river job kind.
func (PayoutArgs) Kind() string { return "offramp_payout" }

// InsertOpts puts the job on the money-out queue.
func (PayoutArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Worker works PayoutArgs: it takes a step; a payout the bank has not settled yet is
// snoozed.
type Worker = jobs.StepWorker[PayoutArgs]

// Register adds the payout worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &Worker{Step: func(ctx context.Context, a PayoutArgs) (time.Duration, error) {
		return svc.AdvancePayout(ctx, a.PayoutID)
	}})
}
