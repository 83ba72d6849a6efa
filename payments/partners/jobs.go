package partners

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
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

// Register adds the processing worker.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, &ProcessWorker{svc: svc})
}
