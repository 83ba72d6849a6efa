package moneyout

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// JobKind names one domain's money-out job: its river kind and the JSON field that carries
// the record's id (both as already stored in the jobs table, so queued jobs survive).
type JobKind interface {
	Kind() string
	IDField() string
}

// Job drives one money-out record (ID) through its lifecycle: enqueued in the transaction
// that creates the record, on the money_out queue, retried for about three days; its worker
// (Register) takes steps until the record is final or has to wait (the job snoozes).
type Job[K JobKind] struct {
	ID uuid.UUID
}

// Kind is the river job kind.
func (Job[K]) Kind() string {
	var k K
	return k.Kind()
}

// InsertOpts puts the job on the money-out queue.
func (Job[K]) InsertOpts() river.InsertOpts { return jobs.Retried(Queue) }

// MarshalJSON writes {"<IDField>": ID}.
func (j Job[K]) MarshalJSON() ([]byte, error) {
	var k K
	return json.Marshal(map[string]uuid.UUID{k.IDField(): j.ID})
}

// UnmarshalJSON reads {"<IDField>": ID}.
func (j *Job[K]) UnmarshalJSON(b []byte) error {
	var (
		k K
		m map[string]uuid.UUID
	)
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	id, ok := m[k.IDField()]
	if !ok {
		return fmt.Errorf("moneyout: %s job without %s", k.Kind(), k.IDField())
	}
	j.ID = id
	return nil
}

// Register adds the jobs.StepWorker of Job[K], whose step is step with the record's id.
func Register[K JobKind](workers *river.Workers, step func(ctx context.Context, id uuid.UUID) (time.Duration, error)) error {
	return jobs.AddStepWorker(workers, func(ctx context.Context, j Job[K]) (time.Duration, error) { return step(ctx, j.ID) })
}
