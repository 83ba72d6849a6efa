package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Position reads how far the projection of one environment has got from PostgreSQL: what
// a process without the projector (a gateway node of a cluster) waits on before a history
// read, so that read still sees every order acknowledged before it began.
type Position struct {
	pool *pgxpool.Pool
	env  string
	poll time.Duration
}

// NewPosition returns env's position reader; WaitFor polls every 10 ms.
func NewPosition(pool *pgxpool.Pool, env string) *Position {
	return &Position{pool: pool, env: env, poll: 10 * time.Millisecond}
}

// Applied is the last journal offset the projector has committed.
func (p *Position) Applied(ctx context.Context) (uint64, error) {
	var pos int64
	err := p.pool.QueryRow(ctx, `select "offset" from projection_positions where name = $1`, "trading:"+p.env).Scan(&pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("projection %s: read position: %w", p.env, err)
	}
	return uint64(pos), nil
}

// WaitFor returns once the projector has committed every offset up to offset, or with an
// error when ctx ends first (the projector node is behind or down).
func (p *Position) WaitFor(ctx context.Context, offset uint64) error {
	t := time.NewTicker(p.poll)
	defer t.Stop()
	for {
		applied, err := p.Applied(ctx)
		if err == nil && applied >= offset {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("projection %s behind the journal (at %d, want %d): %w", p.env, applied, offset, ctx.Err())
		case <-t.C:
		}
	}
}
