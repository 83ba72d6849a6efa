package moneyout

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/persistence/postgres"
)

// Table reads one money-out table the same way for the three domains: one record (the
// API's, scoped to the tenant; the job's, by id alone) and a page of the tenant's, newest
// first, with the total. Writes stay in the owning package (layering.TestOneWriterPerTable).
type Table[R any] struct {
	Name     string                   // "withdrawals"
	Cols     string                   // the select list Scan reads
	Scan     func(pgx.Row) (R, error) // answers NotFound for no row
	NotFound error                    // the domain's ErrNotFound
}

// Get reads record id; t nil reads any tenant's (the jobs know only the id).
//
// Errors: NotFound, the database's.
func (tb Table[R]) Get(ctx context.Context, q postgres.Querier, t *payments.Tenant, id uuid.UUID) (R, error) {
	sql, args := `select `+tb.Cols+` from `+tb.Name+` where id = $1`, []any{id}
	if t != nil {
		sql, args = sql+` and merchant_id = $2 and environment = $3`, append(args, t.MerchantID, t.Environment)
	}
	r, err := tb.Scan(q.QueryRow(ctx, sql, args...))
	if err != nil && !errors.Is(err, tb.NotFound) {
		err = fmt.Errorf("%s: load: %w", tb.Name, err)
	}
	return r, err
}

// List reads page `page` (from 1) of `limit` of the tenant's records matching where (SQL
// over the table's columns whose parameters start at $3, given in args), newest first, and
// the total matching; one query (the total rides on every row), plus a count when the page
// is past the end.
func (tb Table[R]) List(ctx context.Context, q postgres.Querier, t payments.Tenant, where string, args []any, page, limit int) ([]R, int64, error) {
	cond := `merchant_id = $1 and environment = $2`
	if where != "" {
		cond += ` and (` + where + `)`
	}
	all := append([]any{t.MerchantID, t.Environment}, args...)
	n := len(all)
	rows, err := q.Query(ctx, fmt.Sprintf(`select %s, count(*) over () from %s where %s
		order by created_at desc, id desc limit $%d offset $%d`, tb.Cols, tb.Name, cond, n+1, n+2),
		append(all, limit, (page-1)*limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: list: %w", tb.Name, err)
	}
	defer rows.Close()
	var total int64
	var out []R
	for rows.Next() {
		r, err := tb.Scan(withTotal{rows, &total})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: list: %w", tb.Name, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: list: %w", tb.Name, err)
	}
	if len(out) == 0 && page > 1 {
		if err := q.QueryRow(ctx, `select count(*) from `+tb.Name+` where `+cond, all...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("%s: count: %w", tb.Name, err)
		}
	}
	return out, total, nil
}

// withTotal scans a list row's own columns with Scan's destinations and the window total
// after them.
type withTotal struct {
	pgx.Rows
	total *int64
}

func (r withTotal) Scan(dest ...any) error { return r.Rows.Scan(append(dest, r.total)...) }
