package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/gateway/api"
	gwevents "svc/gateway/events"
	"svc/gateway/market"
	"svc/gateway/trading"
	"svc/gateway/ws"
	"svc/payments/events"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/projection"
	"svc/persistence/snapshot"
)

// tradingSubsystem is the exchange core of each environment and what serves it: the order and
// balance routes, the REST market data and the WebSocket stream.
type tradingSubsystem struct {
	exchanges exchanges
	orders    *trading.Handlers
	market    *market.Handlers
	ws        *ws.Server    // started; close stops it
	cluster   *clusterParts // engine RPC servers, or a process's remote nodes (cluster.go)
}

// newTrading opens, recovers and starts both exchanges, funds the demo merchant's sandbox
// account once (--demo; demo is uuid.Nil otherwise) and starts the WebSocket endpoint.
func newTrading(ctx context.Context, cfg config, pool *pgxpool.Pool, auth ws.Authenticator, demo uuid.UUID, log *slog.Logger, stdout io.Writer) (*tradingSubsystem, error) {
	if !cfg.Cluster.Roles.has(roleEngine) {
		return newRemoteTrading(ctx, cfg, pool, auth, demo, log, stdout)
	}
	xs, err := openExchanges(ctx, cfg, pool, log)
	if err != nil {
		return nil, err
	}
	if demo != uuid.Nil {
		if err := xs.fundDemo(demo, stdout); err != nil {
			xs.close()
			return nil, err
		}
	}
	marketREST, marketWS := xs.marketRoutes(pool, auth, log)
	if err := marketWS.Start(); err != nil {
		xs.close()
		return nil, fmt.Errorf("websocket endpoint: %w", err)
	}
	fatal := make(chan error, 1)
	servers, err := serveEngines(cfg, xs, fatal, log)
	if err != nil {
		marketWS.Close()
		xs.close()
		return nil, err
	}
	return &tradingSubsystem{exchanges: xs, orders: xs.tradingRoutes(pool), market: marketREST, ws: marketWS,
		cluster: &clusterParts{servers: servers, fatal: fatal}}, nil
}

// close stops the engine RPC servers or remote nodes, the WebSocket endpoint, then the
// exchanges.
func (t *tradingSubsystem) close() {
	t.cluster.close()
	if t.ws != nil {
		t.ws.Close()
	}
	t.exchanges.close()
}

