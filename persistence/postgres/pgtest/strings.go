package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

// Strings runs a query of one text column through q and returns its rows in order, failing
// the test on any error: what a test reads back to compare with what it expects (event
// types, references, queued jobs' arguments).
func Strings(t testing.TB, q postgres.Querier, sql string, args ...any) []string {
	t.Helper()
	rows, err := q.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
