package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
)

// Service manages a merchant's endpoints and logs and sends test deliveries. Deliveries of
// recorded events are the Worker's. Safe for concurrent use.
type Service struct {
	pool   *pgxpool.Pool
	cipher *Cipher
	sender *Sender
	now    func() time.Time
}

// NewService builds the service. The sender's AllowInsecure also relaxes URL validation.
func NewService(pool *pgxpool.Pool, cipher *Cipher, sender *Sender) *Service {
	return &Service{pool: pool, cipher: cipher, sender: sender, now: time.Now}
}

// Create registers an endpoint and returns it with its new secret (shown only now).
// Errors: *payments.FieldError (url, events[i]), ErrNoLiveKey.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Created, error) {
	if err := validateURL(in.URL, s.sender.cfg.AllowInsecure); err != nil {
		return Created{}, err
	}
	evs, err := normalizeEvents(in.Events)
	if err != nil {
		return Created{}, err
	}
	if t.Environment == "live" && s.cipher.Dev() {
		return Created{}, ErrNoLiveKey
	}
	now := payments.Stamp(s.now())
	e := Endpoint{ID: uuid.Must(uuid.NewV7()), URL: in.URL, Events: evs, IsActive: true, CreatedAt: now, UpdatedAt: now}
	secret := newSecret()
	// In the request's idempotency scope when it has one (issue 30).
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error { return insertEndpoint(ctx, tx, t, e, s.cipher.seal(secret, e.ID[:])) })
	if err != nil {
		return Created{}, err
	}
	return Created{Endpoint: e, Secret: secret}, nil
}

// List returns the tenant's endpoints, oldest first.
func (s *Service) List(ctx context.Context, t payments.Tenant) ([]Endpoint, error) {
	return listEndpoints(ctx, s.pool, t)
}

// Get returns one endpoint. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Endpoint, error) {
	return getEndpoint(ctx, s.pool, t, id)
}

// Update changes url, events and is_active. Disabling stops the endpoint's pending
// deliveries (each ends on its next attempt); enabling resumes new ones.
// Errors: ErrNotFound, *payments.FieldError.
func (s *Service) Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in UpdateInput) (Endpoint, error) {
	if in.URL != nil {
		if err := validateURL(*in.URL, s.sender.cfg.AllowInsecure); err != nil {
			return Endpoint{}, err
		}
	}
	var evs []string
	if in.Events != nil {
		var err error
		if evs, err = normalizeEvents(*in.Events); err != nil {
			return Endpoint{}, err
		}
	}
	return updateEndpoint(ctx, s.pool, t, id, in.URL, evs, in.Events != nil, in.IsActive, s.now().UTC())
}

// Delete removes an endpoint; its pending deliveries stop. Errors: ErrNotFound.
func (s *Service) Delete(ctx context.Context, t payments.Tenant, id uuid.UUID) error {
	return deleteEndpoint(ctx, s.pool, t, id, s.now().UTC())
}

// RotateSecret gives the endpoint a new secret. The one it replaces keeps signing every
// delivery beside the new one (two signatures in X-Svc-Signature) until in.ExpiresIn has
// passed (default DefaultRotationOverlap; 0: it stops at once), so receivers can switch
// secrets without failing deliveries in between. A secret kept from an earlier rotation
// is dropped: at most two are valid at once. Errors: ErrNotFound, *payments.FieldError
// (expires_in).
func (s *Service) RotateSecret(ctx context.Context, t payments.Tenant, id uuid.UUID, in RotateInput) (Rotated, error) {
	overlap := DefaultRotationOverlap
	if in.ExpiresIn != nil {
		overlap = *in.ExpiresIn
	}
	if overlap < 0 || overlap > MaxRotationOverlap {
		return Rotated{}, invalid("expires_in", fmt.Sprintf("must be from 0 to %d seconds", int(MaxRotationOverlap.Seconds())))
	}
	secret := newSecret()
	now := payments.Stamp(s.now())
	var out Rotated
	// In the request's idempotency scope when it has one (issue 30).
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		e, until, err := rotateSecret(ctx, tx, t, id, s.cipher.seal(secret, id[:]), overlap, now)
		out = Rotated{Created: Created{Endpoint: e, Secret: secret}, PreviousExpiresAt: until}
		return err
	})
	if err != nil {
		return Rotated{}, err
	}
	return out, nil
}

// Test sends the named event (default test.webhook) with sample data to the endpoint now,
// with X-Svc-Test-Mode: true, whether or not it is active or subscribed, and logs the
// attempt. Success is a 2xx answer. Errors: ErrNotFound, *payments.FieldError (event).
func (s *Service) Test(ctx context.Context, t payments.Tenant, id uuid.UUID, event string) (TestResult, error) {
	if event == "" {
		event = string(events.TestWebhook)
	}
	if !events.Known(event) {
		return TestResult{}, invalid("event", "unknown event name "+jsonQuote(event))
	}
	url, secrets, err := endpointSecret(ctx, s.pool, t, id, s.now())
	if err != nil {
		return TestResult{}, err
	}
	secret, old, err := s.cipher.openPair(secrets, id[:])
	if err != nil {
		return TestResult{}, err
	}
	data, err := json.Marshal(events.Sample(events.Type(event)))
	if err != nil {
		return TestResult{}, err
	}
	now := s.now()
	eventID := uuid.Must(uuid.NewV7())
	body, o := s.sender.send(ctx, url, delivery{eventID: eventID, event: event, data: data, createdAt: now, secret: secret, oldSecret: old, test: true}, now)
	entry := LogEntry{
		ID: uuid.Must(uuid.NewV7()), EndpointID: id, EndpointURL: url, Event: event, Payload: body,
		StatusCode: o.status, Success: o.success(), Error: o.err, Duration: o.duration, Attempt: 1, Test: true, CreatedAt: now,
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := insertLog(lctx, s.pool, t, entry); err != nil {
		return TestResult{}, err
	}
	return TestResult{Success: entry.Success, StatusCode: o.status, Error: o.err, Duration: o.duration, Event: event, LogID: entry.ID}, nil
}

// Logs lists delivery attempts, newest first, with the total matching count.
func (s *Service) Logs(ctx context.Context, t payments.Tenant, f LogFilter) ([]LogEntry, int64, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	return listLogs(ctx, s.pool, t, f)
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
