package ws

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"svc/gateway/api"
)

// conn is one WebSocket connection. Its reader is the upgrade handler's goroutine, its
// writer a goroutine of its own that drains a bounded queue; whoever fills the queue
// (the hub, the reader) never waits: a full queue closes the connection as a slow
// consumer.
type conn struct {
	srv *Server
	ws  *websocket.Conn

	principal api.Principal
	hub       *Hub
	chans     map[string]channel // reader goroutine only

	out        chan *websocket.PreparedMessage
	kill       chan struct{}
	writerDone chan struct{}
	closing    atomic.Bool
	once       sync.Once
	closeCode  int
	closeWhy   string
}

// send queues pm; a full queue fails the connection (slow consumer).
func (c *conn) send(pm *websocket.PreparedMessage) {
	if pm == nil || c.closing.Load() {
		return
	}
	select {
	case c.out <- pm:
	default:
		c.srv.slow.Add(1)
		c.fail(websocket.CloseTryAgainLater, "slow consumer: outgoing queue full")
	}
}

func (c *conn) sendBytes(msg []byte) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err == nil {
		c.send(pm)
	}
}

func (c *conn) sendJSON(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		c.sendBytes(b)
	}
}

// fail closes the connection with code and reason (once): the writer sends the close
// frame, then ends the reader; the connection closes when the upgrade handler returns.
func (c *conn) fail(code int, why string) {
	c.once.Do(func() {
		c.closeCode, c.closeWhy = code, why
		c.closing.Store(true)
		close(c.kill)
	})
}

func (c *conn) writeLoop() {
	defer close(c.writerDone)
	// The hijacked connection's Close is a no-op until the upgrade handler returns, so
	// the writer ends the reader by expiring its deadline.
	defer func() { _ = c.ws.SetReadDeadline(time.Now().Add(-time.Second)) }()
	cfg := &c.srv.cfg
	ping := time.NewTicker(cfg.PingEvery)
	defer ping.Stop()
	for {
		select {
		case pm := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout))
			if err := c.ws.WritePreparedMessage(pm); err != nil {
				c.fail(websocket.CloseAbnormalClosure, "")
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(cfg.WriteTimeout)); err != nil {
				c.fail(websocket.CloseAbnormalClosure, "")
				return
			}
		case <-c.kill:
			if c.closeCode != websocket.CloseAbnormalClosure {
				_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(c.closeCode, c.closeWhy), time.Now().Add(cfg.WriteTimeout))
			}
			return
		}
	}
}