// exchange is one environment's trading core: its journal, the engine recovered from the
// newest snapshot plus the journal's tail, the projector writing history to PostgreSQL, and
// the periodic snapshots. Sandbox and live each have one and never share a book.
type exchange struct {
	env       string
	log       *slog.Logger
	journal   journal.Journal
	engine    *engine.Engine
	projector *projection.Projector
	hub       *ws.Hub // market data and the WebSocket fan-out of this environment
	snaps     *snapshot.Store
	every     time.Duration
	retain    int          // snapshots whose journal is kept (file journal); 0: keep it all
	lease     *engineLease // this engine's right to write the journal (lease.go)
	snapBytes atomic.Int64 // the last snapshot's size, to size the next one's buffer

	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// openExchange opens an environment's journal, recovers the engine (newest snapshot plus
// the journal's tail) and starts it. Everything the engine's durable batches go to is built
// here, before the engine starts: the projector (over the journal) and the market-data hub
// (over the engine). start catches them up and runs the background loops; close stops
// everything in reverse order.
func openExchange(ctx context.Context, cfg config, env string, pool *pgxpool.Pool, log *slog.Logger) (*exchange, error) {
	log = log.With("env", env)
	snaps := &snapshot.Store{Dir: filepath.Join(cfg.SnapshotDir, env), Keep: 3}
	el, hot, err := leaseOrStandby(ctx, cfg, env, snaps, log)
	if err != nil {
		return nil, err
	}
	j, err := openJournal(ctx, cfg, env, el, log)
	if err != nil {
		hot.close()
		el.release()
		return nil, err
	}
	x := &exchange{env: env, log: log, journal: j, lease: el, every: cfg.SnapshotEvery, retain: cfg.JournalRetain,
		snaps: snaps, projector: projection.New(pool, env, j, log)}
	if !cfg.Cluster.Roles.has(roleProjector) {
		x.projector = nil // a projector node writes the history (docs/cluster.md)
	}
	// recover takes hot over (hands it over first thing); a refusal before that closes it.
	if err = x.checkProjection(ctx, pool); err != nil {
		hot.close()
	} else {
		err = x.recover(ctx, hot)
	}
	if err != nil {
		_ = j.Close()
		el.release()
		return nil, err
	}
	return x, nil
}

// checkProjection refuses a database whose order history was projected past the end of
// this journal: it came from another journal (another --journal, folder or topic), and
// projecting this one on top would skip its rows silently.
func (x *exchange) checkProjection(ctx context.Context, pool *pgxpool.Pool) error {
	if x.projector == nil {
		return nil
	}
	return projectionFits(ctx, pool, x.env, x.journal.LastOffset())
}

// projectionFits is the check of checkProjection, shared with the projector node.
func projectionFits(ctx context.Context, pool *pgxpool.Pool, env string, last uint64) error {
	pos, err := projection.NewPosition(pool, env).Applied(ctx)
	if err != nil {
		return err
	}
	if pos > last {
		return fmt.Errorf("%s projection: this database's order history is at journal offset %d, past the end of the journal (%d): it was written from another journal (a different --journal, --journal-dir, topic or cluster); use a database of this journal's own", env, pos, last)
	}
	return nil
}

// recover builds the engine over the event log, restores and replays it, builds the hub
// over it and starts it. It starts from the hot standby's state when there is one (hot is
// nil otherwise), else from the newest snapshot, and replays the journal after it. The event
// log tells x.durable of every durable batch, which only happens once the engine has
// started, when the projector and the hub exist.
func (x *exchange) recover(ctx context.Context, hot *hotStandby) error {
	start := time.Now()
	off, data, ok, err := hot.handover() // the standby stops following here, whatever comes next
	source := "standby"
	if err != nil {
		x.log.Warn("engine standby: its copy is unusable; recovering from the newest snapshot and the journal instead", "error", err)
	}
	if err := x.journal.Start(); err != nil {
		return fmt.Errorf("%s journal start: %w", x.env, err)
	}
	el := eventlog.New(x.journal, x.durable)
	eng, err := engine.New(engine.Config{Journal: el})
	if err != nil {
		return err
	}
	if !ok {
		source = "snapshot"
		if off, data, ok, err = x.snaps.Latest(); err != nil {
			return fmt.Errorf("%s snapshots: %w", x.env, err)
		}
	}
	var from uint64
	if ok {
		if off > x.journal.LastOffset() {
			return fmt.Errorf("%s %s at offset %d is ahead of the journal (last %d): wrong journal folder or topic?", x.env, source, off, x.journal.LastOffset())
		}
		if from, err = eng.Restore(data); err != nil {
			return fmt.Errorf("%s restore %s %d: %w", x.env, source, off, err)
		}
	}
	last, n, err := eventlog.Replay(ctx, x.journal, from, eng, nil)
	if err != nil {
		return fmt.Errorf("%s replay: %w", x.env, err)
	}
	if err := eng.Replayed(last); err != nil {
		return err
	}
	x.engine = eng
	x.hub = ws.NewHub(ws.HubConfig{Env: api.Environment(x.env), Exchange: eng, Log: x.log})
	if err := eng.Start(); err != nil {
		return err
	}
	x.log.Info("exchange recovered", "from", source, "from_offset", from, "replayed_events", n, "journal_offset", last,
		"ms", time.Since(start).Milliseconds())
	return nil
}

// durable is the event log's OnDurable: it wakes the projector and feeds the hub.
func (x *exchange) durable(batch []engine.Event, _ uint64) {
	if x.projector != nil {
		x.projector.Wake()
	}
	x.hub.Publish(batch)
}

// start catches the projector up, seeds the hub's books and candles and runs the loops.
func (x *exchange) start(ctx context.Context, pool *pgxpool.Pool) error {
	if x.projector != nil {
		if err := x.projector.CatchUp(ctx); err != nil {
			return err
		}
	}
	if err := x.hub.Seed(ctx, market.NewStore(pool)); err != nil {
		return err
	}
	x.run()
	return nil
}

// run starts the projector and the snapshot loop.
func (x *exchange) run() {
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	if x.projector != nil {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			_ = x.projector.Run(ctx)
		}()
	}
	x.wg.Add(2)
	go func() {
		defer x.wg.Done()
		x.hub.Run(ctx)
	}()
	go func() {
		defer x.wg.Done()
		x.snapshotLoop(ctx)
	}()
	x.wg.Add(1)
	go func() { // the engine's clock: countdown-cancel-all fires on its ticks (issue 28)
		defer x.wg.Done()
		trading.RunClock(ctx, x.engine, nil)
	}()
}

func (x *exchange) snapshotLoop(ctx context.Context) {
	if x.every <= 0 {
		return
	}
	t := time.NewTicker(x.every)
	defer t.Stop()
	var lastOffset uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if x.engine.Offset() == lastOffset || x.engine.Failed() {
			continue
		}
		off, err := x.snapshot()
		if err != nil {
			x.log.Error("snapshot failed", "error", err)
			continue
		}
		lastOffset = off
	}
}

func (x *exchange) snapshot() (uint64, error) {
	// Sized from the last image (plus an eighth for growth), so building a tens-of-MB
	// image does not copy it through every doubling of an append-grown slice.
	n := x.snapBytes.Load()
	data, off, err := x.engine.Snapshot(make([]byte, 0, n+n/8))
	if err != nil {
		return 0, err
	}
	x.snapBytes.Store(int64(len(data)))
	name, err := x.snaps.Save(off, data)
	if err != nil {
		return 0, err
	}
	x.log.Info("snapshot saved", "offset", off, "bytes", len(data), "file", name)
	x.pruneJournal()
	return off, nil
}

