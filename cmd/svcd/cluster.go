package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/cluster/enginerpc"
	"svc/cluster/tail"
	"svc/engine"
	"svc/gateway/api"
	"svc/gateway/market"
	"svc/gateway/trading"
	"svc/gateway/ws"
	"svc/payments/balance"
	"svc/payments/rates"
	"svc/persistence/journal"
	"svc/persistence/projection"
)

// engineAPI is one environment's engine as the gateway and the payments services use it:
// the *engine.Engine itself in the engine's process, an *enginerpc.Client in the others.
type engineAPI interface {
	trading.Exchange
	Depth(symbol string, n int) (engine.Depth, error)
	Err() error
}

var (
	_ engineAPI        = (*engine.Engine)(nil)
	_ engineAPI        = (*enginerpc.Client)(nil)
	_ rates.Exchange   = engineAPI(nil)
	_ balance.Exchange = engineAPI(nil)
	_ ws.Exchange      = engineAPI(nil)
)

// engines is every environment's engine, local or remote.
func (t *tradingSubsystem) engines() map[api.Environment]engineAPI {
	out := map[api.Environment]engineAPI{}
	for env, x := range t.exchanges {
		out[env] = x.engine
	}
	if t.cluster != nil {
		for env, n := range t.cluster.nodes {
			out[env] = n.client
		}
	}
	return out
}

// ready reports whether every environment's engine accepts commands (and, on a node
// without the engine, whether the engine can be reached).
func (t *tradingSubsystem) ready(ctx context.Context) error {
	if err := t.exchanges.ready(ctx); err != nil {
		return err
	}
	if t.cluster == nil {
		return nil
	}
	for env, n := range t.cluster.nodes {
		if err := n.ready(ctx); err != nil {
			return fmt.Errorf("%s: %w", env, err)
		}
	}
	return nil
}

// metricSources are what the exchanges and the nodes' projectors and hubs expose.
func (t *tradingSubsystem) metricSources() []domainSource {
	out := t.exchanges.domainSources()
	if t.cluster != nil {
		for env, n := range t.cluster.nodes {
			s := domainSource{env: string(env)}
			if n.projector != nil {
				s.projection = n.projector.Stats
			}
			if n.hub != nil {
				s.hub = n.hub
			}
			out = append(out, s)
		}
	}
	return out
}

// clusterParts are what a process of a cluster runs besides (or instead of) the embedded
// exchanges: the engine RPC servers of the engine role, and on a process without the
// engine, one node per environment (engine client, journal tail, projector, hub).
type clusterParts struct {
	servers []*rpcServer
	nodes   map[api.Environment]*node
	fatal   chan error // an engine that can no longer serve (serveEngines)
}

func (c *clusterParts) close() {
	if c == nil {
		return
	}
	for _, s := range c.servers {
		s.stop()
	}
	for _, n := range c.nodes {
		n.close()
	}
}

// exitOnEngineLoss returns ctx cancelled when an engine of this process can no longer serve
// (its lease lost, its journal failed), if it runs as one of an engine pair
// (--engine-standby): the lease is then released on the way out, the standby takes over, and
// the supervisor restarts this process, which comes back as the standby. A single engine
// stays up instead, answering 503 until an operator looks. cause is the reason to exit
// with (nil after a plain stop).
func exitOnEngineLoss(ctx context.Context, cfg config, tr *tradingSubsystem, log *slog.Logger) (context.Context, func() error) {
	if !cfg.Kafka.EngineStandby || tr.cluster == nil || tr.cluster.fatal == nil {
		return ctx, func() error { return nil }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case err := <-tr.cluster.fatal:
			log.Error("engine lost: this process exits so that its supervisor restarts it as the standby", "error", err)
			// Stop renewing every lease now: should the shutdown hang (a journal that cannot
			// reach its brokers), the leases still lapse within a TTL and the standby takes
			// over; nothing is acknowledged meanwhile, as the lease checks fail.
			for _, x := range tr.exchanges {
				if x != nil && x.lease != nil {
					x.lease.cancel()
				}
			}
			cancel(fmt.Errorf("%w (an engine of a pair exits; restarted, it waits as the standby)", err))
		case <-ctx.Done():
		}
	}()
	return ctx, func() error {
		if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
}

// rpcServer is one environment's engine served to the other processes.
type rpcServer struct {
	env    api.Environment
	srv    *enginerpc.Server
	served chan error
	quit   chan struct{} // closed by stop: the watch ends
}

