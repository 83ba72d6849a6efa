package webhooks

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

// The SQL of webhooks. Every tenant query filters by merchant_id and environment; deleted
// endpoints (deleted_at set) are invisible to merchants.

const endpointCols = `id, url, events, is_active, coalesce(disabled_reason, ''), created_at, updated_at`

func scanEndpoint(row pgx.Row) (Endpoint, error) {
	var e Endpoint
	err := row.Scan(&e.ID, &e.URL, &e.Events, &e.IsActive, &e.DisabledReason, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNotFound
	}
	return e, err
}

func insertEndpoint(ctx context.Context, q postgres.Querier, t payments.Tenant, e Endpoint, secretEnc []byte) error {
	_, err := q.Exec(ctx, `insert into webhook_endpoints
		(id, merchant_id, environment, url, events, is_active, secret_enc, created_at, updated_at)
		values ($1, $2, $3, $4, $5, true, $6, $7, $7)`,
		e.ID, t.MerchantID, t.Environment, e.URL, e.Events, secretEnc, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert webhook endpoint: %w", err)
	}
	return nil
}

func listEndpoints(ctx context.Context, q postgres.Querier, t payments.Tenant) ([]Endpoint, error) {
	rows, err := q.Query(ctx, `select `+endpointCols+` from webhook_endpoints
		where merchant_id = $1 and environment = $2 and deleted_at is null
		order by created_at, id`, t.MerchantID, t.Environment)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return postgres.Collect(rows, scanEndpoint)
}

func getEndpoint(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Endpoint, error) {
	return scanEndpoint(q.QueryRow(ctx, `select `+endpointCols+` from webhook_endpoints
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`,
		id, t.MerchantID, t.Environment))
}

// updateEndpoint applies the given fields; re-activating clears the disabled reason.
func updateEndpoint(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, url *string, evs []string, setEvents bool, active *bool, now time.Time) (Endpoint, error) {
	return scanEndpoint(q.QueryRow(ctx, `update webhook_endpoints set
			url = coalesce($4, url),
			events = case when $5 then $6::text[] else events end,
			is_active = coalesce($7, is_active),
			disabled_reason = case when $7 is null then disabled_reason else null end,
			updated_at = $8
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null
		returning `+endpointCols, id, t.MerchantID, t.Environment, url, setEvents, evs, active, now))
}

func deleteEndpoint(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, now time.Time) error {
	tag, err := q.Exec(ctx, `update webhook_endpoints set deleted_at = $4, is_active = false, updated_at = $4
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`,
		id, t.MerchantID, t.Environment, now)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// rotateSecret installs enc as the endpoint's secret; the secret it replaces stays valid
// for overlap (none when 0). It returns the endpoint and when the replaced one expires.
func rotateSecret(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, enc []byte, overlap time.Duration, now time.Time) (Endpoint, *time.Time, error) {
	var until *time.Time
	if overlap > 0 {
		u := now.Add(overlap)
		until = &u
	}
	e, err := scanEndpoint(q.QueryRow(ctx, `update webhook_endpoints set
			previous_secret_enc = case when $5::timestamptz is null then null else secret_enc end,
			previous_secret_expires_at = $5, secret_enc = $4, updated_at = $6
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null
		returning `+endpointCols, id, t.MerchantID, t.Environment, enc, until, now))
	return e, until, err
}

// secretPair is an endpoint's sealed secret and, during a rotation's overlap, the one it
// replaced (nil otherwise).
type secretPair struct {
	current, previous []byte
}

// previousSQL is the replaced secret while it is still valid at $now, else null.
func previousSQL(now string) string {
	return `case when previous_secret_expires_at > ` + now + ` then previous_secret_enc end`
}

func endpointSecret(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, now time.Time) (string, secretPair, error) {
	var (
		url string
		sp  secretPair
	)
	err := q.QueryRow(ctx, `select url, secret_enc, `+previousSQL("$4")+` from webhook_endpoints
		where id = $1 and merchant_id = $2 and environment = $3 and deleted_at is null`,
		id, t.MerchantID, t.Environment, now).Scan(&url, &sp.current, &sp.previous)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", sp, ErrNotFound
	}
	return url, sp, err
}

