package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Collect reads every row with scan (the store's scanner of one row, the same one its
// QueryRow reads use) and closes rows. No rows is an empty slice, not nil. Errors: scan's,
// rows.Err().
func Collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// One reads the row query selects (over args) with scan, the store's scanner of one row: no
// row is notFound, another error is "read <what>: ...".
func One[T any](ctx context.Context, q Querier, what string, notFound error, scan func(pgx.Row) (T, error),
	query string, args ...any) (T, error) {
	v, err := scan(q.QueryRow(ctx, query, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		var zero T
		return zero, notFound
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	return v, nil
}

// Page reads one page of a list and the total the list has: count is the `select count(*)`
// of what list selects, both over args; list ends in its order by and gets
// `limit $n+1 offset $n+2` (n = len(args)) appended. what names the list in errors.
func Page[T any](ctx context.Context, q Querier, what, count, list string, args []any, limit, offset int,
	scan func(pgx.Row) (T, error)) ([]T, int64, error) {
	var total int64
	if err := q.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", what, err)
	}
	n := len(args)
	rows, err := q.Query(ctx, fmt.Sprintf(`%s limit $%d offset $%d`, list, n+1, n+2), append(args[:n:n], limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	out, err := Collect(rows, scan)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	return out, total, nil
}

// EscapeLike makes s a literal inside a LIKE or ILIKE pattern (with the default escape
// character, a backslash): a search for "50%_off" finds that text, not any "50...off".
func EscapeLike(s string) string {
	return likeEscaper.Replace(s)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// NullIfEmpty is what a nullable text column stores for s: NULL for "", else s.
func NullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// OrZero is the value of a nullable column scanned into p: the zero value for NULL.
func OrZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
