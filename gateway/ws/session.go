package ws

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"svc/gateway/api"
)

// Cancel-on-disconnect: {"op":"session.cancel_on_disconnect","params":{"enabled":true,
// "symbols":["USDT-NGN"],"timeout_ms":5000}}. While enabled, when the connection closes
// for any reason (close frame, socket error or reset, the server's shutdown, the idle
// timeout) the open orders this connection placed (only those on symbols, when given)
// are cancelled in the engine with cancel_reason DISCONNECT, durably (the cancels are
// journaled like any other). timeout_ms (1000 to the server's idle timeout, default the
// idle timeout) closes the connection when nothing at all arrived from the client for
// that long: a client that enables it sends pings (frames or {"op":"ping"}) more often.
//
// The gateway cancels those orders itself; should the gateway process die, it cannot. So
// while cancel-on-disconnect is on, the session also holds a lease in the engine: a
// countdown owned by the session on its symbols (all symbols when none were given),
// renewed every LeaseFor/3 and cleared when the session ends or turns it off. A lease
// that runs out (its gateway died) cancels all the account's open orders on those symbols:
// the engine does not know which session placed an order, so it errs on the side of
// cancelling. The countdown is journaled, so an engine restart keeps it.

// LeaseFor is how long after its last renewal a dead gateway's session lease cancels.
const LeaseFor = 30 * time.Second

// lease is a session's renewal loop.
type lease struct {
	stop  chan struct{}
	done  chan struct{}
	clear func() // submits the clear, detached (after the loop left the lease to run out)
	// last is the loop's latest call to the engine, written by the loop only (read by clear
	// once the loop is done). A call waits for the one before it: the engine keeps the
	// countdown command that arrives last, so a clear overtaking a renewal still on its way
	// would be undone by it, and the lease would cancel the orders LeaseFor later.
	last *engineCall

	mu     sync.Mutex
	lapsed bool // the loop ended without clearing (the server closed first)
}

// startLease renews the engine lease of a session every LeaseFor/3 until stop, then
// clears it. Each call waits for the engine within cancelWithin (the engine's Submit takes
// no context): one it did not answer goes on detached and is logged, the renewals after it
// are skipped until it answers (the engine has one queued already), and the clear is
// submitted regardless, so neither a stalled journal nor a silent remote engine holds the
// loop, or the server's Close behind it.
func (s *Server) startLease(p api.Principal, syms []string) *lease {
	oe := s.entry.Load()
	if oe == nil || oe.Lease == nil {
		return nil
	}
	within := cancelWithin(oe)
	l := &lease{stop: make(chan struct{}), done: make(chan struct{})}
	id := uuid.New()
	l.clear = func() {
		go func() {
			<-l.done
			if l.last != nil {
				<-l.last.done
			}
			if err := oe.Lease(p, id, syms, 0); err != nil {
				s.cfg.Log.Warn("cancel-on-disconnect lease clear (late)", "merchant_id", p.MerchantID, "error", err)
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(l.done)
		t := time.NewTicker(LeaseFor / 3)
		defer t.Stop()
		call := func(d time.Duration, what string) {
			prev := l.last
			l.last = goEngineCall(func() error {
				if prev != nil {
					<-prev.done // only a clear can follow an unfinished call: after it, in order
				}
				return oe.Lease(p, id, syms, d)
			})
			if ok, err := l.last.wait(within); !ok {
				s.cfg.Log.Warn(what+": the engine did not answer in time; it may still apply it", "merchant_id", p.MerchantID, "within", within)
			} else if err != nil {
				s.cfg.Log.Warn(what, "merchant_id", p.MerchantID, "error", err)
			}
		}
		for {
			if l.last == nil || l.last.finished() {
				call(LeaseFor, "cancel-on-disconnect lease")
			}
			select {
			case <-l.stop:
				call(0, "cancel-on-disconnect lease clear")
				return
			case <-s.stop:
				// The server is closing: it ended the session first, whose cancels end
				// the lease once the engine confirms them (cancelOnDisconnect). Should
				// they not be confirmed in time, the renewals stop (Close does not wait
				// for them) and the lease is left to run out, so the engine cancels the
				// orders even if those cancels never land; if they do land, end clears
				// it then.
				select {
				case <-l.stop:
					call(0, "cancel-on-disconnect lease clear")
					return
				case <-time.After(within):
				}
				l.mu.Lock()
				select {
				case <-l.stop: // ended meanwhile
					l.mu.Unlock()
					call(0, "cancel-on-disconnect lease clear")
					return
				default:
				}
				l.lapsed = true
				l.mu.Unlock()
				s.cfg.Log.Warn("cancel-on-disconnect lease: the server closed before the session's cancels were confirmed; left to run out unless they are",
					"merchant_id", p.MerchantID, "runs_out_within", LeaseFor)
				return
			case <-t.C:
			}
		}
	}()
	return l
}

// cancelWithin is how long the session waits for one of the engine's answers (CancelWithin).
func cancelWithin(oe *OrderEntry) time.Duration {
	if oe.CancelWithin > 0 {
		return oe.CancelWithin
	}
	return api.DefaultRequestTimeout
}

// engineCall is a call to the engine running beside its caller, who waits for it within a
// bound (wait) and, past it, leaves it to finish detached, its outcome reported by then.
type engineCall struct {
	done chan struct{}
	err  error // set before done closes

	mu   sync.Mutex
	late func(error) // then's, run by the call's own goroutine once f returns
}

func goEngineCall(f func() error) *engineCall {
	c := &engineCall{done: make(chan struct{})}
	go func() {
		err := f()
		c.mu.Lock()
		c.err = err
		close(c.done)
		late := c.late
		c.mu.Unlock()
		if late != nil {
			late(err)
		}
	}()
	return c
}

// then runs f with the call's error once it returned: at once if it has, else in the
// call's own goroutine when it does, so an abandoned wait needs no goroutine of its own to
// report the late outcome (once per call).
func (c *engineCall) then(f func(error)) {
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		f(c.err)
		return
	default:
	}
	c.late = f
	c.mu.Unlock()
}

// wait answers true and the call's error once it returned, or false after d.
func (c *engineCall) wait(d time.Duration) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true, c.err
	case <-t.C:
		return false, nil
	}
}

