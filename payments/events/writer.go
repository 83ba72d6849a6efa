package events

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Writer records an event in the caller's transaction; *Recorder is one. The services that
// record events take a Writer, so one interface serves them all.
type Writer interface {
	Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ Type, data any) (uuid.UUID, error)
}

var _ Writer = (*Recorder)(nil)
