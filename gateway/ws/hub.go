package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"svc/engine"
	"svc/engine/marketdata"
	"svc/gateway/api"
	"svc/persistence/projection"
)

// Exchange is what the hub needs of one environment's engine (*engine.Engine has it).
type Exchange interface {
	Depth(symbol string, n int) (engine.Depth, error)
	Pairs() []engine.PairConfig
}

// depthContext is an Exchange whose Depth takes a context (a remote engine's client,
// cluster/enginerpc.Client): the hub's context bounds the call, so a stop does not wait
// for an engine that stopped answering.
type depthContext interface {
	DepthContext(ctx context.Context, symbol string, n int) (engine.Depth, error)
}

// CandleStore loads persisted candles, built from the projected trades.
type CandleStore interface {
	// LastCandles returns the newest limit candles of symbol for interval Intervals[iv],
	// oldest first.
	LastCandles(ctx context.Context, env api.Environment, symbol string, iv, limit int) ([]marketdata.Candle, error)
}

// HubConfig configures one environment's hub.
type HubConfig struct {
	Env      api.Environment
	Exchange Exchange
	Log      *slog.Logger
	// Queue is how many durable batches may wait between the engine's runners and the
	// hub goroutine (default 8192). When it is full, a batch is dropped and its symbol
	// resynchronised from the engine rather than blocking a runner.
	Queue int
	// FlushEvery is the most often a symbol's book diff, trades and klines are published
	// (default 20 ms): changes within it are merged into one message per channel.
	FlushEvery time.Duration
	// TickerEvery is how often ticker channels are published, if changed (default 1 s).
	TickerEvery time.Duration
	Now         func() time.Time
}

// Hub keeps the market data of one environment from the engine's durable events and fans
// it out to WebSocket subscribers. The engine's runners call Publish (never blocking);
// one goroutine (Run) applies the events, encodes each channel's message once and queues
// it on every subscriber's connection. The REST market routes read the same replicas.
type Hub struct {
	cfg  HubConfig
	log  *slog.Logger
	in   chan *batch
	ctl  chan func()
	done chan struct{} // closed when Run returns

	mu       sync.RWMutex // guards markets for readers other than the hub goroutine
	symbols  []*symbolState
	bySymbol map[string]*symbolState

	private map[engine.AccountID]*privateSubs // hub goroutine only

	dropped   atomic.Uint64 // batches dropped because the queue was full
	resyncs   atomic.Uint64
	needSync  atomic.Bool
	sched     []*conn       // scratch of fanout (hub goroutine)
	conflated atomic.Uint64 // diffs not sent to lagging subscribers (written by the hub goroutine)
	lastFlush time.Time
	flushDue  bool
	slowAt    time.Time // when the earliest slow book feed is due (zero: none pending)
	batches   sync.Pool
}

type batch struct{ events []engine.Event }

type symbolState struct {
	idx    int
	pair   engine.PairConfig
	m      *marketdata.Market
	resync atomic.Bool

	pending []marketdata.Trade

	feeds          [len(bookIntervals)]bookFeed // orderbook channels, one per update interval (feeds.go)
	trades, ticker subSet
	klines         [marketdata.NumIntervals]subSet
	chTrades       string
	chTicker       string
	chKlines       [marketdata.NumIntervals]string

	klineOpen  [marketdata.NumIntervals]int64 // open time of the last kline sent per interval
	lastTicker marketdata.Ticker
	tickerSent bool

	bids, asks []marketdata.Level // scratch
}

