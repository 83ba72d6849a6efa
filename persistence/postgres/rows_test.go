package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// TestPageCollectAndNullables: Page counts the whole list and reads the page that limit and
// offset select, with its placeholders after the caller's (whose slice it leaves alone);
// Collect of no rows is empty, not nil; a "" stored through NullIfEmpty is NULL and reads
// back as "" through OrZero.
func TestPageCollectAndNullables(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `create table t (k text not null, x int not null, note text)`); err != nil {
		t.Fatal(err)
	}
	for x := 1; x <= 7; x++ {
		note := ""
		if x%2 == 0 {
			note = "even"
		}
		if _, err := pool.Exec(ctx, `insert into t values ('a', $1, $2)`, x, postgres.NullIfEmpty(note)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `insert into t values ('b', 100, null)`); err != nil {
		t.Fatal(err)
	}
	type row struct {
		x    int
		note string
	}
	scan := func(r pgx.Row) (row, error) {
		var v row
		var note *string
		err := r.Scan(&v.x, &note)
		v.note = postgres.OrZero(note)
		return v, err
	}
	args := append(make([]any, 0, 4), "a")
	for _, tc := range []struct {
		limit, offset int
		want          []int
	}{
		{3, 0, []int{7, 6, 5}},
		{3, 6, []int{1}},
		{3, 7, nil},
	} {
		got, total, err := postgres.Page(ctx, pool, "t", `select count(*) from t where k = $1`,
			`select x, note from t where k = $1 order by x desc`, args, tc.limit, tc.offset, scan)
		if err != nil {
			t.Fatal(err)
		}
		if total != 7 || len(got) != len(tc.want) || got == nil {
			t.Fatalf("limit %d offset %d: %v (total %d), want %v of 7", tc.limit, tc.offset, got, total, tc.want)
		}
		for i, x := range tc.want {
			if wantNote := map[bool]string{true: "even"}[x%2 == 0]; got[i].x != x || got[i].note != wantNote {
				t.Fatalf("limit %d offset %d: row %d is %+v, want %d %q", tc.limit, tc.offset, i, got[i], x, wantNote)
			}
		}
		if len(args) != 1 || args[:2][1] != nil {
			t.Fatalf("Page changed the caller's args: %v", args[:2])
		}
	}
	if _, _, err := postgres.Page(ctx, pool, "missing", `select count(*) from nope`, `select x, note from nope`, nil, 1, 0, scan); err == nil {
		t.Fatal("a failing count answered no error")
	}
}

// TestOne: One reads the row with the store's scanner; no row is the caller's not-found
// error, and any other error is wrapped with what was read.
func TestOne(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	errNone := errors.New("no such thing")
	scan := func(r pgx.Row) (int, error) {
		var x int
		return x, r.Scan(&x)
	}
	if x, err := postgres.One(ctx, pool, "thing", errNone, scan, `select $1::int`, 42); x != 42 || err != nil {
		t.Fatalf("a row: %d %v", x, err)
	}
	if _, err := postgres.One(ctx, pool, "thing", errNone, scan, `select 1 where false`); err != errNone {
		t.Fatalf("no row: %v, want the caller's not-found error itself", err)
	}
	_, err := postgres.One(ctx, pool, "thing", errNone, scan, `select x from nope`)
	if err == nil || errors.Is(err, errNone) || !strings.HasPrefix(err.Error(), "read thing: ") {
		t.Fatalf("a failing query: %v", err)
	}
}

// recordingScope is a request's transaction as payments/idempotency opens one: it runs
// every fn in its own transaction and counts them.
type recordingScope struct {
	tx    pgx.Tx
	calls int
}

func (s *recordingScope) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	s.calls++
	return fn(s.tx)
}

// TestInScopeAndInTxValue: InScope joins the context's scope, whose transaction alone
// decides what commits, and without one runs in a transaction of its own; InTxValue
// answers fn's value, run by InTx or InScope, and an error rolls its writes back.
func TestInScopeAndInTxValue(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `create table t (x int)`); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `select count(*) from t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func(tx pgx.Tx) error { _, err := tx.Exec(ctx, `insert into t values (1)`); return err }

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &recordingScope{tx: tx}
	if postgres.ScopeFrom(ctx) != nil {
		t.Fatal("a bare context has a scope")
	}
	sctx := postgres.WithScope(ctx, s)
	if postgres.ScopeFrom(sctx) != postgres.Scope(s) {
		t.Fatal("ScopeFrom does not find the scope WithScope put")
	}
	if err := postgres.InScope(sctx, pool, insert); err != nil {
		t.Fatal(err)
	}
	if s.calls != 1 || count() != 0 {
		t.Fatalf("scope calls %d, rows visible before the scope commits %d", s.calls, count())
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if count() != 0 {
		t.Fatal("a write in a rolled-back scope stayed")
	}
	if err := postgres.InScope(ctx, pool, insert); err != nil || count() != 1 {
		t.Fatalf("without a scope: %v, %d rows", err, count())
	}

	v, err := postgres.InTxValue(ctx, pool, postgres.InTx, func(tx pgx.Tx) (int, error) {
		var n int
		err := tx.QueryRow(ctx, `insert into t values (2) returning x`).Scan(&n)
		return n, err
	})
	if err != nil || v != 2 || count() != 2 {
		t.Fatalf("InTxValue: %d %v, %d rows", v, err, count())
	}
	refused := errors.New("refused")
	if _, err := postgres.InTxValue(ctx, pool, postgres.InTx, func(tx pgx.Tx) (int, error) { return 0, errors.Join(insert(tx), refused) }); !errors.Is(err, refused) || count() != 2 {
		t.Fatalf("InTxValue error: %v, %d rows", err, count())
	}

	// Run by InScope (what idempotency.InTx is), the value comes out of the scope's
	// transaction, which alone decides whether the write stays.
	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s = &recordingScope{tx: tx}
	v, err = postgres.InTxValue(postgres.WithScope(ctx, s), pool, postgres.InScope, func(tx pgx.Tx) (int, error) {
		var n int
		err := tx.QueryRow(ctx, `insert into t values (3) returning x`).Scan(&n)
		return n, err
	})
	if err != nil || v != 3 || s.calls != 1 || count() != 2 {
		t.Fatalf("InTxValue in a scope: %d %v, scope calls %d, rows visible before the scope commits %d", v, err, s.calls, count())
	}
	if err := tx.Commit(ctx); err != nil || count() != 3 {
		t.Fatalf("commit the scope: %v, %d rows", err, count())
	}
}
