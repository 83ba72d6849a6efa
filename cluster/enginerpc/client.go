package enginerpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	grpcstatus "google.golang.org/grpc/status"

	"svc/engine"
)

// Transport errors. All match engine.ErrUnavailable (errors.Is), so callers that map the
// engine's errors answer 503 for them without knowing this package; ErrTimeout also
// matches context.DeadlineExceeded, so a caller can tell "no answer by the deadline" (a
// slow engine or journal, or a network that stopped delivering) from "not accepting
// commands".
var (
	// ErrNotConnected: the engine could not be reached; the call was not sent.
	ErrNotConnected = &transportError{msg: "enginerpc: engine not reachable"}
	// ErrOutcomeUnknown: the call was sent but no answer came back in time (the engine
	// died, the connection broke, the deadline passed). A command may have run: retry it
	// with the same client order id or transfer id, which the engine deduplicates.
	ErrOutcomeUnknown = &transportError{msg: "enginerpc: no answer from the engine (the command may have run)"}
	// ErrTimeout: the call's deadline (the caller's context, or the Options timeout)
	// passed before the engine answered. It is an ErrOutcomeUnknown too: a command may
	// have run, and a retry with the same client order id or transfer id is safe.
	ErrTimeout = &transportError{msg: "enginerpc: the engine did not answer within the deadline (a command may have run)", timeout: true}
)

type transportError struct {
	msg     string
	timeout bool
}

func (e *transportError) Error() string { return e.msg }

// Is makes transport errors match engine.ErrUnavailable, and ErrTimeout match
// ErrOutcomeUnknown and context.DeadlineExceeded.
func (e *transportError) Is(target error) bool {
	return target == engine.ErrUnavailable || e.timeout && (target == ErrOutcomeUnknown || target == context.DeadlineExceeded)
}

// Options configure a Client.
type Options struct {
	// SubmitTimeout bounds a command's round trip, journal commit included. Default 5 s.
	SubmitTimeout time.Duration
	// ReadTimeout bounds every other call. Default 2 s.
	ReadTimeout time.Duration
	// Keepalive is the ping interval on an idle connection, so a silently dead engine is
	// noticed. Default 10 s.
	Keepalive time.Duration
	// TLS, if set, dials with TLS (the server's ServerOptions.TLS); otherwise plaintext,
	// for loopback and private networks only.
	TLS *tls.Config
}

func (o *Options) defaults() {
	if o.SubmitTimeout <= 0 {
		o.SubmitTimeout = 5 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 2 * time.Second
	}
	if o.Keepalive <= 0 {
		o.Keepalive = 10 * time.Second
	}
}

// Client is a remote engine. It satisfies the gateway's trading.Exchange and the payments
// services' rates.Exchange and balance.Exchange; it is safe for concurrent use.
type Client struct {
	addr   string
	opts   Options
	conn   *grpc.ClientConn
	failed atomic.Bool   // the engine said it has fail-stopped (in its last answer)
	asked  atomic.Int64  // unix nanoseconds of Err's last refresh of failed
	seen   atomic.Uint64 // the highest acknowledged offset any answer carried

	mu    sync.Mutex
	pairs []engine.PairConfig // fetched once: pairs are configuration
}

// Dial returns a client of the engine at addr (host:port; or several separated by "|":
// the leader's and its standbys', tried in order, of which only the engine holding the
// lease listens). It does not wait for the engine: the connection is made on first use
// and remade by itself after a failure (backoff from 100 ms to 1 s), and calls while it is
// down fail at once.
func Dial(addr string, opts Options) (*Client, error) {
	opts.defaults()
	var addrs []resolver.Address
	for _, a := range strings.Split(addr, "|") {
		if a = strings.TrimSpace(a); a != "" {
			// The certificate is checked against the host of each address (operator
			// configuration, so trusted).
			host, _, err := net.SplitHostPort(a)
			if err != nil {
				return nil, fmt.Errorf("enginerpc: engine address %q: %w", a, err)
			}
			addrs = append(addrs, resolver.Address{Addr: a, ServerName: host})
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("enginerpc: no engine address")
	}
	// A resolver of this client's own (never registered globally) hands gRPC every address;
	// pick_first connects to the first that answers and moves on when it fails.
	res := manual.NewBuilderWithScheme("svc-engine")
	res.InitialState(resolver.State{Addresses: addrs})
	creds := insecure.NewCredentials()
	if opts.TLS != nil {
		creds = credentials.NewTLS(opts.TLS)
	}
	conn, err := grpc.NewClient("svc-engine:///engine",
		grpc.WithResolvers(res),
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: opts.Keepalive, Timeout: opts.Keepalive / 2, PermitWithoutStream: true}),
	)
	if err != nil {
		return nil, fmt.Errorf("enginerpc: %s: %w", addr, err)
	}
	conn.Connect()
	return &Client{addr: addr, opts: opts, conn: conn}, nil
}

// Addr is the engine's address.
func (c *Client) Addr() string { return c.addr }

