package ws

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/google/uuid"

	"svc/gateway/api"
)

// EventsChannel is the private channel of the merchant's payment events (issue 30): every
// event recorded for the connection's merchant and environment from the subscription on,
// one message each, {"type":"event","channel":"events","data":{"id","event","data",
// "created_at"}} with the data its webhook deliveries carry. `svc listen` forwards them to
// a local URL. It needs an API key (or bearer token) like orders and balances.
const EventsChannel = "events"

// EventFeed follows a tenant's payment events for the events channel; gateway/events.Feed
// is one (it polls the events table).
type EventFeed interface {
	// Follow calls send with the message of each event of the merchant and environment
	// recorded from now on, oldest first and each once, until ctx ends.
	Follow(ctx context.Context, merchantID uuid.UUID, env api.Environment, send func(msg []byte))
}

// followers are the connections subscribed to the events channel, each with the cancel of
// its feed.
type followers struct {
	mu sync.Mutex
	m  map[*conn]context.CancelFunc
}

// eventsOp takes the events channel out of a subscribe or unsubscribe (under c.rmu) and
// starts or stops the connection's feed; it returns the other channels for the hub. With
// only the events channel it answers the request itself (ack or error) and returns none.
func (s *Server) eventsOp(c *conn, r request, authed bool) []string {
	rest := make([]string, 0, len(r.Channels))
	found := false
	for _, name := range r.Channels {
		if name == EventsChannel {
			found = true
		} else {
			rest = append(rest, name)
		}
	}
	if !found {
		return r.Channels
	}
	fail := func(code, msg string) {
		c.sendJSON(errorMsg{Type: "error", Code: code, Message: msg, Channel: EventsChannel, ID: r.ID})
	}
	switch {
	case !authed:
		fail(api.CodeUnauthorized, "the events channel is private: authenticate with an API key first")
		return nil
	case s.cfg.Events == nil:
		fail("INVALID_CHANNEL", "this server streams no payment events")
		return nil
	case r.Op == "unsubscribe":
		s.unfollow(c)
	default:
		s.follow(c)
	}
	c.sendJSON(ackMsg{Type: "ack", Op: r.Op, Channels: []string{EventsChannel}, ID: r.ID})
	return rest
}

// follow starts c's feed unless it runs already.
func (s *Server) follow(c *conn) {
	s.followers.mu.Lock()
	defer s.followers.mu.Unlock()
	if s.followers.m == nil {
		s.followers.m = map[*conn]context.CancelFunc{}
	}
	if _, ok := s.followers.m[c]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.followers.m[c] = cancel
	p := c.principal
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.cfg.Events.Follow(ctx, p.MerchantID, p.Environment, c.sendBytes)
	}()
}

// unfollow stops c's feed, if any (unsubscribe, and every connection's shutdown).
func (s *Server) unfollow(c *conn) {
	s.followers.mu.Lock()
	cancel := s.followers.m[c]
	delete(s.followers.m, c)
	s.followers.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// EventMessage encodes one event of the events channel (for EventFeed implementations).
func EventMessage(id, event string, data json.RawMessage, createdAt string) []byte {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Channel string `json:"channel"`
		Data    any    `json:"data"`
	}{"event", EventsChannel, struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		CreatedAt string          `json:"created_at"`
	}{id, event, data, createdAt}})
	return b
}
