package withdrawals

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
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
func (ProcessArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// Worker works ProcessArgs.
type Worker struct {
	river.WorkerDefaults[ProcessArgs]
	svc *Service
}

// Work takes steps until the withdrawal is terminal or has to wait (snoozed).
func (w *Worker) Work(ctx context.Context, job *river.Job[ProcessArgs]) error {
	wait, err := w.svc.Advance(ctx, job.Args.WithdrawalID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Register adds the withdrawal worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &Worker{svc: svc})
}
