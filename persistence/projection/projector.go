// Package projection writes the exchange's read model to PostgreSQL: it tails the journal of
// one environment, decodes the engine's events and stores orders and trades in batches,
// together with the journal position in the same transaction, so replaying after a crash
// neither loses nor repeats a row. History reads (order lists, trades) come from here.
package projection

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/persistence/postgres"
)

// Source is the journal the projector reads.
type Source interface {
	ReadFrom(ctx context.Context, from uint64, fn func(offset uint64, payload []byte) error) error
	LastOffset() uint64
}

// Projector applies one environment's journal to the read model. Run owns its goroutine.
type Projector struct {
	pool      *pgxpool.Pool
	env       string
	src       Source
	log       *slog.Logger
	batchSize int
	poll      time.Duration
	interval  time.Duration

	applied atomic.Uint64
	wake    chan struct{} // new records are durable: apply them within interval
	urgent  chan struct{} // a reader waits: apply now
	commits atomic.Uint64
	rows    atomic.Uint64
	// caughtUp is when (unix ns) the journal's last durable offset was last seen fully
	// projected: every record durable by then is in PostgreSQL (projector goroutine
	// writes, LagSeconds reads).
	caughtUp atomic.Int64

	mu       sync.Mutex
	advanced chan struct{} // closed and replaced whenever applied grows
}

// New returns a projector for env ("sandbox" or "live") reading src.
func New(pool *pgxpool.Pool, env string, src Source, log *slog.Logger) *Projector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Projector{pool: pool, env: env, src: src, log: log, batchSize: DefaultBatchEvents, poll: 200 * time.Millisecond,
		interval: DefaultInterval, wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), advanced: make(chan struct{})}
	p.caughtUp.Store(time.Now().UnixNano())
	return p
}

// DefaultInterval is the longest a durable record waits before the projector writes it
// when no reader is waiting for it. Coalescing that long keeps PostgreSQL's share of the
// CPU small under load: most orders are accepted and filled (or cancelled) within one
// window, so they are one COPY row with their final state, never an UPDATE. A reader that
// needs the projection (WaitFor) makes it write at once.
const DefaultInterval = 100 * time.Millisecond

// DefaultBatchEvents bounds the events of one transaction (and so the projector's memory).
const DefaultBatchEvents = 32768

// Lag is how many journal records are durable but not yet in PostgreSQL.
func (p *Projector) Lag() uint64 {
	last, applied := p.src.LastOffset(), p.applied.Load()
	if last <= applied {
		return 0
	}
	return last - applied
}

// LagSeconds is how long the projection has been behind: 0 when it holds every durable
// record, else the time since the journal's last offset was last seen fully projected
// (an upper bound on the age of the oldest unprojected record, to within a poll).
func (p *Projector) LagSeconds() float64 {
	if p.Lag() == 0 {
		return 0
	}
	return time.Since(time.Unix(0, p.caughtUp.Load())).Seconds()
}

// Stats are the projector's counters since it was created.
type Stats struct {
	Applied    uint64  // last journal offset written
	Lag        uint64  // durable records not yet written
	LagSeconds float64 // see LagSeconds
	Commits    uint64  // transactions committed
	Rows       uint64  // order and trade rows written (COPY rows and UPDATEd orders)
}

// Stats returns the projector's counters (for metrics and tests).
func (p *Projector) Stats() Stats {
	return Stats{Applied: p.applied.Load(), Lag: p.Lag(), LagSeconds: p.LagSeconds(), Commits: p.commits.Load(), Rows: p.rows.Load()}
}

func (p *Projector) positionName() string { return "trading:" + p.env }

// Applied is the last journal offset written to PostgreSQL.
func (p *Projector) Applied() uint64 { return p.applied.Load() }

// Wake tells the projector new records are durable (it also polls).
func (p *Projector) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// WaitFor returns once every offset up to offset is applied, or the context ends.
func (p *Projector) WaitFor(ctx context.Context, offset uint64) error {
	for {
		p.mu.Lock()
		ch := p.advanced
		p.mu.Unlock()
		if p.applied.Load() >= offset {
			return nil
		}
		select {
		case p.urgent <- struct{}{}:
		default:
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("projection %s behind the journal (at %d, want %d): %w", p.env, p.applied.Load(), offset, ctx.Err())
		}
	}
}

// CatchUp loads the stored position and applies everything durable now; svcd calls it
// before serving so history is complete from the first request.
func (p *Projector) CatchUp(ctx context.Context) error {
	var pos int64
	err := p.pool.QueryRow(ctx, `select "offset" from projection_positions where name = $1`, p.positionName()).Scan(&pos)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("projection %s: read position: %w", p.env, err)
	}
	if uint64(pos) > p.applied.Load() {
		p.applied.Store(uint64(pos))
	}
	return p.step(ctx)
}

