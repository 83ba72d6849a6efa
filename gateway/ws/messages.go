package ws

import (
	"encoding/json"
	"strconv"

	"svc/gateway/api"
)

func (c *conn) message(op byte, data []byte) {
	if op != opText {
		c.sendJSON(errorMsg{Type: "error", Code: "INVALID_MESSAGE", Message: "messages are JSON text frames"})
		return
	}
	if c.authing {
		c.held = append(c.held, append([]byte(nil), data...))
		return
	}
	if c.info.ipKey != "" && c.principal.MerchantID == [16]byte{} {
		if d := c.srv.limiter.Take(c.info.ipKey, c.srv.cfg.PublicRate); !d.Allowed {
			c.sendJSON(errorMsg{Type: "error", Code: api.CodeRateLimited,
				Message: "too many messages from this address; retry in " + strconv.Itoa(int(d.RetryAfter.Seconds()+1)) + " s"})
			return
		}
	}
	c.srv.handle(c, data)
}

type request struct {
	Op       string          `json:"op"`
	ID       json.RawMessage `json:"id,omitempty"`
	Channels []string        `json:"channels"`
	APIKey   string          `json:"api_key"`
	Params   json.RawMessage `json:"params,omitempty"` // order ops (orders.go)
	Since    *uint64         `json:"since,omitempty"`  // subscribe: resume the private channels after this sequence
}

type errorMsg struct {
	Type    string          `json:"type"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Channel string          `json:"channel,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

type ackMsg struct {
	Type     string          `json:"type"`
	Op       string          `json:"op"`
	Channels []string        `json:"channels,omitempty"`
	ID       json.RawMessage `json:"id,omitempty"`
	// auth
	MerchantID  string `json:"merchant_id,omitempty"`
	Environment string `json:"environment,omitempty"`
}

// handle runs one client message (under c.rmu).
func (s *Server) handle(c *conn, data []byte) {
	var r request
	if err := json.Unmarshal(data, &r); err != nil {
		c.sendJSON(errorMsg{Type: "error", Code: "INVALID_JSON", Message: "malformed message: " + err.Error()})
		return
	}
	fail := func(code, msg, ch string) {
		c.sendJSON(errorMsg{Type: "error", Code: code, Message: msg, Channel: ch, ID: r.ID})
	}
	authed := c.principal.MerchantID != [16]byte{}
	switch r.Op {
	case "ping":
		c.sendJSON(ackMsg{Type: "pong", Op: "ping", ID: r.ID})
	case "auth":
		if authed {
			fail("ALREADY_AUTHENTICATED", "this connection is authenticated", "")
			return
		}
		if r.APIKey == "" {
			fail(api.CodeValidation, "api_key is required", "")
			return
		}
		// The key may need a database lookup: check it on a goroutine of its own and
		// hold this connection's later messages until it is done.
		c.authing = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.authMessage(c, r)
		}()
	case "subscribe", "unsubscribe":
		if c.hub == nil {
			fail(api.CodeUnauthorized, "authenticate first: X-Api-Key on the upgrade or {\"op\":\"auth\",\"api_key\":...}", "")
			return
		}
		if len(r.Channels) == 0 {
			fail(api.CodeValidation, "channels is required", "")
			return
		}
		if r.Channels = s.eventsOp(c, r, authed); len(r.Channels) == 0 {
			return // the events channel alone: answered by eventsOp (events.go)
		}
		chs := make([]channel, 0, len(r.Channels))
		for _, name := range r.Channels {
			ch, err := c.hub.parseChannel(name)
			if err != nil {
				fail("INVALID_CHANNEL", err.Error(), name)
				return
			}
			if ch.private && !authed {
				fail(api.CodeUnauthorized, "the "+name+" channel is private: authenticate with an API key first", name)
				return
			}
			chs = append(chs, ch)
		}
		ack, _ := json.Marshal(ackMsg{Type: "ack", Op: r.Op, Channels: r.Channels, ID: r.ID})
		if c.chans == nil {
			c.chans = map[string]channel{}
		}
		hub := c.hub
		if r.Op == "unsubscribe" {
			for _, ch := range chs {
				delete(c.chans, ch.name)
			}
			hub.do(func() { hub.unsubscribe(c, chs, ack) })
			return
		}
		n := len(c.chans)
		for _, ch := range chs {
			if _, ok := c.chans[ch.name]; !ok {
				n++
			}
		}
		if n > s.cfg.MaxSubscriptions {
			fail("TOO_MANY_SUBSCRIPTIONS", "at most "+strconv.Itoa(s.cfg.MaxSubscriptions)+" channels per connection", "")
			return
		}
		for _, ch := range chs {
			c.chans[ch.name] = ch
		}
		since := r.Since
		hub.do(func() {
			hub.subscribe(c, chs, ack)
			hub.resume(c, chs, since) // before any later event of the account: same goroutine
		})
	case "session.cancel_on_disconnect":
		if !authed {
			c.sendBytes(opError(r.Op, r.ID, 401, api.CodeUnauthorized, "authenticate first: X-Api-Key on the upgrade or {\"op\":\"auth\",\"api_key\":...}", nil))
			return
		}
		c.sendBytes(s.setCancelOnDisconnect(c, r))
	default:
		if orderOps[r.Op] {
			if !authed {
				c.sendBytes(opError(r.Op, r.ID, 401, api.CodeUnauthorized, "authenticate first: X-Api-Key on the upgrade or {\"op\":\"auth\",\"api_key\":...}", nil))
				return
			}
			s.orderOp(c, r)
			return
		}
		fail("UNKNOWN_OP", "op must be auth, subscribe, unsubscribe, ping, order.place, order.cancel, order.amend, orders.cancel_all, orders.batch or session.cancel_on_disconnect", "")
	}
}

// authMessage checks an auth message's key off the poller, then replays the messages
// held meanwhile.
func (s *Server) authMessage(c *conn, r request) {
	p, err := s.authKey(r.APIKey, c.info)
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.authing = false
	if err == nil && len(c.chans) > 0 && s.cfg.Hubs[p.Environment] != c.hub {
		err = api.Errorf(api.CodeValidation, "this connection streams the %s market: authenticate before subscribing to use a %s key",
			c.hub.Env(), p.Environment)
	}
	if err != nil {
		ae := api.From(err)
		c.sendJSON(errorMsg{Type: "error", Code: ae.Code, Message: ae.Detail, ID: r.ID})
		c.fail(ClosePolicyViolation, "authentication failed")
		c.held = nil
		return
	}
	c.principal, c.hub = p, s.cfg.Hubs[p.Environment]
	c.markPrivate()
	c.setKey(r.APIKey)
	c.sess.mu.Lock()
	c.sess.cred = [2]string{"X-Api-Key", r.APIKey}
	c.sess.mu.Unlock()
	c.sendJSON(ackMsg{Type: "ack", Op: "auth", ID: r.ID, MerchantID: p.MerchantID.String(), Environment: string(p.Environment)})
	held := c.held
	c.held = nil
	for _, m := range held {
		if c.authing {
			c.held = append(c.held, m)
			continue
		}
		s.handle(c, m)
	}
}
