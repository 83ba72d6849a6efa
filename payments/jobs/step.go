package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Retried is the insert options of a job on queue that is retried for about three days
// (25 attempts at river's backoff): the money-moving steps, whose partner may be down.
func Retried(queue string) river.InsertOpts {
	return river.InsertOpts{Queue: queue, MaxAttempts: 25}
}

// StepWorker works a job that moves one record a step on: Step returns how long to wait
// before the record can move again (0: nothing to wait for), and a wait snoozes the job
// (river.JobSnooze) so that it runs again then.
type StepWorker[A river.JobArgs] struct {
	river.WorkerDefaults[A]
	Step func(ctx context.Context, args A) (wait time.Duration, err error)
}

// Work takes the step: its error, a snooze for its wait, or done.
func (w *StepWorker[A]) Work(ctx context.Context, job *river.Job[A]) error {
	wait, err := w.Step(ctx, job.Args)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// AddStepWorker adds to workers the StepWorker of A that takes step: the one line a domain's
// Register needs per job kind.
func AddStepWorker[A river.JobArgs](workers *river.Workers, step func(ctx context.Context, args A) (time.Duration, error)) error {
	return river.AddWorkerSafely(workers, &StepWorker[A]{Step: step})
}