// target is what the worker needs for one attempt, read afresh each time.
type target struct {
	tenant    payments.Tenant
	url       string
	secrets   secretPair
	active    bool
	deleted   bool
	event     string
	data      []byte
	createdAt time.Time
}

var errGone = errors.New("endpoint or event no longer exists for this tenant")

func loadTarget(ctx context.Context, q postgres.Querier, endpointID, eventID uuid.UUID, now time.Time) (target, error) {
	var t target
	err := q.QueryRow(ctx, `select ep.merchant_id, ep.environment, ep.url, ep.secret_enc, `+previousSQL("$3")+`, ep.is_active,
			ep.deleted_at is not null, ev.type, ev.data, ev.created_at
		from webhook_endpoints ep
		join events ev on ev.id = $2 and ev.merchant_id = ep.merchant_id and ev.environment = ep.environment
		where ep.id = $1`, endpointID, eventID, now).
		Scan(&t.tenant.MerchantID, &t.tenant.Environment, &t.url, &t.secrets.current, &t.secrets.previous, &t.active, &t.deleted,
			&t.event, &t.data, &t.createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, errGone
	}
	if err != nil {
		return t, fmt.Errorf("load delivery target: %w", err)
	}
	return t, nil
}

func disableEndpoint(ctx context.Context, q postgres.Querier, id uuid.UUID, reason string, now time.Time) error {
	_, err := q.Exec(ctx, `update webhook_endpoints set is_active = false, disabled_reason = $2, updated_at = $3
		where id = $1 and is_active`, id, reason, now)
	if err != nil {
		return fmt.Errorf("disable webhook endpoint: %w", err)
	}
	return nil
}

func insertLog(ctx context.Context, q postgres.Querier, t payments.Tenant, l LogEntry) error {
	_, err := q.Exec(ctx, `insert into webhook_logs
		(id, merchant_id, environment, endpoint_id, endpoint_url, event_id, event, payload,
		 status_code, success, error, duration_ms, attempt, test, created_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		l.ID, t.MerchantID, t.Environment, l.EndpointID, l.EndpointURL, l.EventID, l.Event, string(l.Payload),
		l.StatusCode, l.Success, l.Error, l.Duration.Milliseconds(), l.Attempt, l.Test, l.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert webhook log: %w", err)
	}
	return nil
}

func listLogs(ctx context.Context, q postgres.Querier, t payments.Tenant, f LogFilter) ([]LogEntry, int64, error) {
	where := []string{"merchant_id = $1", "environment = $2"}
	args := []any{t.MerchantID, t.Environment}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Event != "" {
		add("event = ?", f.Event)
	}
	if f.EndpointID != nil {
		add("endpoint_id = ?", *f.EndpointID)
	}
	if f.Success != nil {
		add("success = ?", *f.Success)
	}
	cond := strings.Join(where, " and ")
	return postgres.Page(ctx, q, "webhook logs", `select count(*) from webhook_logs where `+cond,
		`select id, endpoint_id, endpoint_url, event_id, event, payload::text, status_code, success, error, duration_ms, attempt,
			test, created_at
		from webhook_logs where `+cond+` order by created_at desc, id desc`, args, f.Limit, f.Offset, scanLog)
}

func scanLog(row pgx.Row) (LogEntry, error) {
	var (
		l       LogEntry
		payload string
		ms      int64
	)
	err := row.Scan(&l.ID, &l.EndpointID, &l.EndpointURL, &l.EventID, &l.Event, &payload, &l.StatusCode,
		&l.Success, &l.Error, &ms, &l.Attempt, &l.Test, &l.CreatedAt)
	l.Payload = []byte(payload)
	l.Duration = time.Duration(ms) * time.Millisecond
	return l, err
}