// Close closes the connection; calls after it fail.
func (c *Client) Close() error { return c.conn.Close() }

// call invokes method with a deadline and notes the engine's fail-stop flag.
func (c *Client) call(ctx context.Context, timeout time.Duration, method string, req message, rep interface {
	message
	status() *status
}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.conn.Invoke(ctx, "/"+serviceName+"/"+method, req, rep); err != nil {
		return transport(err)
	}
	st := rep.status()
	c.failed.Store(st.failed)
	for {
		cur := c.seen.Load()
		if st.offset <= cur || c.seen.CompareAndSwap(cur, st.offset) {
			break
		}
	}
	return nil
}

// transport classifies a gRPC error: Unavailable before an answer means the engine could
// not be reached (or the connection broke); a passed deadline is ErrTimeout; anything else
// (cancel, reset) leaves the outcome unknown.
func transport(err error) error {
	st, _ := grpcstatus.FromError(err)
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("%w: %s", ErrNotConnected, st.Message())
	case codes.DeadlineExceeded:
		return fmt.Errorf("%w: %s", ErrTimeout, st.Message())
	case codes.Canceled:
		if errors.Is(err, context.Canceled) {
			return err
		}
	}
	return fmt.Errorf("%w: %s", ErrOutcomeUnknown, st.Message())
}

func (m *submitReply) status() *status   { return &m.st }
func (m *orderReply) status() *status    { return &m.st }
func (m *balancesReply) status() *status { return &m.st }
func (m *pairsReply) status() *status    { return &m.st }
func (m *statusReply) status() *status   { return &m.st }
func (m *depthReply) status() *status    { return &m.st }

// Submit runs cmd on the engine and returns its result once the engine answered, which
// is after the command's batch was journaled. Errors: engine.ErrBusy, ErrUnavailable and
// ErrStopped from the engine; ErrNotConnected or ErrOutcomeUnknown (both
// engine.ErrUnavailable) from the transport.
func (c *Client) Submit(cmd *engine.Command) (engine.Result, error) {
	return c.SubmitContext(context.Background(), cmd)
}

// SubmitContext is Submit with a context (Options.SubmitTimeout still bounds it). Note
// that a sent command may run even if ctx ends first (ErrOutcomeUnknown).
func (c *Client) SubmitContext(ctx context.Context, cmd *engine.Command) (engine.Result, error) {
	if st := c.conn.GetState(); st == connectivity.TransientFailure || st == connectivity.Shutdown {
		return engine.Result{}, ErrNotConnected // nothing sent
	}
	req := commandMsg{c: *cmd}
	var rep submitReply
	if err := c.call(ctx, c.opts.SubmitTimeout, mSubmit, &req, &rep); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
			return engine.Result{}, err // ErrTimeout already says the command may have run
		}
		// Once sent, a broken connection or a passed deadline cannot tell whether the
		// engine ran the command (gRPC's transparent retry covers only calls that never
		// reached the server).
		return engine.Result{}, fmt.Errorf("%w (%v)", ErrOutcomeUnknown, err)
	}
	return rep.res, rep.st.err()
}

// Order returns an account's order as the engine holds it. An unreachable engine reads
// as "not held" (and Err reports it, which the trading handlers check first); OrderContext
// says so instead.
func (c *Client) Order(acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool) {
	v, ok, _ := c.OrderContext(context.Background(), acct, id)
	return v, ok
}

// OrderContext is Order bounded by ctx as well (ErrTimeout once it passes) that returns
// the transport's error instead of "not held", so a request never waits ReadTimeout past
// its deadline nor reads a slow engine as a forgotten order.
func (c *Client) OrderContext(ctx context.Context, acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool, error) {
	var rep orderReply
	if err := c.call(ctx, c.opts.ReadTimeout, mOrder, &orderReq{acct: acct, id: id}, &rep); err != nil {
		return engine.OrderView{}, false, err
	}
	return rep.view, rep.ok, nil
}

// OrderByClientID returns an account's order by client order id.
func (c *Client) OrderByClientID(acct engine.AccountID, clientID string) (engine.OrderView, bool) {
	v, ok, _ := c.OrderByClientIDContext(context.Background(), acct, clientID)
	return v, ok
}

// OrderByClientIDContext is OrderByClientID bounded by ctx as well, with the transport's
// error (as OrderContext).
func (c *Client) OrderByClientIDContext(ctx context.Context, acct engine.AccountID, clientID string) (engine.OrderView, bool, error) {
	var rep orderReply
	if err := c.call(ctx, c.opts.ReadTimeout, mOrder, &orderReq{acct: acct, byClient: true, clientID: clientID}, &rep); err != nil {
		return engine.OrderView{}, false, err
	}
	return rep.view, rep.ok, nil
}

// Balances returns an account's balances. BalancesContext says when the engine could not
// be asked; Balances then returns zeros (Err reports the engine unavailable).
func (c *Client) Balances(acct engine.AccountID) engine.Balances {
	b, _ := c.BalancesContext(context.Background(), acct)
	return b
}

