package idempotency

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

// pipeTx is a keyed request's transaction on one pooled connection, built to spend as few
// round trips as it can while it holds that connection (the pool is the limit of keyed
// POSTs under load: bench/RESULTS.md, issue 22):
//
//   - begin travels with the advisory lock and the key read (Keys.Begin);
//   - a savepoint (Begin) is not sent on its own: it waits in pending and goes ahead of the
//     next statement in the same round trip; rolling back a savepoint that was never sent
//     costs nothing;
//   - jobs enqueued through jobs.InsertTx / jobs.InsertManyTx are deferred (DeferJobs) and
//     inserted in one statement before the commit; a savepoint's rollback drops its jobs;
//   - the stored response and commit go in one round trip (commitWith).
//
// Statements still run one after another in the order they were issued, so the
// transaction means what it meant with pgx's own Tx. Not safe for concurrent use (Scope
// serialises its users). LargeObjects is not supported.
type pipeTx struct {
	conn    *pgxpool.Conn
	pending []string // argument-less statements sent ahead of the next one
	jobs    []deferredJob
	nsp     int
	closed  bool
}

// deferredJob is a job to insert through ins before the commit.
type deferredJob struct {
	ins    jobs.ManyInserter
	params river.InsertManyParams
}

var (
	_ pgx.Tx        = (*pipeTx)(nil)
	_ pgx.Tx        = (*savepointTx)(nil)
	_ jobs.Deferrer = (*pipeTx)(nil)
	_ jobs.Deferrer = (*savepointTx)(nil)
)

// DeferJobs implements jobs.Deferrer.
func (t *pipeTx) DeferJobs(ins jobs.ManyInserter, params ...river.InsertManyParams) bool {
	if ins == nil || t.closed {
		return false
	}
	for _, p := range params {
		t.jobs = append(t.jobs, deferredJob{ins: ins, params: p})
	}
	return true
}

// insertJobs inserts the deferred jobs: one statement per inserter (one in practice).
func (t *pipeTx) insertJobs(ctx context.Context) error {
	for len(t.jobs) > 0 {
		ins := t.jobs[0].ins
		var params []river.InsertManyParams
		rest := t.jobs[:0:0]
		for _, j := range t.jobs {
			if j.ins == ins {
				params = append(params, j.params)
			} else {
				rest = append(rest, j)
			}
		}
		t.jobs = rest
		if _, err := ins.InsertManyTx(ctx, t, params); err != nil {
			return err
		}
	}
	return nil
}

// Begin starts a savepoint; its statement goes with the next one sent.
func (t *pipeTx) Begin(context.Context) (pgx.Tx, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	t.nsp++
	sp := &savepointTx{root: t, name: fmt.Sprintf("sp_%d", t.nsp), jobsAt: len(t.jobs)}
	t.pending = append(t.pending, "savepoint "+sp.name)
	return sp, nil
}

// Commit inserts the deferred jobs and commits.
func (t *pipeTx) Commit(ctx context.Context) error { return t.commitWith(ctx, "") }

// commitWith inserts the deferred jobs, then sends sql (with args; none when empty) and the
// commit in one round trip, and releases the connection.
func (t *pipeTx) commitWith(ctx context.Context, sql string, args ...any) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	if err := t.insertJobs(ctx); err != nil {
		t.rollback(ctx)
		return fmt.Errorf("enqueue jobs: %w", err)
	}
	b := &pgx.Batch{}
	if sql != "" {
		b.Queue(sql, args...)
	}
	b.Queue("commit")
	br := t.sendBatch(ctx, b)
	var err error
	if sql != "" {
		_, err = br.Exec()
	}
	tag, cerr := br.Exec()
	if err == nil {
		err = cerr
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" { // an aborted transaction "commits" as ROLLBACK
		err = pgx.ErrTxCommitRollback
	}
	t.closed = true
	if err != nil && t.conn.Conn().PgConn().TxStatus() != 'I' {
		// Commit not confirmed and the transaction not ended: end it (the pool would drop
		// the connection otherwise).
		t.closed = false
		t.rollback(ctx)
	}
	t.release()
	return err
}

// Rollback rolls the transaction back and releases the connection.
func (t *pipeTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	return t.rollback(ctx)
}

func (t *pipeTx) rollback(ctx context.Context) error {
	t.closed, t.pending, t.jobs = true, nil, nil
	_, err := t.conn.Exec(ctx, "rollback")
	if err != nil {
		_ = t.conn.Conn().Close(context.WithoutCancel(ctx)) // state unknown: never reuse it
	}
	t.release()
	return err
}

func (t *pipeTx) release() {
	if t.conn != nil {
		t.conn.Release() // the pool destroys a connection that is not idle
		t.conn = nil
	}
}

// sendBatch sends the pending statements ahead of b's in one round trip and reads their
// results, so the caller sees only b's.
func (t *pipeTx) sendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if len(t.pending) == 0 {
		return t.conn.SendBatch(ctx, b)
	}
	all := &pgx.Batch{}
	for _, s := range t.pending {
		all.Queue(s)
	}
	n := len(t.pending)
	t.pending = nil
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	br := t.conn.SendBatch(ctx, all)
	for range n {
		if _, err := br.Exec(); err != nil {
			return &failedBatch{br: br, err: err}
		}
	}
	return br
}

