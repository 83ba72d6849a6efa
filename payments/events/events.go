package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments"
	"svc/payments/jobs"
)

// Queue is the river queue webhook deliveries run on.
const Queue = "webhooks"

// MaxAttempts is how many times one delivery is tried: the first attempt and ten retries
// spread over about three and a half days (see payments/webhooks.Schedule).
const MaxAttempts = 11

// DeliveryArgs is the river job that delivers one event to one endpoint. The worker reads
// the endpoint (URL, secret, whether it is still active) afresh on every attempt.
type DeliveryArgs struct {
	EventID    uuid.UUID `json:"event_id"`
	EndpointID uuid.UUID `json:"endpoint_id"`
}

// Kind is the river job kind.
func (DeliveryArgs) Kind() string { return "webhook_delivery" }

// InsertOpts puts deliveries on their queue with their attempt budget.
func (DeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
}

// Inserter inserts river jobs inside a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Event is a recorded event.
type Event struct {
	ID          uuid.UUID
	MerchantID  uuid.UUID
	Environment string
	Type        Type
	Data        json.RawMessage // a JSON object
	CreatedAt   time.Time
}

// Errors of Record.
var (
	ErrUnknownType    = errors.New("events: event type is not in the catalogue")
	ErrBadEnvironment = errors.New("events: environment must be sandbox or live")
	ErrDataNotObject  = errors.New("events: data must encode to a JSON object")
	// ErrNotFound: no event with that id for this merchant and environment (the API's 404).
	ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "event not found"}
)

// Recorder records events and enqueues their deliveries. It is safe for concurrent use.
type Recorder struct {
	jobs Inserter
	now  func() time.Time
}

// NewRecorder returns a Recorder that enqueues through jobs.
func NewRecorder(jobs Inserter) *Recorder {
	return &Recorder{jobs: jobs, now: time.Now}
}

// Record writes the event (merchant, environment "sandbox" or "live", type, data) in tx and
// enqueues one delivery per active endpoint of that merchant and environment subscribed to
// typ or to every event. data is any value that encodes to a JSON object (nil: {}); use
// the structs of data.go. It returns the event's id (UUIDv7).
//
// Errors: ErrUnknownType, ErrBadEnvironment, ErrDataNotObject, or the database's. On any
// error the caller must roll tx back.
func (r *Recorder) Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ Type, data any) (uuid.UUID, error) {
	if !Known(string(typ)) {
		return uuid.Nil, fmt.Errorf("%w: %q", ErrUnknownType, typ)
	}
	if environment != "sandbox" && environment != "live" {
		return uuid.Nil, fmt.Errorf("%w: %q", ErrBadEnvironment, environment)
	}
	raw, err := encodeData(data)
	if err != nil {
		return uuid.Nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	// One round trip: the event's insert rides in the endpoint select (a data-modifying
	// WITH runs whether or not the select reads it); the deliveries are enqueued with the
	// transaction's other jobs when tx defers them (jobs.Deferrer).
	rows, err := tx.Query(ctx, `with ev as (
			insert into events (id, merchant_id, environment, type, data, created_at)
			values ($1, $2, $3, $4, $5, $6))
		`+subscribedSQL, id, merchantID, environment, string(typ), raw, r.now().UTC())
	if err != nil {
		return uuid.Nil, fmt.Errorf("insert event: %w", err)
	}
	if _, err := r.enqueue(ctx, tx, rows, id); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// subscribedSQL selects the active endpoints of merchant $2 and environment $3 subscribed
// to event type $4 or to every event (as fanOut's query).
const subscribedSQL = `select id from webhook_endpoints
		where merchant_id = $2 and environment = $3 and is_active and deleted_at is null
		  and (cardinality(events) = 0 or $4 = any(events))
		order by created_at`

// Redeliver enqueues the event again to every endpoint that is subscribed to it now (the
// operator's replay). It returns the number of deliveries enqueued; ErrNotFound if there is
// no such event.
func (r *Recorder) Redeliver(ctx context.Context, tx pgx.Tx, eventID uuid.UUID) (int, error) {
	var (
		merchantID uuid.UUID
		env, typ   string
	)
	err := tx.QueryRow(ctx, `select merchant_id, environment, type from events where id = $1`, eventID).
		Scan(&merchantID, &env, &typ)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("read event: %w", err)
	}
	return r.fanOut(ctx, tx, eventID, merchantID, env, Type(typ))
}

// fanOut enqueues a delivery per subscribed active endpoint. An endpoint disabled or deleted
// concurrently may still get a job; the worker reads the endpoint on every attempt and stops.
func (r *Recorder) fanOut(ctx context.Context, tx pgx.Tx, eventID, merchantID uuid.UUID, env string, typ Type) (int, error) {
	rows, err := tx.Query(ctx, `select id from webhook_endpoints
		where merchant_id = $1 and environment = $2 and is_active and deleted_at is null
		  and (cardinality(events) = 0 or $3 = any(events))
		order by created_at`, merchantID, env, string(typ))
	if err != nil {
		return 0, fmt.Errorf("select subscribed endpoints: %w", err)
	}
	return r.enqueue(ctx, tx, rows, eventID)
}

// enqueue reads the subscribed endpoints' ids from rows and enqueues a delivery of the
// event to each.
func (r *Recorder) enqueue(ctx context.Context, tx pgx.Tx, rows pgx.Rows, eventID uuid.UUID) (int, error) {
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, fmt.Errorf("select subscribed endpoints: %w", err)
	}
	return len(ids), r.enqueueIDs(ctx, tx, ids, eventID)
}

// enqueueIDs enqueues a delivery of the event to each endpoint of ids.
func (r *Recorder) enqueueIDs(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, eventID uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, ep := range ids {
		params[i] = river.InsertManyParams{Args: DeliveryArgs{EventID: eventID, EndpointID: ep}}
	}
	if err := jobs.InsertManyTx(ctx, r.jobs, tx, params...); err != nil {
		return fmt.Errorf("enqueue deliveries: %w", err)
	}
	return nil
}

func encodeData(data any) (json.RawMessage, error) {
	if data == nil {
		return json.RawMessage(`{}`), nil
	}
	var raw []byte
	switch d := data.(type) {
	case json.RawMessage:
		raw = d
	case []byte:
		raw = d
	default:
		b, err := json.Marshal(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDataNotObject, err)
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, ErrDataNotObject
	}
	return raw, nil
}