// BalancesContext returns an account's balances or a transport error.
func (c *Client) BalancesContext(ctx context.Context, acct engine.AccountID) (engine.Balances, error) {
	var rep balancesReply
	if err := c.call(ctx, c.opts.ReadTimeout, mBalances, &accountReq{acct: acct}, &rep); err != nil {
		return engine.Balances{}, err
	}
	return rep.bal, nil
}

// Pairs returns the engine's pairs, fetched on first use and kept (they are
// configuration, fixed for the engine's life); nil while the engine has never answered.
func (c *Client) Pairs() []engine.PairConfig {
	ps, _ := c.loadPairs(context.Background())
	return ps
}

func (c *Client) loadPairs(ctx context.Context) ([]engine.PairConfig, error) {
	c.mu.Lock()
	ps := c.pairs
	c.mu.Unlock()
	if ps != nil {
		return ps, nil
	}
	// The call runs without the lock: while the engine is away, each caller waits at most
	// its own ReadTimeout instead of queueing behind every other caller's.
	var rep pairsReply
	if err := c.call(ctx, c.opts.ReadTimeout, mPairs, &empty{}, &rep); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pairs == nil {
		c.pairs = rep.pairs
	}
	return c.pairs, nil
}

// Pair returns symbol's configuration.
func (c *Client) Pair(symbol string) (engine.PairConfig, bool) {
	for _, p := range c.Pairs() {
		if p.Symbol == symbol {
			return p, true
		}
	}
	return engine.PairConfig{}, false
}

// Offset is the engine's highest acknowledged journal offset, asked now. If the engine
// cannot be reached it is the highest offset any earlier answer carried, so a history read
// still waits for everything this client has seen acknowledged.
func (c *Client) Offset() uint64 { return c.OffsetContext(context.Background()) }

// OffsetContext is Offset bounded by ctx as well: once ctx ends it stops asking and
// returns the highest offset seen, so a history read's settle waits no longer than its
// request allows.
func (c *Client) OffsetContext(ctx context.Context) uint64 {
	var rep statusReply
	if err := c.call(ctx, c.opts.ReadTimeout, mStatus, &empty{}, &rep); err != nil {
		return c.seen.Load()
	}
	return rep.st.offset
}

// Depth returns up to n levels per side of symbol's book.
func (c *Client) Depth(symbol string, n int) (engine.Depth, error) {
	return c.DepthContext(context.Background(), symbol, n)
}

// DepthContext is Depth bounded by ctx as well (ErrTimeout once it passes).
func (c *Client) DepthContext(ctx context.Context, symbol string, n int) (engine.Depth, error) {
	var rep depthReply
	if err := c.call(ctx, c.opts.ReadTimeout, mDepth, &depthReq{symbol: symbol, n: n}, &rep); err != nil {
		return engine.Depth{}, err
	}
	return rep.d, rep.st.err()
}

// Err is nil while the engine can be served from: reachable (the connection is not
// failing) and not fail-stopped. Otherwise it is engine.ErrUnavailable or a transport
// error matching it, which the trading handlers answer with 503 ENGINE_UNAVAILABLE before
// reading anything. It makes no call when the connection is up and pairs are known; when
// it must ask, Options.ReadTimeout bounds the call (ErrContext: the caller's deadline too).
func (c *Client) Err() error { return c.ErrContext(context.Background()) }

// ErrContext is Err bounded by ctx as well: a request asks with its own deadline, so an
// engine (or a network) that stopped answering costs the request ErrTimeout by then, not
// ReadTimeout past it.
func (c *Client) ErrContext(ctx context.Context) error {
	switch c.conn.GetState() {
	case connectivity.TransientFailure, connectivity.Shutdown:
		return ErrNotConnected
	}
	if _, err := c.loadPairs(ctx); err != nil {
		return err
	}
	if c.failed.Load() {
		// The flag is the last answer's, perhaps from an engine that has since been replaced
		// (its successor took the lease and the connection moved to it): callers that check
		// Err first never call again, so ask now, at most every refreshFailed (issue 29: the
		// gateways answered 503 for good after a failover, until something probed /ready).
		now := time.Now().UnixNano()
		last := c.asked.Load()
		if now-last >= int64(refreshFailed) && c.asked.CompareAndSwap(last, now) {
			var rep statusReply
			if err := c.call(ctx, c.opts.ReadTimeout, mStatus, &empty{}, &rep); err != nil {
				return err
			}
		}
		if c.failed.Load() {
			return engine.ErrUnavailable
		}
	}
	return nil
}

// refreshFailed is how often Err asks a fail-stopped engine again.
const refreshFailed = 200 * time.Millisecond

// Ping asks the engine for its status now: nil if it answered and has not fail-stopped.
func (c *Client) Ping(ctx context.Context) error {
	var rep statusReply
	if err := c.call(ctx, c.opts.ReadTimeout, mStatus, &empty{}, &rep); err != nil {
		return err
	}
	if rep.st.failed {
		return engine.ErrUnavailable
	}
	return nil
}