// sendOne sends one statement behind the pending ones (Exec and Query with statements
// pending).
func (t *pipeTx) sendOne(ctx context.Context, sql string, args ...any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return t.sendBatch(ctx, b)
}

// flush sends the pending statements on their own (before an operation that cannot carry
// them).
func (t *pipeTx) flush(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	return t.sendBatch(ctx, &pgx.Batch{}).Close()
}

func (t *pipeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return &failedBatch{err: pgx.ErrTxClosed}
	}
	return t.sendBatch(ctx, b)
}

func (t *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	if len(t.pending) == 0 {
		return t.conn.Exec(ctx, sql, args...)
	}
	br := t.sendOne(ctx, sql, args...)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t *pipeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	if len(t.pending) == 0 {
		return t.conn.Query(ctx, sql, args...)
	}
	br := t.sendOne(ctx, sql, args...)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(t.pending) == 0 && !t.closed {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return &rowsRow{rows: rows, err: err}
}

func (t *pipeTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if t.closed {
		return 0, pgx.ErrTxClosed
	}
	if err := t.flush(ctx); err != nil {
		return 0, err
	}
	return t.conn.CopyFrom(ctx, table, cols, src)
}

// LargeObjects is not supported on this transaction (nothing here uses them).
func (t *pipeTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *pipeTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	return t.conn.Conn().Prepare(ctx, name, sql)
}

func (t *pipeTx) Conn() *pgx.Conn {
	if t.conn == nil {
		return nil
	}
	return t.conn.Conn()
}

// savepointTx is a savepoint of a pipeTx (pgx's pseudo nested transaction).
type savepointTx struct {
	root   *pipeTx
	name   string
	jobsAt int // the root's deferred jobs before this savepoint
	closed bool
}

func (s *savepointTx) DeferJobs(ins jobs.ManyInserter, params ...river.InsertManyParams) bool {
	return !s.closed && s.root.DeferJobs(ins, params...)
}

func (s *savepointTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if s.closed {
		return nil, pgx.ErrTxClosed
	}
	return s.root.Begin(ctx)
}

// Commit keeps the savepoint's work (the savepoint itself is not released: that would be a
// round trip for nothing; the transaction's end releases it).
func (s *savepointTx) Commit(context.Context) error {
	if s.closed || s.root.closed {
		return pgx.ErrTxClosed
	}
	s.closed = true
	return nil
}

// Rollback undoes the savepoint's work and drops its deferred jobs: for free when its
// statement was never sent, else with "rollback to savepoint" at once (not ahead of the next
// statement: pgx prepares a batch's new statements first, which an aborted transaction
// refuses).
func (s *savepointTx) Rollback(ctx context.Context) error {
	if s.closed || s.root.closed {
		return pgx.ErrTxClosed
	}
	s.closed = true
	r := s.root
	if len(r.jobs) > s.jobsAt {
		r.jobs = r.jobs[:s.jobsAt]
	}
	if i := slices.Index(r.pending, "savepoint "+s.name); i >= 0 {
		r.pending = r.pending[:i] // nothing of it (or after it) reached the server
		return nil
	}
	_, err := r.Exec(ctx, "rollback to savepoint "+s.name)
	return err
}

func (s *savepointTx) live() error {
	if s.closed || s.root.closed {
		return pgx.ErrTxClosed
	}
	return nil
}

func (s *savepointTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	return s.root.CopyFrom(ctx, table, cols, src)
}

func (s *savepointTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := s.live(); err != nil {
		return &failedBatch{err: err}
	}
	return s.root.SendBatch(ctx, b)
}

func (s *savepointTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (s *savepointTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.root.Prepare(ctx, name, sql)
}

func (s *savepointTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := s.live(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return s.root.Exec(ctx, sql, args...)
}

func (s *savepointTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.root.Query(ctx, sql, args...)
}

func (s *savepointTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := s.live(); err != nil {
		return &rowsRow{err: err}
	}
	return s.root.QueryRow(ctx, sql, args...)
}

func (s *savepointTx) Conn() *pgx.Conn { return s.root.Conn() }

// batchRows are the rows of the last query of a batch: closing them ends the batch.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// rowsRow is QueryRow over Query (pgx's own row type cannot be built outside pgx).
type rowsRow struct {
	rows pgx.Rows
	err  error
}

func (r *rowsRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// failedBatch answers every result of a batch with err (and closes br, if any).
type failedBatch struct {
	br  pgx.BatchResults
	err error
}

func (f *failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f *failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f *failedBatch) QueryRow() pgx.Row                { return &rowsRow{err: f.err} }
func (f *failedBatch) Tx() pgx.Tx                       { return nil }
func (f *failedBatch) Close() error {
	if f.br != nil {
		_ = f.br.Close()
		f.br = nil
	}
	return f.err
}
