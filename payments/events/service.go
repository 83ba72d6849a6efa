package events

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/idempotency"
)

// Service is a merchant's view of its own events (issue 30): list, read and resend them,
// and follow the new ones (the events stream of gateway/ws). Every query is scoped by the
// tenant. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	rec  *Recorder
}

// NewService returns the service over pool, resending through rec.
func NewService(pool *pgxpool.Pool, rec *Recorder) *Service { return &Service{pool: pool, rec: rec} }

// List returns a page of the tenant's events, newest first, and where the next page starts
// (nil on the last page).
func (s *Service) List(ctx context.Context, t payments.Tenant, f ListFilter) ([]Event, *Position, error) {
	return List(ctx, s.pool, t, f)
}

// Get returns one event. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Event, error) {
	return Get(ctx, s.pool, t, id)
}

// Since returns the events created at or after since, oldest first, at most limit.
func (s *Service) Since(ctx context.Context, t payments.Tenant, since time.Time, limit int) ([]Event, error) {
	return Since(ctx, s.pool, t, since, limit)
}

// Resend queues the event again to one endpoint or to every subscribed one (see
// Recorder.Resend), in the request's idempotency scope when it has one.
func (s *Service) Resend(ctx context.Context, t payments.Tenant, id uuid.UUID, endpointID *uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		ids, err = s.rec.Resend(ctx, tx, t, id, endpointID)
		return err
	})
	return ids, err
}