// NewHub returns a hub over the exchange's pairs; call Seed, then run Run.
func NewHub(cfg HubConfig) *Hub {
	if cfg.Queue <= 0 {
		cfg.Queue = 8192
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 20 * time.Millisecond
	}
	if cfg.TickerEvery <= 0 {
		cfg.TickerEvery = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{cfg: cfg, log: cfg.Log, in: make(chan *batch, cfg.Queue), ctl: make(chan func(), 256), done: make(chan struct{}),
		bySymbol: map[string]*symbolState{}, private: map[engine.AccountID]*privateSubs{}}
	h.batches.New = func() any { return &batch{} }
	for i, p := range cfg.Exchange.Pairs() {
		s := &symbolState{idx: i, pair: p, m: marketdata.NewMarket(p),
			chTrades: "trades:" + p.Symbol, chTicker: "ticker:" + p.Symbol}
		for k, bi := range bookIntervals {
			s.feeds[k] = bookFeed{s: s, every: bi.every, ch: "orderbook:" + p.Symbol + bi.suffix}
		}
		for k, iv := range marketdata.Intervals {
			s.chKlines[k] = "klines:" + p.Symbol + ":" + iv.Name
		}
		h.symbols = append(h.symbols, s)
		h.bySymbol[p.Symbol] = s
	}
	return h
}

// Env is the hub's environment.
func (h *Hub) Env() api.Environment { return h.cfg.Env }

// Seed loads every book from the engine and the recent candles from store (nil: none).
// Call it after Publish is wired to the journal and before Run; events that arrive in the
// meantime wait in the queue and those the depth already holds are skipped.
func (h *Hub) Seed(ctx context.Context, store CandleStore) error {
	for _, s := range h.symbols {
		if err := h.resetBook(ctx, s); err != nil {
			return err
		}
		if store == nil {
			continue
		}
		var upTo uint64
		for iv := range marketdata.Intervals {
			cs, err := store.LastCandles(ctx, h.cfg.Env, s.pair.Symbol, iv, marketdata.MaxCandles)
			if err != nil {
				return fmt.Errorf("market data %s %s: %w", h.cfg.Env, s.pair.Symbol, err)
			}
			for _, c := range cs {
				upTo = max(upTo, c.LastSeq)
			}
			s.m.SeedCandles(iv, cs, len(cs) < marketdata.MaxCandles, upTo)
		}
	}
	return nil
}

// resetBook loads s's whole book from the engine (growing the depth asked for until
// both sides fit).
func (h *Hub) resetBook(ctx context.Context, s *symbolState) error {
	n := 1024
	for {
		var d engine.Depth
		var err error
		if x, ok := h.cfg.Exchange.(depthContext); ok {
			d, err = x.DepthContext(ctx, s.pair.Symbol, n)
		} else {
			d, err = h.cfg.Exchange.Depth(s.pair.Symbol, n)
		}
		if err != nil {
			return fmt.Errorf("market data: depth of %s: %w", s.pair.Symbol, err)
		}
		if len(d.Bids) < n && len(d.Asks) < n {
			h.mu.Lock()
			s.m.Book.Reset(d)
			h.mu.Unlock()
			for k := range s.feeds {
				s.feeds[k].reset(d.Seq)
			}
			return nil
		}
		n *= 8
	}
}

// Publish hands a durable batch to the hub (svcd's eventlog.OnDurable). It copies the
// events, never blocks and never keeps batch. If the queue is full the batch is dropped
// and its symbol is marked for a resync from the engine.
func (h *Hub) Publish(events []engine.Event) {
	if len(events) == 0 {
		return
	}
	b := h.batches.Get().(*batch)
	b.events = append(b.events[:0], events...)
	select {
	case h.in <- b:
	default:
		h.batches.Put(b)
		h.dropped.Add(1)
		if s := h.bySymbol[events[0].Symbol]; s != nil {
			s.resync.Store(true)
			h.needSync.Store(true)
		}
	}
}

// Conflated is how many order-book diffs (and superseded snapshots) lagging subscribers
// did not get: a later snapshot took their place.
func (h *Hub) Conflated() uint64 { return h.conflated.Load() }

// Resyncs is how many times the hub rebuilt its books from the engine after dropping
// batches.
func (h *Hub) Resyncs() uint64 { return h.resyncs.Load() }

// Dropped is the number of batches dropped because the hub's queue was full.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Run is the hub's goroutine: it returns when ctx is done, after closing every
// connection it serves.
func (h *Hub) Run(ctx context.Context) {
	defer close(h.done)
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	slow := time.NewTimer(time.Hour) // the earliest slow book feed (feeds.go)
	slow.Stop()
	var slowSet time.Time
	armSlow := func() {
		if !h.slowAt.IsZero() && !h.slowAt.Equal(slowSet) {
			slowSet = h.slowAt
			slow.Reset(max(h.slowAt.Sub(h.cfg.Now()), 0))
		}
	}
	tick := time.NewTicker(h.cfg.TickerEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			h.closeAll()
			return
		case b := <-h.in:
			h.apply(b)
			for n := 0; n < 256; n++ { // take what is already queued before deciding to flush
				select {
				case b = <-h.in:
					h.apply(b)
					continue
				default:
				}
				break
			}
			if h.needSync.Load() {
				h.resyncAll(ctx)
			}
			if !h.flushDue {
				if wait := h.cfg.FlushEvery - h.cfg.Now().Sub(h.lastFlush); wait > 0 {
					h.flushDue = true
					flush.Reset(wait)
				} else {
					h.flush()
				}
			}
			armSlow()
		case <-flush.C:
			h.flush()
			armSlow()
		case <-slow.C:
			slowSet = time.Time{}
			if h.flushDue && h.cfg.Now().Sub(h.lastFlush) >= h.cfg.FlushEvery {
				h.flush() // the flush is due anyway: the slow feeds get its changes too
			} else {
				h.publishSlow()
			}
			armSlow()
		case f := <-h.ctl:
			f()
			armSlow()
		case <-tick.C:
			if h.needSync.Load() {
				h.resyncAll(ctx)
			}
			h.publishTickers()
			h.evictPrivate()
			// A subscriber marked stale by the last batch before trading went quiet is
			// refreshed here once its queue has drained, not at the next trade of its symbol
			// (not inside a diff window: the flush due for it refreshes it then).
			for _, s := range h.symbols {
				if s.m.Book.Changed() {
					continue
				}
				for k := range s.feeds {
					h.refreshStale(&s.feeds[k])
				}
			}
		}
	}
}