func (c *engineCall) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// end stops the loop, which clears the lease, or clears it itself if the loop already
// ended without (nil-safe).
func (l *lease) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	close(l.stop)
	lapsed := l.lapsed
	l.mu.Unlock()
	if lapsed {
		l.clear()
	}
}

type codParams struct {
	Enabled   *bool    `json:"enabled"`
	Symbols   []string `json:"symbols"`
	TimeoutMS *int64   `json:"timeout_ms"`
}

// setCancelOnDisconnect handles the op (under c.rmu) and returns its answer.
func (s *Server) setCancelOnDisconnect(c *conn, r request) []byte {
	const op = "session.cancel_on_disconnect"
	var p codParams
	if len(r.Params) > 0 {
		if err := json.Unmarshal(r.Params, &p); err != nil {
			return opError(op, r.ID, 400, api.CodeInvalidJSON, "params: "+err.Error(), nil)
		}
	}
	var v api.Validator
	if p.Enabled == nil {
		v.Add("enabled", "is required")
	}
	var syms map[string]bool
	for _, sym := range p.Symbols {
		if c.hub == nil || c.hub.bySymbol[sym] == nil {
			v.Add("symbols", "unknown symbol "+sym)
			continue
		}
		if syms == nil {
			syms = map[string]bool{}
		}
		syms[sym] = true
	}
	idle := int64(s.cfg.IdleTimeout)
	if p.TimeoutMS != nil {
		d := time.Duration(*p.TimeoutMS) * time.Millisecond
		if d < time.Second || d > s.cfg.IdleTimeout {
			v.Add("timeout_ms", "must be between 1000 and "+strconv.FormatInt(s.cfg.IdleTimeout.Milliseconds(), 10))
		}
		idle = int64(d)
	}
	if err := v.Err(); err != nil {
		ae := api.From(err)
		return opError(op, r.ID, 400, ae.Code, ae.Detail, ae.Fields)
	}
	list := make([]string, 0, len(syms))
	for sym := range syms {
		list = append(list, sym)
	}
	sort.Strings(list)
	var l *lease
	if *p.Enabled {
		l = s.startLease(c.principal, list)
	}
	se := &c.sess
	se.mu.Lock()
	se.cod, se.codSyms, se.codIdle = *p.Enabled, syms, 0
	if se.cod && idle < int64(s.cfg.IdleTimeout) {
		se.codIdle = idle
	}
	old := se.lease
	se.lease = l
	se.mu.Unlock()
	old.end()
	data, _ := json.Marshal(struct {
		Enabled   bool     `json:"enabled"`
		Symbols   []string `json:"symbols"`
		TimeoutMS int64    `json:"timeout_ms"`
	}{*p.Enabled, list, time.Duration(idle).Milliseconds()})
	b := append([]byte(`{"type":"result","op":"`+op+`"`), ',')
	if len(r.ID) > 0 {
		b = append(append(append(b, `"id":`...), r.ID...), ',')
	}
	b = append(b, `"status":200,"data":`...)
	return append(append(b, data...), '}')
}

