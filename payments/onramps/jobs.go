package onramps

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// Queue is the river queue of the money-in jobs (deposit steps, balance transfers, and the
// onramp expiry jobs enqueued before issue 27).
const Queue = "money_in"

// ExpireArgs is the job that expired one TEMPORARY onramp, scheduled at its expires_at in
// the transaction that created it, until the sweep (Service.ExpireDue, a purger of the
// housekeeping job) replaced it (issue 27). Nothing enqueues it any more; its worker stays
// so that the jobs a database still holds run (Expire moves the row if the sweep has not,
// and does nothing otherwise).
type ExpireArgs struct {
	OnrampID uuid.UUID `json:"onramp_id"`
}

// Kind is the river job kind.
func (ExpireArgs) Kind() string { return "onramp_expire" }

// InsertOpts puts the job on the money-in queue.
func (ExpireArgs) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// ExpireWorker works ExpireArgs.
type ExpireWorker = jobs.StepWorker[ExpireArgs]

// NewExpireWorker returns the worker over svc: it expires the onramp; one not due yet (the
// clock is behind the schedule) is snoozed.
func NewExpireWorker(svc *Service) *ExpireWorker {
	return &ExpireWorker{Step: func(ctx context.Context, a ExpireArgs) (time.Duration, error) {
		return svc.Expire(ctx, a.OnrampID)
	}}
}

// Register adds the onramp worker: the per-onramp expiry of the jobs enqueued before the
// sweep. The sweep itself has no job of its own: svcd runs Service.ExpireDue as one purger
// of the housekeeping job (payments/jobs.RegisterHousekeeping).
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, NewExpireWorker(svc))
}