// do runs f on the hub goroutine (dropped once the hub has stopped).
func (h *Hub) do(f func()) {
	select {
	case h.ctl <- f:
	case <-h.done:
	}
}

func (h *Hub) apply(b *batch) {
	h.mu.Lock()
	for i := range b.events {
		e := &b.events[i]
		if e.Symbol != "" {
			if s := h.bySymbol[e.Symbol]; s != nil {
				// while a resync is pending the book refuses events (a gap) but the
				// candles still take the trades
				tr, isTrade, err := s.m.Apply(e)
				if err != nil && !s.resync.Load() {
					h.log.Warn("market data gap, resynchronising", "env", h.cfg.Env, "symbol", e.Symbol, "error", err)
					s.resync.Store(true)
					h.needSync.Store(true)
				}
				if isTrade && s.trades.len() > 0 {
					s.pending = append(s.pending, tr)
				}
			}
		}
	}
	h.mu.Unlock()
	if len(h.private) > 0 {
		for i := range b.events {
			h.privateEvent(&b.events[i])
		}
	}
	b.events = b.events[:0]
	h.batches.Put(b)
}

// resyncAll reloads the books marked for resync and sends their subscribers a snapshot.
func (h *Hub) resyncAll(ctx context.Context) {
	h.needSync.Store(false)
	for _, s := range h.symbols {
		if !s.resync.Load() {
			continue
		}
		s.resync.Store(false)
		h.flushSymbol(s) // what was applied before the loss still goes out in order
		if err := h.resetBook(ctx, s); err != nil {
			h.log.Error("market data resync failed", "env", h.cfg.Env, "symbol", s.pair.Symbol, "error", err)
			s.resync.Store(true)
			h.needSync.Store(true)
			continue
		}
		h.resyncs.Add(1)
		for k := range s.feeds {
			if f := &s.feeds[k]; f.subs.len() > 0 {
				clear(f.stale)
				h.fanout(&f.subs, h.snapshot(f), nil)
			}
		}
	}
}

func (h *Hub) flush() {
	h.flushDue = false
	h.lastFlush = h.cfg.Now()
	for _, s := range h.symbols {
		h.flushSymbol(s)
	}
}

