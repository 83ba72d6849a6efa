package ws

import (
	"encoding/json"
	"sort"
	"strconv"
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
	se := &c.sess
	se.mu.Lock()
	se.cod, se.codSyms, se.codIdle = *p.Enabled, syms, 0
	if se.cod && idle < int64(s.cfg.IdleTimeout) {
		se.codIdle = idle
	}
	se.mu.Unlock()
	list := make([]string, 0, len(syms))
	for sym := range syms {
		list = append(list, sym)
	}
	sort.Strings(list)
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

// cancelOnDisconnect cancels, off the caller's goroutine, the orders a closed session
// placed when it asked for it (shutdown calls it once per connection).
func (s *Server) cancelOnDisconnect(c *conn) {
	se := &c.sess
	se.mu.Lock()
	if !se.cod || len(se.placed) == 0 {
		se.mu.Unlock()
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
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		n, err := oe.CancelOrders(p, ids)
		if err != nil {
			s.cfg.Log.Error("cancel-on-disconnect", "merchant_id", p.MerchantID, "environment", p.Environment, "orders", len(ids), "cancelled", n, "error", err)
			return
		}
		s.cfg.Log.Info("cancel-on-disconnect", "merchant_id", p.MerchantID, "environment", p.Environment, "orders", len(ids), "cancelled", n)
	}()
}
