package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/persistence/postgres"
)

// Retention is how long events stay readable through the events API and resendable: at
// least this long. Nothing deletes events today (the housekeeping purges quotes, keys and
// the mail outbox only); a purge added later must keep this promise (docs/events.md).
const Retention = 30 * 24 * time.Hour

// ErrEndpointNotFound is Resend's answer for an endpoint_id that is not one of the
// tenant's endpoints (deleted, or another tenant's): 404.
var ErrEndpointNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "webhook endpoint not found"}

// ErrEndpointDisabled is Resend's answer for an endpoint that is disabled: its deliveries
// would end unsent, so none is queued (409 INVALID_STATE).
var ErrEndpointDisabled error = &payments.Error{Code: "INVALID_STATE",
	Message: "the webhook endpoint is disabled: enable it (PATCH is_active true) before resending to it"}

// Position is where a page of events ends: the (created_at, id) of its last event. The
// next page starts strictly after it in the list's order (newest first).
type Position struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// String encodes the position for an opaque cursor.
func (p Position) String() string {
	return strconv.FormatInt(p.CreatedAt.UnixMicro(), 10) + ":" + p.ID.String()
}

// ParsePosition decodes String's form.
func ParsePosition(s string) (Position, bool) {
	us, id, ok := strings.Cut(s, ":")
	if !ok {
		return Position{}, false
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return Position{}, false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return Position{}, false
	}
	return Position{CreatedAt: time.UnixMicro(n).UTC(), ID: u}, true
}

// ListFilter selects a tenant's events; zero fields do not filter.
type ListFilter struct {
	Types []Type     // any of these
	From  *time.Time // created at or after
	To    *time.Time // created before
	After *Position  // the previous page's last event
	Limit int        // at most this many (default 20)
}

const eventCols = `id, merchant_id, environment, type, data, created_at`

func scanEvent(row pgx.Row) (Event, error) {
	var (
		e   Event
		typ string
	)
	err := row.Scan(&e.ID, &e.MerchantID, &e.Environment, &typ, &e.Data, &e.CreatedAt)
	e.Type = Type(typ)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNotFound
	}
	return e, err
}

// List returns the tenant's events, newest first, and the position to pass as After for
// the next page (nil on the last page).
func List(ctx context.Context, q postgres.Querier, t payments.Tenant, f ListFilter) ([]Event, *Position, error) {
	if f.Limit <= 0 {
		f.Limit = 20
	}
	where := []string{"merchant_id = $1", "environment = $2"}
	args := []any{t.MerchantID, t.Environment}
	add := func(cond string, vs ...any) {
		for _, v := range vs {
			args = append(args, v)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if len(f.Types) > 0 {
		names := make([]string, len(f.Types))
		for i, typ := range f.Types {
			names[i] = string(typ)
		}
		add("type = any(?)", names)
	}
	if f.From != nil {
		add("created_at >= ?", *f.From)
	}
	if f.To != nil {
		add("created_at < ?", *f.To)
	}
	if f.After != nil {
		add("(created_at, id) < (?, ?)", f.After.CreatedAt, f.After.ID)
	}
	args = append(args, f.Limit+1)
	rows, err := q.Query(ctx, `select `+eventCols+` from events where `+strings.Join(where, " and ")+`
		order by created_at desc, id desc limit $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(out) <= f.Limit {
		return out, nil, nil
	}
	out = out[:f.Limit]
	last := out[len(out)-1]
	return out, &Position{CreatedAt: last.CreatedAt, ID: last.ID}, nil
}

// Get returns one of the tenant's events. Errors: ErrNotFound (also for another tenant's).
func Get(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Event, error) {
	return scanEvent(q.QueryRow(ctx, `select `+eventCols+` from events
		where id = $1 and merchant_id = $2 and environment = $3`, id, t.MerchantID, t.Environment))
}

// Since returns the tenant's events created at or after since, oldest first, at most limit
// (the events stream's poll; see gateway/events.Feed).
func Since(ctx context.Context, q postgres.Querier, t payments.Tenant, since time.Time, limit int) ([]Event, error) {
	rows, err := q.Query(ctx, `select `+eventCols+` from events
		where merchant_id = $1 and environment = $2 and created_at >= $3
		order by created_at, id limit $4`, t.MerchantID, t.Environment, since, limit)
	if err != nil {
		return nil, fmt.Errorf("events since: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scanEvent(r) })
}

// Resend enqueues one of the tenant's events again (the merchant's resend): to the one
// endpoint endpointID when it is not nil (subscribed to the event or not, as long as it is
// active), else to every active endpoint subscribed to it now. Each delivery is an ordinary
// delivery job: tried on the retry schedule and logged attempt by attempt. It returns the
// endpoints a delivery was queued for.
//
// Errors: ErrNotFound, ErrEndpointNotFound, ErrEndpointDisabled, or the database's.
func (r *Recorder) Resend(ctx context.Context, tx pgx.Tx, t payments.Tenant, eventID uuid.UUID, endpointID *uuid.UUID) ([]uuid.UUID, error) {
	e, err := Get(ctx, tx, t, eventID)
	if err != nil {
		return nil, err
	}
	var rows pgx.Rows
	if endpointID != nil {
		var active bool
		err := tx.QueryRow(ctx, `select is_active from webhook_endpoints
			where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`,
			*endpointID, t.MerchantID, t.Environment).Scan(&active)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrEndpointNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("read endpoint: %w", err)
		}
		if !active {
			return nil, ErrEndpointDisabled
		}
		rows, err = tx.Query(ctx, `select $1::uuid`, *endpointID)
		if err != nil {
			return nil, err
		}
	} else {
		rows, err = tx.Query(ctx, `select id from webhook_endpoints
			where merchant_id = $1 and environment = $2 and is_active and deleted_at is null
			  and (cardinality(events) = 0 or $3 = any(events))
			order by created_at`, t.MerchantID, t.Environment, string(e.Type))
		if err != nil {
			return nil, fmt.Errorf("select subscribed endpoints: %w", err)
		}
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("select endpoints: %w", err)
	}
	if err := r.enqueueIDs(ctx, tx, ids, eventID); err != nil {
		return nil, err
	}
	return ids, nil
}
