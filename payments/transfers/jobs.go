package transfers

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
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
func (PayoutArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// Worker works PayoutArgs.
type Worker struct {
	river.WorkerDefaults[PayoutArgs]
	svc *Service
}

// Work takes a step; a payout the bank has not settled yet is snoozed.
func (w *Worker) Work(ctx context.Context, job *river.Job[PayoutArgs]) error {
	wait, err := w.svc.Advance(ctx, job.Args.TransferID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Register adds the transfer worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &Worker{svc: svc})
}