func (h *Hub) flushSymbol(s *symbolState) {
	h.mu.Lock()
	book := s.m.Book
	seq := book.Seq()
	var bids, asks []marketdata.Level
	changed := book.Changed()
	if changed {
		s.bids, s.asks = book.TakeChanges(s.bids[:0], s.asks[:0])
		bids, asks = s.bids, s.asks
	}
	dirty := s.m.TakeDirtyCandles()
	h.mu.Unlock()
	f0 := &s.feeds[0]
	// A diff goes out whenever the sequence moved, with no levels when its events left
	// every level as it was (an IOC limit that crossed nothing, a market order that met an
	// empty side): otherwise subscribers would stay behind the REST book's sequence until
	// the next change of a level, however quiet the market.
	if seq > f0.pub && f0.subs.len() > 0 {
		msg := appendBook(make([]byte, 0, 128+24*(len(bids)+len(asks))), f0.ch, &s.pair, f0.pub+1, seq, bids, asks, book.Time()/1e6)
		f0.pub = seq
		h.broadcastBook(f0, msg)
	} else if f0.subs.len() == 0 {
		f0.pub = seq
	}
	h.flushFeeds(s, bids, asks, seq)
	for k := range s.feeds {
		h.refreshStale(&s.feeds[k])
	}
	if len(s.pending) > 0 {
		if s.trades.len() > 0 {
			env := string(h.cfg.Env)
			msg := appendTrades(make([]byte, 0, 64+160*len(s.pending)), s.chTrades, env, &s.pair, s.pending,
				func(env, symbol string, seq uint64, ns int64) []byte {
					id := projection.TradeID(env, symbol, seq, ns)
					var b [36]byte
					return append(b[:0], id.String()...)
				})
			h.broadcast(&s.trades, msg)
		}
		s.pending = s.pending[:0]
	}
	for iv := range marketdata.Intervals {
		if dirty&(1<<iv) == 0 || s.klines[iv].len() == 0 {
			continue
		}
		c, ok := s.m.Series(iv).Last()
		if !ok {
			continue
		}
		s.klineOpen[iv] = c.OpenTime
		h.broadcast(&s.klines[iv], appendKlineMsg(nil, s.chKlines[iv], &s.pair, marketdata.Intervals[iv], &c))
	}
}

// broadcast frames msg once and queues it on every connection of set.
func (h *Hub) broadcast(set *subSet, msg []byte) { h.fanout(set, textFrame(msg), nil) }

// broadcastBook queues a diff on fd's subscribers; a lagging one gets none (it is marked
// stale and gets a snapshot when it has caught up): diffs are conflated for it.
func (h *Hub) broadcastBook(fd *bookFeed, msg []byte) {
	f := textFrame(msg)
	f.book = fd
	h.fanout(&fd.subs, f, fd)
}

// fanout queues f on the connections of set (book: the feed whose diff f is) and hands
// those that were idle to their writers in one go.
func (h *Hub) fanout(set *subSet, f *frame, book *bookFeed) {
	if f == nil {
		return
	}
	sched := h.sched[:0]
	stale := book != nil && len(book.stale) > 0
	var snap func() *frame
	if book != nil {
		snap = func() *frame { return h.snapshot(book) }
	}
	for _, c := range set.conns {
		if stale {
			if _, ok := book.stale[c]; ok {
				continue
			}
		}
		sched1, lagging, dropped := c.pushBook(f, snap)
		if dropped > 0 {
			h.conflated.Add(uint64(dropped))
		}
		if lagging {
			if book.stale == nil {
				book.stale = map[*conn]struct{}{}
			}
			book.stale[c] = struct{}{}
			h.conflated.Add(1)
			continue
		}
		if sched1 {
			sched = append(sched, c)
		}
	}
	h.schedule(sched)
	clear(sched)
	h.sched = sched[:0]
}

// schedule hands connections to their server's writers, one call per server.
func (h *Hub) schedule(cs []*conn) {
	for len(cs) > 0 {
		srv, n := cs[0].srv, 0
		for _, c := range cs {
			if c.srv == srv {
				cs[n] = c
				n++
			}
		}
		if n == len(cs) {
			srv.writers.schedule(cs...)
			return
		}
		// rare: several servers share the hub
		rest := cs[:0]
		for _, c := range cs {
			if c.srv == srv {
				srv.writers.schedule(c)
			} else {
				rest = append(rest, c)
			}
		}
		cs = rest
	}
}