// serveEngines serves each environment's engine on its --engine-listen address.
// When an environment's engine can no longer serve (its lease lost, its journal failed), its
// server stops and closes every connection, so the gateways move to the engine that takes
// over, and the cause goes to fatal (a process of an engine pair exits on it: see serve).
func serveEngines(cfg config, xs exchanges, fatal chan<- error, log *slog.Logger) ([]*rpcServer, error) {
	var out []*rpcServer
	tlsCfg, err := cfg.Cluster.serverTLS()
	if err != nil {
		return nil, err
	}
	for _, env := range []api.Environment{api.Sandbox, api.Live} {
		addr, ok := cfg.Cluster.EngineListen[string(env)]
		x := xs[env]
		if !ok || x == nil {
			continue
		}
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			for _, s := range out {
				s.stop()
			}
			return nil, fmt.Errorf("%s engine rpc: %w", env, err)
		}
		opts := enginerpc.ServerOptions{TLS: tlsCfg, Log: log.With("env", string(env))}
		if x.lease != nil {
			opts.Guard = x.lease.l.Check // nothing is answered outside the lease (issue 29)
		}
		s := &rpcServer{env: env, srv: enginerpc.NewServer(x.engine, opts), served: make(chan error, 1), quit: make(chan struct{})}
		go func() { s.served <- s.srv.Serve(lis) }()
		go s.watch(x, fatal, log)
		out = append(out, s)
	}
	return out, nil
}

// watch stops the server once x cannot serve any more, and reports why on fatal.
func (s *rpcServer) watch(x *exchange, fatal chan<- error, log *slog.Logger) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		err := x.ready(context.Background())
		if err == nil {
			continue
		}
		log.Error("engine rpc: the engine can no longer serve; closing its connections so clients move to the engine that takes over",
			"env", string(s.env), "error", err)
		s.srv.Kill()
		select {
		case fatal <- fmt.Errorf("%s engine: %w", s.env, err):
		default:
		}
		return
	}
}

func (s *rpcServer) stop() {
	close(s.quit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Stop(ctx)
	<-s.served
}

// node is one environment on a process without the engine: a client of the engine's
// process, and for the projector and market-data roles the journal followed read-only.
type node struct {
	env       api.Environment
	log       *slog.Logger
	client    *enginerpc.Client
	journal   *journal.Kafka // nil without the projector and market-data roles
	projector *projection.Projector
	hub       *ws.Hub
	tail      *tail.Tail

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// openNode connects to env's engine (if configured) and opens its journal read-only for
// the projector and market-data roles. start catches up and runs the loops.
func openNode(ctx context.Context, cfg config, env api.Environment, pool *pgxpool.Pool, log *slog.Logger) (*node, error) {
	rs := cfg.Cluster.Roles
	n := &node{env: env, log: log.With("env", string(env))}
	if addr, ok := cfg.Cluster.EngineAddr[string(env)]; ok {
		tlsCfg, err := cfg.Cluster.clientTLS()
		if err != nil {
			return nil, err
		}
		c, err := enginerpc.Dial(addr, enginerpc.Options{TLS: tlsCfg})
		if err != nil {
			return nil, err
		}
		n.client = c
	}
	if !rs.has(roleProjector) && !rs.has(roleMarketData) {
		return n, nil
	}
	opts, err := cfg.Kafka.options(cfg.KafkaBrokers, cfg.KafkaTopic+"-"+string(env))
	if err != nil {
		n.close()
		return nil, err
	}
	opts.ReadOnly = true
	j, err := journal.OpenKafka(ctx, opts)
	if err != nil {
		n.close()
		return nil, fmt.Errorf("%s journal (kafka, read-only): %w", env, err)
	}
	n.journal = j
	if rs.has(roleProjector) {
		n.projector = projection.New(pool, string(env), j, n.log)
	}
	if rs.has(roleMarketData) {
		if n.client == nil {
			n.close()
			return nil, fmt.Errorf("the market-data role needs -engine-addr for %s (books start from the engine's depth)", env)
		}
		n.hub = ws.NewHub(ws.HubConfig{Env: env, Exchange: n.client, Log: n.log})
	}
	return n, nil
}

// start catches the projector up, seeds the hub from the engine and starts following the
// journal from the engine's offset read before the seed (batches the seed already holds
// are skipped by sequence), then runs the loops.
func (n *node) start(ctx context.Context, pool *pgxpool.Pool) error {
	if n.projector != nil {
		// A position past the journal's end was projected from another journal (another
		// --journal or topic on this database): its rows are not this journal's history.
		if err := projectionFits(ctx, pool, string(n.env), n.journal.LastOffset()); err != nil {
			return err
		}
		if err := n.projector.CatchUp(ctx); err != nil {
			return err
		}
	}
	if n.journal == nil {
		return nil
	}
	var from uint64
	if n.hub != nil {
		if err := n.client.Ping(ctx); err != nil {
			return fmt.Errorf("%s market data: engine at %s: %w", n.env, n.client.Addr(), err)
		}
		from = n.client.OffsetContext(ctx)
		if err := n.hub.Seed(ctx, market.NewStore(pool)); err != nil {
			return err
		}
	}
	cfg := tail.Config{Journal: n.journal, From: from, Log: n.log}
	if n.projector != nil {
		cfg.OnAdvance = func(uint64) { n.projector.Wake() }
	}
	if n.hub != nil {
		cfg.OnBatch = func(b []engine.Event, _ uint64) { n.hub.Publish(b) }
	}
	t, err := tail.New(cfg)
	if err != nil {
		return err
	}
	n.tail = t
	rctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		_ = t.Run(rctx)
	}()
	if n.projector != nil {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			_ = n.projector.Run(rctx)
		}()
	}
	if n.hub != nil {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.hub.Run(rctx)
		}()
	}
	return nil
}

