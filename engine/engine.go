package engine

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// Errors that mean a command did not run. Business outcomes are ResultCodes instead.
var (
	ErrBusy        = errors.New("engine: busy")        // the symbol's ring is full; nothing was queued
	ErrUnavailable = errors.New("engine: unavailable") // a journal append failed; the engine is fail-stopped
	ErrStopped     = errors.New("engine: stopped")     // the engine is not running
	ErrRunning     = errors.New("engine: running")     // Apply and Restore need an engine that is not started
)

// Config configures an Engine.
type Config struct {
	Pairs []PairConfig // the symbols; DefaultPairs() if empty
	// RingSize is the capacity of each symbol's command ring, rounded up to a power of
	// two. Default 65536.
	RingSize int
	// MaxBatch bounds the commands a runner runs per journal append. Default 1024.
	MaxBatch int
	// ClosedOrders is how many closed (FILLED or CANCELLED) orders each symbol keeps for
	// Order and cancel answers before forgetting the oldest. Default 4096: enough for a
	// caller to read an order right after its command is answered (at 100,000 closed
	// orders/s on a symbol that leaves about 40 ms); older closed orders come from the
	// projection. Each retained order costs a cold eviction later, so bigger is slower.
	ClosedOrders int
	// Journal receives every batch of events before any of its commands is answered.
	// Required.
	Journal Journal
}

// defaultClosedOrders is Config.ClosedOrders when unset.
const defaultClosedOrders = 1 << 12

const (
	stateNew int32 = iota
	stateRunning
	stateStopped
)

// Engine is the exchange core: trading accounts, one order book and runner goroutine per
// symbol, and one runner for credits and debits.
type Engine struct {
	cfg     Config
	core    *core
	journal Journal
	ordered OrderedJournal // journal, if it implements OrderedJournal
	runners []*runner      // one per market, then the funds runner
	byMkt   map[*market]*runner
	funds   *runner
	routes  []route // symbol -> runner, read by producers

	state    atomic.Int32
	stopping atomic.Bool
	failed   atomic.Bool
	offset   atomic.Uint64 // highest journal offset acknowledged
	wg       sync.WaitGroup
	stopOnce sync.Once

	waiters sync.Pool
	barrier sync.Mutex

	early cmdCounters // commands answered before reaching a runner (stats.go)
}

type route struct {
	symbol string
	rn     *runner
}

// New builds an Engine from cfg. It starts no goroutines.
func New(cfg Config) (*Engine, error) {
	if cfg.Journal == nil {
		return nil, errors.New("engine: Config.Journal is required")
	}
	if len(cfg.Pairs) == 0 {
		cfg.Pairs = DefaultPairs()
	}
	if cfg.RingSize <= 0 {
		cfg.RingSize = 1 << 16
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 1024
	}
	if cfg.ClosedOrders <= 0 {
		cfg.ClosedOrders = defaultClosedOrders
	}
	c, err := newCore(cfg.Pairs, cfg.ClosedOrders)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, core: c, journal: cfg.Journal, byMkt: make(map[*market]*runner)}
	e.ordered, _ = cfg.Journal.(OrderedJournal)
	seqs := newSeqStates(len(c.markets) + 1)
	for i, m := range c.markets {
		rn := newRunner(e, m, seqs[i], cfg.RingSize, cfg.MaxBatch)
		e.runners = append(e.runners, rn)
		e.byMkt[m] = rn
		e.routes = append(e.routes, route{symbol: m.symbol, rn: rn})
	}
	e.funds = newRunner(e, c.funds, seqs[len(c.markets)], cfg.RingSize, cfg.MaxBatch)
	e.runners = append(e.runners, e.funds)
	e.waiters.New = func() any { return NewWaiter() }
	return e, nil
}

// Start starts one runner per symbol and one for credits and debits; each runner is a
// goroutine plus its completion goroutine.
func (e *Engine) Start() error {
	if !e.state.CompareAndSwap(stateNew, stateRunning) {
		return ErrStopped
	}
	for _, rn := range e.runners {
		e.wg.Add(1)
		go rn.run(&e.wg)
	}
	return nil
}

// Stop refuses new commands, lets the runners finish what is queued and complete every
// batch in flight, and waits for their goroutines to exit. It is safe to call more than once.
func (e *Engine) Stop() {
	e.stopOnce.Do(func() {
		prev := e.state.Swap(stateStopped)
		for _, rn := range e.runners {
			rn.ring.close()
		}
		e.stopping.Store(true)
		if prev != stateRunning {
			return
		}
		for _, rn := range e.runners {
			rn.kick()
		}
		e.wg.Wait()
	})
}

func (e *Engine) refusal() error {
	if e.failed.Load() {
		return ErrUnavailable
	}
	if e.state.Load() != stateRunning {
		return ErrStopped
	}
	return nil
}