// pruneJournal deletes the file journal's segments that neither recovery from the
// retain-th newest snapshot nor the order-history projection still needs.
func (x *exchange) pruneJournal() {
	f, ok := x.journal.(*journal.File)
	if x.retain <= 0 || !ok {
		return
	}
	offs, err := x.snaps.Offsets()
	if err != nil || len(offs) == 0 {
		return
	}
	keep := offs[max(0, len(offs)-x.retain)]
	if x.projector != nil {
		keep = min(keep, x.projector.Applied())
	}
	if _, err := f.Prune(keep + 1); err != nil {
		x.log.Warn("journal prune failed", "error", err)
	}
}

// ready reports whether the exchange accepts orders.
func (x *exchange) ready(context.Context) error {
	if err := x.journal.Err(); err != nil {
		return err
	}
	if x.engine.Failed() {
		return errors.New("engine fail-stopped after a journal error")
	}
	return nil
}

// close stops accepting commands, lets the runners drain, writes a final snapshot (a fast
// next start), stops the loops and closes the journal.
func (x *exchange) close() {
	if x.cancel != nil {
		x.cancel()
	}
	x.wg.Wait()
	if x.engine != nil {
		if !x.engine.Failed() && x.journal.Err() == nil {
			if _, err := x.snapshot(); err != nil {
				x.log.Warn("final snapshot failed", "error", err)
			}
		}
		x.engine.Stop()
	}
	if err := x.journal.Close(); err != nil {
		x.log.Warn("journal close", "error", err)
	}
	x.lease.release() // after the journal: nothing of ours is in flight any more
}

// exchanges are the sandbox and live cores.
type exchanges map[api.Environment]*exchange

func openExchanges(ctx context.Context, cfg config, pool *pgxpool.Pool, log *slog.Logger) (exchanges, error) {
	// The environments open at the same time: each takes its own lease, waits out a dead
	// holder's TTL and replays its own journal, so a standby taking over waits one TTL, not
	// one per environment (issue 18: failover within 5 s).
	envs := []api.Environment{api.Sandbox, api.Live}
	type opened struct {
		x   *exchange
		err error
	}
	results := make([]opened, len(envs))
	// One environment failing stops the other's wait for its lease (a standby would wait).
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x, err := openExchange(octx, cfg, string(env), pool, log)
			if err == nil {
				if err = x.start(ctx, pool); err != nil {
					x.close()
				}
			}
			if err != nil {
				cancel()
			}
			results[i] = opened{x, err}
		}()
	}
	wg.Wait()
	xs := exchanges{}
	var errs []error
	for i, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		xs[envs[i]] = r.x
	}
	if err := errors.Join(errs...); err != nil {
		xs.close()
		return nil, err
	}
	return xs, nil
}

func (xs exchanges) ready(ctx context.Context) error {
	for env, x := range xs {
		if err := x.ready(ctx); err != nil {
			return fmt.Errorf("%s: %w", env, err)
		}
	}
	return nil
}

func (xs exchanges) close() {
	for _, x := range xs {
		x.close()
	}
}

func (xs exchanges) tradingRoutes(pool *pgxpool.Pool) *trading.Handlers {
	engines := map[api.Environment]trading.Exchange{}
	projectors := map[api.Environment]*projection.Projector{}
	positions := map[api.Environment]*projection.Position{}
	for env, x := range xs {
		engines[env] = x.engine
		if x.projector == nil {
			positions[env] = projection.NewPosition(pool, string(env)) // a projector node's (cluster.go)
			continue
		}
		projectors[env] = x.projector
	}
	history := trading.Projections{Store: projection.NewStore(pool), Projectors: projectors}
	if len(positions) > 0 {
		return trading.New(engines, remoteHistory{Projections: history, positions: positions}, nil)
	}
	return trading.New(engines, history, nil)
}

// demoFunds are what --demo puts in the demo merchant's sandbox trading account, once: the
// credits carry fixed transfer ids, which the engine applies only the first time.
var demoFunds = []struct{ asset, amount string }{
	{"NGN", "100000000"}, {"USDT", "50000"}, {"USDC", "50000"}, {"USD", "50000"},
}

func (xs exchanges) fundDemo(merchantID uuid.UUID, stdout io.Writer) error {
	return fundDemoVia(xs[api.Sandbox].engine, merchantID, stdout)
}

// marketRoutes serves the REST market data and the WebSocket stream from each
// environment's hub.
func (xs exchanges) marketRoutes(pool *pgxpool.Pool, auth ws.Authenticator, log *slog.Logger) (*market.Handlers, *ws.Server) {
	sources := map[api.Environment]market.Source{}
	hubs := map[api.Environment]*ws.Hub{}
	for env, x := range xs {
		sources[env], hubs[env] = x.hub, x.hub
	}
	// The private events channel streams each merchant's payment events (issue 30: svc listen).
	feed := &gwevents.Feed{Source: events.NewService(pool, nil), Log: log.With("component", "events-feed")}
	return market.New(sources, market.NewStore(pool), nil), ws.NewServer(ws.Config{Hubs: hubs, Auth: auth, Log: log, Events: feed})
}