func (n *node) ready(ctx context.Context) error {
	if n.client != nil {
		if err := n.client.Ping(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) close() {
	if n.cancel != nil {
		n.cancel()
	}
	n.wg.Wait()
	if n.journal != nil {
		_ = n.journal.Close()
	}
	if n.client != nil {
		_ = n.client.Close()
	}
}

// newRemoteTrading is the trading subsystem of a process without the engine role: each
// environment's engine is a client of the engine process; the order routes (gateway role)
// read history once the projector node has passed the engine's offset; the market data
// (marketdata role) comes from the journal.
func newRemoteTrading(ctx context.Context, cfg config, pool *pgxpool.Pool, auth ws.Authenticator, demo uuid.UUID, log *slog.Logger, stdout io.Writer) (*tradingSubsystem, error) {
	cp := &clusterParts{nodes: map[api.Environment]*node{}}
	t := &tradingSubsystem{exchanges: exchanges{}, cluster: cp}
	for _, env := range []api.Environment{api.Sandbox, api.Live} {
		n, err := openNode(ctx, cfg, env, pool, log)
		if err == nil {
			cp.nodes[env] = n
			err = n.start(ctx, pool)
		}
		if err != nil {
			cp.close()
			return nil, err
		}
	}
	if demo != uuid.Nil {
		if err := fundDemoVia(t.engines()[api.Sandbox], demo, stdout); err != nil {
			cp.close()
			return nil, err
		}
	}
	if cfg.Cluster.Roles.has(roleGateway) {
		engines := map[api.Environment]trading.Exchange{}
		waits := map[api.Environment]*projection.Position{}
		for env, e := range t.engines() {
			engines[env] = e
			waits[env] = projection.NewPosition(pool, string(env))
		}
		t.orders = trading.New(engines, remoteHistory{Projections: trading.Projections{Store: projection.NewStore(pool)}, positions: waits}, nil)
	}
	if cfg.Cluster.Roles.has(roleMarketData) {
		sources := map[api.Environment]market.Source{}
		hubs := map[api.Environment]*ws.Hub{}
		for env, n := range cp.nodes {
			sources[env], hubs[env] = n.hub, n.hub
		}
		t.market = market.New(sources, market.NewStore(pool), nil)
		t.ws = ws.NewServer(ws.Config{Hubs: hubs, Auth: auth, Log: log})
		if err := t.ws.Start(); err != nil {
			cp.close()
			return nil, fmt.Errorf("websocket endpoint: %w", err)
		}
	}
	return t, nil
}

// remoteHistory is the order history of a gateway without the projector: the same
// PostgreSQL read model, waited for through the projector's committed offset.
type remoteHistory struct {
	trading.Projections
	positions map[api.Environment]*projection.Position
}

// WaitFor waits until the projector node has committed offset.
func (h remoteHistory) WaitFor(ctx context.Context, env api.Environment, offset uint64) error {
	p := h.positions[env]
	if p == nil {
		return fmt.Errorf("no projection position for %s", env)
	}
	return p.WaitFor(ctx, offset)
}

// fundDemoVia credits the demo merchant's sandbox account once (fixed transfer ids)
// through any engine, local or remote.
func fundDemoVia(ex engineAPI, merchantID uuid.UUID, stdout io.Writer) error {
	if ex == nil {
		return errors.New("demo funding: no sandbox engine")
	}
	for _, f := range demoFunds {
		asset, _ := engine.ParseAsset(f.asset)
		amount, err := engine.ParseAmount(asset, f.amount)
		if err != nil {
			return err
		}
		transfer := uuid.NewSHA1(uuid.NameSpaceOID, []byte("svc demo funding "+merchantID.String()+" "+f.asset))
		res, err := ex.Submit(&engine.Command{Kind: engine.CmdCredit, Account: engine.AccountID(merchantID),
			Asset: asset, Amount: amount, TransferID: engine.TransferID(transfer), Time: time.Now().UnixNano()})
		if err != nil {
			return fmt.Errorf("demo funding: %w", err)
		}
		if res.Code != engine.OK && res.Code != engine.AlreadyApplied {
			return fmt.Errorf("demo funding %s: %s", f.asset, res.Code)
		}
	}
	fmt.Fprintf(stdout, "trading:  sandbox balances funded once with 100,000,000 NGN and 50,000 each of USDT, USDC, USD\n\n")
	return nil
}