// refreshStale sends a snapshot to the stale subscribers of s that have caught up.
func (h *Hub) refreshStale(s *bookFeed) {
	if len(s.stale) == 0 {
		return
	}
	var f *frame
	sched := h.sched[:0]
	for c := range s.stale {
		if c.lagging() {
			continue
		}
		delete(s.stale, c)
		if f == nil {
			f = h.snapshot(s)
		}
		if c.push(f) {
			sched = append(sched, c)
		}
	}
	h.schedule(sched)
	clear(sched)
	h.sched = sched[:0]
}

func (h *Hub) unmarkStale(c *conn, set *subSet) {
	if f := h.feedOf(set); f != nil {
		delete(f.stale, c)
	}
}

// snapshot returns the book snapshot message of feed fd at its book's current sequence,
// encoded once per sequence however many subscribe.
func (h *Hub) snapshot(fd *bookFeed) *frame {
	s := fd.s
	seq := s.m.Book.Seq()
	if fd.snap != nil && fd.snapSeq == seq {
		return fd.snap
	}
	bids, asks := s.m.Book.Depth(0, nil, nil)
	ms := s.m.Book.Time() / 1e6
	if ms == 0 {
		ms = h.cfg.Now().UnixMilli()
	}
	msg := appendBook(make([]byte, 0, 128+24*(len(bids)+len(asks))), fd.ch, &s.pair, 0, seq, bids, asks, ms)
	fd.snap, fd.snapSeq = textFrame(msg), seq
	fd.snap.book = fd
	return fd.snap
}

// currentCandle is the candle of interval iv at nowMs: the newest one if it is still
// open, else a flat one at its close (no trades yet in this interval).
func currentCandle(s *symbolState, iv int, nowMs int64) (marketdata.Candle, bool) {
	c, ok := s.m.Series(iv).Last()
	if !ok {
		return c, false
	}
	if open := marketdata.Intervals[iv].Open(nowMs); c.OpenTime < open {
		return marketdata.Flat(open, c.Close), true
	}
	return c, true
}

// publishFlatKlines sends, when an interval begins without a trade, its flat candle (at
// the previous close, zero volume): klines subscribers see every interval.
func (h *Hub) publishFlatKlines(now int64) {
	for _, s := range h.symbols {
		for iv := range marketdata.Intervals {
			if s.klines[iv].len() == 0 {
				continue
			}
			c, ok := currentCandle(s, iv, now)
			if !ok || c.OpenTime <= s.klineOpen[iv] {
				continue
			}
			s.klineOpen[iv] = c.OpenTime
			h.broadcast(&s.klines[iv], appendKlineMsg(nil, s.chKlines[iv], &s.pair, marketdata.Intervals[iv], &c))
		}
	}
}

func (h *Hub) publishTickers() {
	now := h.cfg.Now().UnixMilli()
	h.publishFlatKlines(now)
	for _, s := range h.symbols {
		if s.ticker.len() == 0 {
			continue
		}
		t := s.m.Ticker(now)
		if s.tickerSent && t == s.lastTicker {
			continue
		}
		s.lastTicker, s.tickerSent = t, true
		h.broadcast(&s.ticker, appendTickerMsg(nil, s.chTicker, &s.pair, t, now))
	}
}

// channel is a parsed channel name.
type channel struct {
	name    string
	kind    byte // 'b' orderbook, 't' trades, 'k' ticker, 'c' klines, 'o' orders, 'B' balances
	sym     *symbolState
	iv      int // klines: the candle interval; orderbook: the update interval (bookIntervals)
	private bool
}

var errUnknownChannel = errors.New("unknown channel")

