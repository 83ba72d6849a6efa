package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/persistence/postgres/pgtest"
)

type noteArgs struct{ Note string }

func (noteArgs) Kind() string { return "note" }

// fakeJobs "inserts" jobs as rows of idem_jobs through the transaction it is given, and
// counts its calls.
type fakeJobs struct{ calls int }

func (f *fakeJobs) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	f.calls++
	for _, p := range params {
		if _, err := tx.Exec(ctx, `insert into idem_jobs values ($1)`, p.Args.(noteArgs).Note); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (f *fakeJobs) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	_, err := f.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: args, InsertOpts: opts}})
	return nil, err
}

// TestScopePipelining: in a keyed request's transaction, the jobs its steps enqueue are
// inserted together before the commit (one call), a step that fails loses its writes and
// its jobs whether it failed before any statement (the savepoint never sent), after one
// (in Go) or in the database, and the response commits with the kept writes; an aborted scope leaves nothing.
func TestScopePipelining(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	if _, err := pool.Exec(ctx, `create table idem_steps (step text primary key); create table idem_jobs (note text)`); err != nil {
		t.Fatal(err)
	}
	fj := &fakeJobs{}
	keys := idempotency.New(pool, idempotency.Config{})
	req := idempotency.Request{MerchantID: uuid.New(), Environment: "sandbox", Key: "p1", Method: "POST", Path: "/x", Body: []byte(`{}`)}
	scope, _, err := keys.Begin(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scope.Abort(ctx) }) // a failed test must not hold the connection
	sctx := idempotency.WithScope(ctx, scope)
	steps := []struct {
		name    string
		insert  bool // write a row named after the step
		job     bool // enqueue a job named after the step
		goErr   bool // then fail in Go
		wantErr bool // the step fails
		sqlErr  bool // insert "one" again: a unique violation in the database
	}{
		{name: "one", insert: true, job: true},
		{name: "early", goErr: true, job: true, wantErr: true}, // fails before any statement
		{name: "late", insert: true, job: true, goErr: true, wantErr: true},
		{name: "dup", sqlErr: true, job: true, wantErr: true},
		{name: "three", insert: true, job: true},
		{name: "last", sqlErr: true, wantErr: true}, // the last step fails in the database
	}
	for _, s := range steps {
		err := idempotency.InTx(sctx, pool, func(tx pgx.Tx) error {
			if s.job {
				if err := jobs.InsertTx(ctx, fj, tx, noteArgs{s.name}, nil); err != nil {
					return err
				}
			}
			if s.insert {
				if _, err := tx.Exec(ctx, `insert into idem_steps values ($1)`, s.name); err != nil {
					return err
				}
			}
			if s.sqlErr {
				if _, err := tx.Exec(ctx, `insert into idem_steps values ('one')`); err != nil {
					return err
				}
			}
			if s.goErr {
				return errors.New("step fails")
			}
			return nil
		})
		if (err != nil) != s.wantErr {
			t.Fatalf("step %s: %v", s.name, err)
		}
	}
	if fj.calls != 0 {
		t.Fatalf("%d job inserts before the commit, want 0", fj.calls)
	}
	if err := scope.Complete(ctx, idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if fj.calls != 1 {
		t.Fatalf("%d job inserts at the commit, want 1", fj.calls)
	}
	read := func(sql string) []string {
		rows, _ := pool.Query(ctx, sql)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(`select step from idem_steps order by step`); len(got) != 2 || got[0] != "one" || got[1] != "three" {
		t.Fatalf("committed steps %v, want [one three]", got)
	}
	if got := read(`select note from idem_jobs order by note`); len(got) != 2 || got[0] != "one" || got[1] != "three" {
		t.Fatalf("committed jobs %v, want [one three]", got)
	}
	if _, stored, err := keys.Begin(ctx, req); err != nil || stored == nil || stored.Status != 201 {
		t.Fatalf("replay: %+v %v", stored, err)
	}

	// An aborted scope commits nothing, jobs included.
	req.Key = "p2"
	scope, _, err = keys.Begin(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scope.Abort(ctx) })
	sctx = idempotency.WithScope(ctx, scope)
	if err := idempotency.InTx(sctx, pool, func(tx pgx.Tx) error {
		if err := jobs.InsertTx(ctx, fj, tx, noteArgs{"aborted"}, nil); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into idem_steps values ('aborted')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	scope.Abort(ctx)
	if got := read(`select step from idem_steps where step = 'aborted' union all select note from idem_jobs where note = 'aborted'`); len(got) != 0 {
		t.Fatalf("aborted scope left %v", got)
	}
	again, stored, err := keys.Begin(ctx, req)
	if err != nil || stored != nil {
		t.Fatalf("aborted key: %+v %v, want a fresh start", stored, err)
	}
	again.Abort(ctx)
}