func (e *Engine) fail() { e.failed.Store(true) }

// Failed reports whether the engine has fail-stopped after a journal error.
func (e *Engine) Failed() bool { return e.failed.Load() }

// Err is nil while the engine's state may be served, and ErrUnavailable once it has
// fail-stopped: its in-memory state then holds effects the journal may not have (a
// restart from snapshot + journal removes them), so a caller must not serve the read
// views (Order, OrderByClientID, OpenOrders, Balances) after a non-nil Err; Depth,
// BestBidAsk and commands already answer ErrUnavailable. The gateway maps it to 503
// ENGINE_UNAVAILABLE.
func (e *Engine) Err() error {
	if e.failed.Load() {
		return ErrUnavailable
	}
	return nil
}

func (e *Engine) noteOffset(off uint64) {
	for {
		cur := e.offset.Load()
		if off <= cur || e.offset.CompareAndSwap(cur, off) {
			return
		}
	}
}

// route picks the runner of a command, or answers it at once with code.
func (e *Engine) route(cmd *Command) (*runner, ResultCode) {
	switch cmd.Kind {
	case CmdCredit, CmdDebit:
		return e.funds, OK
	case CmdPlace, CmdCancelAll, CmdCountdown, CmdTick:
		if rn := e.bySymbol(cmd.Symbol); rn != nil {
			return rn, OK
		}
		return nil, RejectUnknownSymbol
	case CmdCancel, CmdAmend:
		if cmd.Symbol != "" {
			if rn := e.bySymbol(cmd.Symbol); rn != nil {
				return rn, OK
			}
			return nil, RejectUnknownSymbol
		}
		m := e.core.marketOf(cmd.Account, cmd.OrderID)
		if m == nil {
			return nil, RejectUnknownOrder
		}
		return e.byMkt[m], OK
	}
	return nil, RejectInvalidCommand
}

// bySymbol finds a symbol's runner in e.routes, which never changes after New: reading
// the market itself from a producer would share cache lines the runner writes.
func (e *Engine) bySymbol(symbol string) *runner {
	for i := range e.routes {
		if e.routes[i].symbol == symbol {
			return e.routes[i].rn
		}
	}
	return nil
}

// SubmitAsync queues cmd and returns at once; done.Complete is called with the result
// after the batch holding cmd has been journaled. It returns ErrBusy if the symbol's
// ring is full, ErrUnavailable or ErrStopped if the engine does not take commands; then
// done is never called. A command rejected before queueing (unknown symbol or order)
// is completed at once, on the caller's goroutine. A CmdCancel with a zero OrderID and a
// ClientOrderID cancels the account's order with that client order id (Result.OrderID
// says which; RejectUnknownOrder if the engine holds none).
func (e *Engine) SubmitAsync(cmd *Command, done Completer) error {
	if (cmd.Kind == CmdCancel || cmd.Kind == CmdAmend) && cmd.OrderID == (OrderID{}) && cmd.ClientOrderID != "" {
		// Cancel by client order id: the order it names now. The cancel itself then
		// goes by order id, so a client id reused after this lookup cannot redirect it.
		id, ok := e.core.orderIDByClientID(cmd.Account, cmd.ClientOrderID)
		if !ok {
			if err := e.refusal(); err != nil {
				return err
			}
			e.early.add(cmd.Kind, RejectUnknownOrder)
			done.Complete(Result{Code: RejectUnknownOrder}, nil)
			return nil
		}
		c := *cmd
		c.OrderID = id
		cmd = &c
	}
	rn, code := e.route(cmd)
	if rn == nil {
		if err := e.refusal(); err != nil {
			return err
		}
		e.early.add(cmd.Kind, code)
		done.Complete(Result{Code: code, OrderID: cmd.OrderID}, nil)
		return nil
	}
	return rn.submit(cmd, done)
}

// Submit queues cmd and waits for its result, which arrives only after the events of
// its batch were accepted by the journal.
func (e *Engine) Submit(cmd *Command) (Result, error) {
	w := e.waiters.Get().(*Waiter)
	if err := e.SubmitAsync(cmd, w); err != nil {
		e.waiters.Put(w)
		return Result{}, err
	}
	r, err := w.Wait()
	e.waiters.Put(w)
	return r, err
}

// Waiter is a reusable Completer for one caller at a time: submit with it, then Wait.
type Waiter struct {
	res Result
	err error
	ch  chan struct{}
}

// NewWaiter returns a Waiter.
func NewWaiter() *Waiter { return &Waiter{ch: make(chan struct{}, 1)} }

// Complete stores the result and wakes Wait.
func (w *Waiter) Complete(r Result, err error) {
	w.res, w.err = r, err
	w.ch <- struct{}{}
}