// codSilent reports whether c enabled cancel-on-disconnect with a timeout shorter than
// the idle timeout and has been silent past it (janitor).
func (c *conn) codSilent(now int64) bool {
	se := &c.sess
	se.mu.Lock()
	idle := se.codIdle
	se.mu.Unlock()
	return idle > 0 && now-c.lastRead.Load() > idle
}

// cancelLate cancels an order placed by a session with cancel-on-disconnect whose answer
// came after the connection closed (it was waiting for the journal then): the session's
// cancels had already gone out without it.
func (s *Server) cancelLate(c *conn, id uuid.UUID) {
	oe := s.entry.Load()
	if oe == nil || oe.CancelOrders == nil {
		return
	}
	c.rmu.Lock()
	p := c.principal
	c.rmu.Unlock()
	within := cancelWithin(oe)
	ids := []uuid.UUID{id}
	var n int
	call := goEngineCall(func() (err error) { n, err = oe.CancelOrders(p, ids); return err })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ok, err := call.wait(within)
		if !ok { // as cancelOnDisconnect's: not done, not reported so; logged when it answers
			s.cfg.Log.Warn("cancel-on-disconnect (an order answered after the close): the engine did not confirm the cancel in time; it may still complete",
				"merchant_id", p.MerchantID, "environment", p.Environment, "within", within, "order_ids", ids)
			call.then(func(err error) {
				if err != nil {
					s.cfg.Log.Error("cancel-on-disconnect (an order answered after the close)", "merchant_id", p.MerchantID, "environment", p.Environment, "order_ids", ids, "late", true, "error", err)
				}
			})
			return
		}
		if err != nil {
			s.cfg.Log.Error("cancel-on-disconnect (an order answered after the close)", "merchant_id", p.MerchantID, "environment", p.Environment, "order_id", id, "cancelled", n, "error", err)
		}
	}()
}

// cancelOnDisconnect cancels, off the caller's goroutine, the orders a closed session
// placed when it asked for it (shutdown calls it once per connection).
func (s *Server) cancelOnDisconnect(c *conn) {
	se := &c.sess
	se.mu.Lock()
	l := se.lease
	se.lease = nil
	se.gone, se.goneCod, se.goneSyms = true, se.cod, se.codSyms
	if !se.cod {
		se.mu.Unlock()
		l.end()
		return
	}
	ids := make([]uuid.UUID, 0, len(se.placed))
	for id, sym := range se.placed {
		if se.codSyms == nil || se.codSyms[sym] {
			ids = append(ids, id)
		}
	}
	se.placed, se.cod = nil, false
	se.mu.Unlock()
	c.rmu.Lock()
	p := c.principal
	c.rmu.Unlock()
	oe := s.entry.Load()
	if oe == nil || oe.CancelOrders == nil || len(ids) == 0 {
		l.end()
		return
	}
	within := cancelWithin(oe)
	// The engine's Submit takes no context, so a stalled journal or a silent remote
	// engine would hold CancelOrders, and with it this cleanup (which Close waits for),
	// for ever. The cleanup waits within; CancelOrders runs beside it and keeps going.
	var n int
	call := goEngineCall(func() (err error) { n, err = oe.CancelOrders(p, ids); return err })
	report := func(late bool) { // once call is done
		l.end() // the session's own cancels are durable: the engine's stand-in can go
		if call.err != nil {
			s.cfg.Log.Error("cancel-on-disconnect", "merchant_id", p.MerchantID, "environment", p.Environment, "orders", len(ids), "cancelled", n, "late", late, "order_ids", ids, "error", call.err)
			return
		}
		s.cfg.Log.Info("cancel-on-disconnect", "merchant_id", p.MerchantID, "environment", p.Environment, "orders", len(ids), "cancelled", n, "late", late)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if ok, _ := call.wait(within); ok {
			report(false)
			return
		}
		// Not done, and not reported so: the cancels may still complete in the engine
		// (they are queued there). The lease stays armed and renewed until they answer,
		// so should this gateway die first, the engine's countdown cancels them anyway;
		// their outcome is logged then (late=true), with the ids if they failed.
		s.cfg.Log.Warn("cancel-on-disconnect: the engine did not confirm the cancels in time; they may still complete",
			"merchant_id", p.MerchantID, "environment", p.Environment, "within", within, "orders", len(ids), "order_ids", ids)
		call.then(func(error) { report(true) })
	}()
}
