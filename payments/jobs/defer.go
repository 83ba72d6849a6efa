package jobs

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Deferrer is a transaction that collects the jobs enqueued in it and inserts them all in
// one statement (per inserter) just before it commits (payments/idempotency's keyed-request
// transaction is one). Each enqueue would otherwise be a round trip of its own while the
// transaction holds its connection. DeferJobs reports false when the transaction cannot
// defer (the caller then inserts at once); jobs deferred in a savepoint that is rolled back
// are dropped with it.
type Deferrer interface {
	DeferJobs(ins ManyInserter, params ...river.InsertManyParams) bool
}

// ManyInserter inserts jobs inside a transaction; *Client is one.
type ManyInserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// InsertManyTx enqueues params in tx: deferred to tx's commit when tx is a Deferrer that
// accepts them, else inserted now through ins. Either way the jobs commit or roll back with
// tx. Use it where the insert results are not needed.
func InsertManyTx(ctx context.Context, ins ManyInserter, tx pgx.Tx, params ...river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	if d, ok := tx.(Deferrer); ok && d.DeferJobs(ins, params...) {
		return nil
	}
	_, err := ins.InsertManyTx(ctx, tx, params)
	return err
}

// OneInserter inserts one job inside a transaction; *Client is one.
type OneInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// InsertTx enqueues one job in tx as InsertManyTx does: deferred to tx's commit when tx is
// a Deferrer that accepts it, else inserted now through ins.
func InsertTx(ctx context.Context, ins OneInserter, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) error {
	if m, ok := ins.(ManyInserter); ok {
		if d, ok := tx.(Deferrer); ok && d.DeferJobs(m, river.InsertManyParams{Args: args, InsertOpts: opts}) {
			return nil
		}
	}
	_, err := ins.InsertTx(ctx, tx, args, opts)
	return err
}