// Wait blocks until Complete was called and returns what it got.
func (w *Waiter) Wait() (Result, error) {
	<-w.ch
	return w.res, w.err
}

// Depth is the top of one symbol's book.
type Depth struct {
	Symbol string
	Seq    uint64  // the symbol's event sequence the depth corresponds to
	Bids   []Level // best (highest) first
	Asks   []Level // best (lowest) first
}

// Depth returns up to n levels per side of symbol, read by its runner between commands.
func (e *Engine) Depth(symbol string, n int) (Depth, error) {
	rn, code := e.route(&Command{Kind: CmdPlace, Symbol: symbol})
	if code != OK {
		return Depth{}, errors.New("engine: unknown symbol " + symbol)
	}
	q := &query{n: n, bids: make([]Level, 0, n), asks: make([]Level, 0, n)}
	w := e.waiters.Get().(*Waiter)
	defer e.waiters.Put(w)
	if err := rn.submit(&Command{Kind: cmdQueryDepth, query: q}, w); err != nil {
		return Depth{}, err
	}
	if _, err := w.Wait(); err != nil {
		return Depth{}, err
	}
	return Depth{Symbol: symbol, Seq: q.seq, Bids: q.bids, Asks: q.asks}, nil
}

// BestBidAsk returns the best bid and ask of symbol (ok false for an empty side).
func (e *Engine) BestBidAsk(symbol string) (bid, ask Level, bidOK, askOK bool, err error) {
	d, err := e.Depth(symbol, 1)
	if err != nil {
		return
	}
	if len(d.Bids) > 0 {
		bid, bidOK = d.Bids[0], true
	}
	if len(d.Asks) > 0 {
		ask, askOK = d.Asks[0], true
	}
	return
}

// Balances returns a copy of an account's balances (all zero for an unknown account).
func (e *Engine) Balances(acct AccountID) Balances {
	a := e.core.accts.get(acct)
	if a == nil {
		return Balances{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bal
}

// Order returns an account's order by id: open ones, and closed ones the engine still
// remembers (the last Config.ClosedOrders per symbol). Visible as soon as the place
// command was answered.
func (e *Engine) Order(acct AccountID, id OrderID) (OrderView, bool) {
	a := e.core.accts.get(acct)
	if a == nil {
		return OrderView{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.orders.get(&id)
	if o == nil {
		return OrderView{}, false
	}
	return o.view(), true
}

// OpenOrders appends the account's OPEN and PARTIALLY_FILLED orders on symbol (all
// symbols if "") to dst, oldest first.
func (e *Engine) OpenOrders(acct AccountID, symbol string, dst []OrderView) []OrderView {
	a := e.core.accts.get(acct)
	if a == nil {
		return dst
	}
	start := len(dst)
	a.mu.Lock()
	for o := range a.orders.all {
		if !o.state.Closed() && (symbol == "" || o.mkt.symbol == symbol) {
			dst = append(dst, o.view())
		}
	}
	a.mu.Unlock()
	slices.SortFunc(dst[start:], func(x, y OrderView) int {
		if x.Time != y.Time {
			if x.Time < y.Time {
				return -1
			}
			return 1
		}
		return compareIDs(x.ID, y.ID)
	})
	return dst
}

// Pair returns the configuration of symbol.
func (e *Engine) Pair(symbol string) (PairConfig, bool) {
	m := e.core.bySymbol[symbol]
	if m == nil {
		return PairConfig{}, false
	}
	return m.pair.PairConfig, true
}

// Pairs returns every pair's configuration in Config order.
func (e *Engine) Pairs() []PairConfig {
	out := make([]PairConfig, len(e.core.markets))
	for i, m := range e.core.markets {
		out[i] = m.pair.PairConfig
	}
	return out
}

// Apply replays journaled events onto an engine that is not started (after New and
// Restore): it applies their effects to books and accounts without matching. Events
// at or below a stream's sequence are skipped; a gap is an error (ErrSequenceGap).
// Each stream's events are applied in order, the streams at once (replay.go); after an
// error the engine's state is undefined and it must be dropped.
func (e *Engine) Apply(events []Event) error {
	if e.state.Load() != stateNew {
		return ErrRunning
	}
	return e.core.applyAll(events)
}

// Replayed records that the engine's state now holds every journal offset up to offset
// (after Restore and Apply of the journal's tail), so the next snapshot is labelled right.
// Like Apply, it is only for an engine that is not started.
func (e *Engine) Replayed(offset uint64) error {
	if e.state.Load() != stateNew {
		return ErrRunning
	}
	if offset > e.offset.Load() {
		e.offset.Store(offset)
	}
	return nil
}

// Offset returns the highest journal offset the engine has seen acknowledged (or restored).
func (e *Engine) Offset() uint64 { return e.offset.Load() }