// Run applies new records until ctx ends. An error is logged and retried after a pause:
// the journal is durable, so the projection only ever lags.
func (p *Projector) Run(ctx context.Context) error {
	if err := p.CatchUp(ctx); err != nil && ctx.Err() == nil {
		p.log.Error("projection catch-up failed; retrying", "env", p.env, "error", err)
	}
	t := time.NewTicker(p.poll)
	defer t.Stop()
	hold := time.NewTimer(time.Hour)
	defer hold.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.urgent:
		case <-p.wake:
			// Coalesce: wait out the rest of the interval unless a reader needs it now.
			if d := p.interval - time.Since(last); d > 0 {
				hold.Reset(d)
				select {
				case <-ctx.Done():
					return nil
				case <-p.urgent:
				case <-hold.C:
				}
				hold.Stop()
			}
		case <-t.C:
		}
		last = time.Now()
		if err := p.step(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("projection failed; retrying", "env", p.env, "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
		}
	}
}

// step applies every durable record after the position, in batches.
func (p *Projector) step(ctx context.Context) error {
	// mark: the journal's last offset at markAt; once applied reaches it, everything
	// durable by markAt is projected.
	mark, markAt := p.src.LastOffset(), time.Now()
	defer func() {
		if p.applied.Load() >= mark {
			p.caughtUp.Store(markAt.UnixNano())
		}
	}()
	for p.src.LastOffset() > p.applied.Load() {
		if p.applied.Load() >= mark {
			p.caughtUp.Store(markAt.UnixNano())
			mark, markAt = p.src.LastOffset(), time.Now()
		}
		b := newBatch(p.env)
		// Whole engine batches only: a batch split into part records is projected once its
		// last part is read, and one a crash left incomplete is skipped (engine.BatchReader).
		var r engine.BatchReader
		err := p.src.ReadFrom(ctx, p.applied.Load()+1, func(off uint64, payload []byte) error {
			if b.first == 0 {
				b.first = off // the position check counts records skipped, too
			}
			err := r.Read(off, payload, func(ev *engine.Event) error {
				b.add(off, ev)
				return nil
			})
			if err != nil {
				return fmt.Errorf("journal offset %d: %w", off, err)
			}
			if b.n >= p.batchSize {
				return errBatchFull
			}
			return nil
		})
		if err != nil && !errors.Is(err, errBatchFull) {
			return err
		}
		if b.n == 0 {
			return nil
		}
		if err := p.commit(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

var errBatchFull = errors.New("batch full")

func (p *Projector) commit(ctx context.Context, b *batch) error {
	err := postgres.InTx(ctx, p.pool, func(tx pgx.Tx) error {
		// The projection is rebuilt from the journal, and its position commits with its
		// rows: a commit PostgreSQL loses in a crash is written again, so it need not
		// wait for PostgreSQL's WAL flush.
		if _, err := tx.Exec(ctx, `set local synchronous_commit = off`); err != nil {
			return err
		}
		// Guard against two projectors of one environment (e.g. two svcd by mistake).
		var pos int64
		err := tx.QueryRow(ctx, `select "offset" from projection_positions where name = $1 for update`, p.positionName()).Scan(&pos)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if uint64(pos) >= b.last {
			return nil // already applied by someone else
		}
		if uint64(pos) != b.first-1 {
			return fmt.Errorf("projection %s: stored position %d does not precede batch starting at %d", p.env, pos, b.first)
		}
		if err := b.write(ctx, tx); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `insert into projection_positions (name, "offset", updated_at) values ($1, $2, now())
			on conflict (name) do update set "offset" = excluded."offset", updated_at = now()`, p.positionName(), int64(b.last))
		return err
	})
	if err != nil {
		return fmt.Errorf("projection %s: commit offsets %d..%d: %w", p.env, b.first, b.last, err)
	}
	p.applied.Store(b.last)
	p.commits.Add(1)
	p.rows.Add(uint64(b.rows()))
	p.mu.Lock()
	close(p.advanced)
	p.advanced = make(chan struct{})
	p.mu.Unlock()
	return nil
}

// TradeID is the id of the trade recorded by the event at seq of symbol: deterministic (a
// replay writes the same id) and time-ordered like a UUIDv7 (48-bit milliseconds first).
func TradeID(env, symbol string, seq uint64, unixNano int64) uuid.UUID {
	h := sha1.New()
	h.Write([]byte(env))
	h.Write([]byte{0})
	h.Write([]byte(symbol))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	var id uuid.UUID
	copy(id[:], h.Sum(nil))
	ms := uint64(unixNano / 1e6)
	id[0], id[1], id[2], id[3], id[4], id[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	id[6] = 0x70 | id[6]&0x0f
	id[8] = 0x80 | id[8]&0x3f
	return id
}
