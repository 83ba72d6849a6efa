package offramps

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
	"svc/payments/moneyout"
)

// Queue is the river queue of the money-out jobs (shared with withdrawals and transfers).
const Queue = moneyout.Queue

// PayoutArgs is the job that pays out one offramp deposit in NGN, enqueued in the
// transaction that converts the deposit; its worker (a jobs.StepWorker) takes a step, and a
// payout the bank has not settled yet is snoozed.
type PayoutArgs struct {
	PayoutID uuid.UUID `json:"payout_id"`
}

// Kind is the river job kind.
func (PayoutArgs) Kind() string { return "offramp_payout" }

// InsertOpts puts the job on the money-out queue.
func (PayoutArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// Register adds the payout worker.
func Register(workers *river.Workers, svc *Service) error {
	return jobs.AddStepWorker(workers, func(ctx context.Context, a PayoutArgs) (time.Duration, error) {
		return svc.AdvancePayout(ctx, a.PayoutID)
	})
}