func (h *Hub) parseChannel(name string) (channel, error) {
	switch name {
	case "orders":
		return channel{name: name, kind: 'o', private: true}, nil
	case "balances":
		return channel{name: name, kind: 'B', private: true}, nil
	case "trades": // the account's own fills (private.go); trades:SYMBOL is the public tape
		return channel{name: name, kind: 'T', private: true}, nil
	}
	kind, rest, ok := cut(name)
	if !ok {
		return channel{}, errUnknownChannel
	}
	ch := channel{name: name}
	sym := rest
	switch kind {
	case "orderbook":
		ch.kind = 'b'
		if i := strings.IndexByte(rest, '@'); i >= 0 {
			sym = rest[:i]
			if ch.iv = bookInterval(rest[i:]); ch.iv < 0 {
				return channel{}, errors.New("unknown update interval " + rest[i:] + ": orderbook channels take @100ms or @1000ms (none: every 20 ms)")
			}
		}
	case "trades":
		ch.kind = 't'
	case "ticker":
		ch.kind = 'k'
	case "klines":
		ch.kind = 'c'
		var iv string
		if sym, iv, ok = cut(rest); !ok {
			return channel{}, errors.New("klines channels are klines:SYMBOL:INTERVAL")
		}
		if ch.iv, ok = marketdata.ParseInterval(iv); !ok {
			return channel{}, errors.New("unknown interval " + iv)
		}
	default:
		return channel{}, errUnknownChannel
	}
	if ch.sym = h.bySymbol[sym]; ch.sym == nil {
		return channel{}, errors.New("unknown symbol " + sym)
	}
	return ch, nil
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (h *Hub) set(c *conn, ch channel) *subSet {
	switch ch.kind {
	case 'b':
		return &ch.sym.feeds[ch.iv].subs
	case 't':
		return &ch.sym.trades
	case 'k':
		return &ch.sym.ticker
	case 'c':
		return &ch.sym.klines[ch.iv]
	}
	ps := h.account(engine.AccountID(c.principal.MerchantID))
	ps.idleSince = time.Time{}
	switch ch.kind {
	case 'o':
		return &ps.orders
	case 'T':
		return &ps.trades
	}
	return &ps.balances
}

// subscribe runs on the hub goroutine: it adds c to the channels, acknowledges, and sends
// each channel's initial state (the book snapshot, the current ticker and candle).
func (h *Hub) subscribe(c *conn, chs []channel, ack []byte) {
	for _, ch := range chs {
		if ch.kind == 'b' && ch.sym.m.Book.Changed() {
			// A snapshot taken inside a diff window would miss the levels that change
			// back before the window closes: publish the window first.
			h.flushSymbol(ch.sym)
		}
	}
	for _, ch := range chs {
		if ch.kind == 'b' && ch.iv > 0 && ch.sym.feeds[ch.iv].subs.len() == 0 {
			ch.sym.feeds[ch.iv].reset(ch.sym.m.Book.Seq()) // its diffs start here
		}
		h.set(c, ch).add(c)
	}
	c.sendBytes(ack)
	now := h.cfg.Now().UnixMilli()
	for _, ch := range chs {
		s := ch.sym
		switch ch.kind {
		case 'b':
			fd := &s.feeds[ch.iv]
			delete(fd.stale, c)
			c.send(h.snapshot(fd))
		case 'k':
			c.sendBytes(appendTickerMsg(nil, s.chTicker, &s.pair, s.m.Ticker(now), now))
		case 'c':
			if cd, ok := currentCandle(s, ch.iv, now); ok {
				c.sendBytes(appendKlineMsg(nil, ch.name, &s.pair, marketdata.Intervals[ch.iv], &cd))
			}
		}
	}
}

func (h *Hub) unsubscribe(c *conn, chs []channel, ack []byte) {
	for _, ch := range chs {
		set := h.set(c, ch)
		set.remove(c)
		if ch.kind == 'b' {
			h.unmarkStale(c, set)
		}
	}
	h.prunePrivate(c)
	if ack != nil {
		c.sendBytes(ack)
	}
}

// closeAll closes every connection subscribed to anything (shutdown).
func (h *Hub) closeAll() {
	seen := map[*conn]bool{}
	visit := func(c *conn) {
		if !seen[c] {
			seen[c] = true
			c.fail(CloseGoingAway, "server shutting down")
		}
	}
	for _, s := range h.symbols {
		for k := range s.feeds {
			s.feeds[k].subs.each(visit)
		}
		s.trades.each(visit)
		s.ticker.each(visit)
		for i := range s.klines {
			s.klines[i].each(visit)
		}
	}
	for _, ps := range h.private {
		ps.orders.each(visit)
		ps.balances.each(visit)
		ps.trades.each(visit)
	}
}

type orderMsg struct {
	Type       string    `json:"type"`
	Channel    string    `json:"channel"`
	Data       orderData `json:"data"`
	Timestamp  int64     `json:"timestamp"`
	AccountSeq uint64    `json:"account_seq"` // the account's private sequence (private.go)
}

type orderData struct {
	Event         string  `json:"event"` // ORDER_ACCEPTED, TRADE, ORDER_AMENDED, ORDER_CANCELLED, ORDER_DONE
	OrderID       string  `json:"order_id"`
	ClientOrderID string  `json:"client_order_id,omitempty"`
	Symbol        string  `json:"symbol"`
	Side          string  `json:"side"`
	Type          string  `json:"type,omitempty"`
	TimeInForce   string  `json:"time_in_force,omitempty"`
	Price         *string `json:"price"`
	Quantity      string  `json:"quantity"`
	Liquidity     string  `json:"liquidity,omitempty"`
	Reason        string  `json:"reason,omitempty"`
	Sequence      uint64  `json:"sequence"`
	// Metadata is the order's, on ORDER_ACCEPTED (like client_order_id); absent for none.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type balanceMsg struct {
	Type       string      `json:"type"`
	Channel    string      `json:"channel"`
	Data       balanceData `json:"data"`
	Timestamp  int64       `json:"timestamp"`
	AccountSeq uint64      `json:"account_seq"` // the account's private sequence (private.go)
}

type balanceData struct {
	Asset          string `json:"asset"`
	AvailableDelta string `json:"available_delta"`
	LockedDelta    string `json:"locked_delta"`
	Cause          string `json:"cause"`
	Symbol         string `json:"symbol,omitempty"`
	Sequence       uint64 `json:"sequence"`
}

// subSet is a set of connections that iterates fast (a slice) and removes in O(1).
type subSet struct {
	conns []*conn
	idx   map[*conn]int
}

func (s *subSet) len() int { return len(s.conns) }

func (s *subSet) add(c *conn) bool {
	if s.idx == nil {
		s.idx = map[*conn]int{}
	}
	if _, ok := s.idx[c]; ok {
		return false
	}
	s.idx[c] = len(s.conns)
	s.conns = append(s.conns, c)
	return true
}

func (s *subSet) remove(c *conn) {
	i, ok := s.idx[c]
	if !ok {
		return
	}
	last := len(s.conns) - 1
	s.conns[i] = s.conns[last]
	s.idx[s.conns[i]] = i
	s.conns[last] = nil
	s.conns = s.conns[:last]
	delete(s.idx, c)
}

func (s *subSet) each(f func(*conn)) {
	for _, c := range s.conns {
		f(c)
	}
}

// Pairs are the hub's symbols in engine order.
func (h *Hub) Pairs() []engine.PairConfig {
	out := make([]engine.PairConfig, len(h.symbols))
	for i, s := range h.symbols {
		out[i] = s.pair
	}
	return out
}

// OrderBook returns up to depth levels per side of symbol's replica and the stream
// sequence they correspond to (the same sequence numbers as the orderbook channel).
func (h *Hub) OrderBook(symbol string, depth int) (seq uint64, bids, asks []marketdata.Level, ok bool) {
	s := h.bySymbol[symbol]
	if s == nil {
		return 0, nil, nil, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	bids, asks = s.m.Book.Depth(depth, make([]marketdata.Level, 0, min(depth, 64)), make([]marketdata.Level, 0, min(depth, 64)))
	return s.m.Book.Seq(), bids, asks, true
}

// Ticker returns symbol's rolling 24-hour ticker at nowMs.
func (h *Hub) Ticker(symbol string, nowMs int64) (marketdata.Ticker, bool) {
	s := h.bySymbol[symbol]
	if s == nil {
		return marketdata.Ticker{}, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.m.Ticker(nowMs), true
}

// Candles returns symbol's candles of interval iv from memory (see Series.Range for
// start, end and limit; -1 for none). complete is false when older candles than memory
// holds may belong to the answer: the caller then asks the persisted trades.
func (h *Hub) Candles(symbol string, iv int, start, end int64, limit int) (cs []marketdata.Candle, complete, ok bool) {
	s := h.bySymbol[symbol]
	if s == nil {
		return nil, false, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	se := s.m.Series(iv)
	cs = se.Range(start, end, limit, nil)
	if start >= 0 {
		return cs, se.Complete(start), true
	}
	return cs, len(cs) == limit || se.Complete(math.MinInt64), true
}
