package partners

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of notification processing.
const Queue = "partner_events"

// ProcessArgs is the job that processes one stored notification; enqueued in the intake's
// transaction.
type ProcessArgs struct {
	ID uuid.UUID `json:"id"`
}

// Kind is the river job kind.
func (ProcessArgs) Kind() string { return "partner_event" }

// InsertOpts: a partner that is down (its API confirms inbound transfers) is retried for
// about three days.
func (ProcessArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25}
}

// ProcessWorker works ProcessArgs.
type ProcessWorker struct {
	river.WorkerDefaults[ProcessArgs]
	svc *Service
}

// Work processes the notification.
func (w *ProcessWorker) Work(ctx context.Context, job *river.Job[ProcessArgs]) error {
	_, err := w.svc.Process(ctx, job.Args.ID)
	return err
}

// Timeout bounds one processing run (a partner's API call and one transaction).
func (w *ProcessWorker) Timeout(*river.Job[ProcessArgs]) time.Duration { return time.Minute }

// RefundArgs is the job that returns money for no active account to its sender; enqueued in
// the transaction that records the refund.
type RefundArgs struct {
	ID uuid.UUID `json:"id"`
}

// Kind is the river job kind.
func (RefundArgs) Kind() string { return "partner_refund" }

// InsertOpts: a partner that is down is retried for about three days.
func (RefundArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// RefundWorker works RefundArgs: a step each run; a refund the partner has not paid back yet
// is snoozed.
type RefundWorker struct{ jobs.StepWorker[RefundArgs] }

// Timeout bounds one refund step (the partner's calls and one transaction).
func (w *RefundWorker) Timeout(*river.Job[RefundArgs]) time.Duration { return time.Minute }

// Register adds the processing and refund workers.
func Register(workers *river.Workers, svc *Service) error {
	if err := river.AddWorkerSafely(workers, &ProcessWorker{svc: svc}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, &RefundWorker{jobs.StepWorker[RefundArgs]{
		Step: func(ctx context.Context, a RefundArgs) (time.Duration, error) { return svc.AdvanceRefund(ctx, a.ID) }}})
}
