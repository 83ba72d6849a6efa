package ws

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"svc/engine"
)

// Message is any server message, decoded loosely (the fields its type uses are set).
type Message struct {
	Type          string          `json:"type"`
	Channel       string          `json:"channel"`
	Op            string          `json:"op"`
	Code          string          `json:"code"`
	Message       string          `json:"message"`
	Channels      []string        `json:"channels"`
	Sequence      uint64          `json:"sequence"`
	FirstSequence uint64          `json:"first_sequence"`
	LastSequence  uint64          `json:"last_sequence"`
	Bids          [][2]string     `json:"bids"`
	Asks          [][2]string     `json:"asks"`
	Data          json.RawMessage `json:"data"`
	Timestamp     int64           `json:"timestamp"`
}

// Client is the reference client of the stream (github.com/gorilla/websocket). It is used
// by the tests, `svc watch` and the load generator; it is not safe for concurrent reads.
type Client struct {
	conn *websocket.Conn
}

// Dial connects to url (ws://host:port/v1/ws) with apiKey on the upgrade ("" to send an
// auth message later).
func Dial(url, apiKey string) (*Client, error) {
	h := http.Header{}
	if apiKey != "" {
		h.Set("X-Api-Key", apiKey)
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 512}
	c, resp, err := d.Dial(url, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("ws dial %s: %w (HTTP %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("ws dial %s: %w", url, err)
	}
	return &Client{conn: c}, nil
}

// Conn is the underlying connection.
func (c *Client) Conn() *websocket.Conn { return c.conn }

// Send writes one op message.
func (c *Client) Send(v any) error { return c.conn.WriteJSON(v) }

// Auth sends {"op":"auth","api_key":key}.
func (c *Client) Auth(key string) error {
	return c.Send(map[string]any{"op": "auth", "api_key": key})
}

// Subscribe sends {"op":"subscribe","channels":[...]}.
func (c *Client) Subscribe(channels ...string) error {
	return c.Send(map[string]any{"op": "subscribe", "channels": channels})
}

// Unsubscribe sends {"op":"unsubscribe","channels":[...]}.
func (c *Client) Unsubscribe(channels ...string) error {
	return c.Send(map[string]any{"op": "unsubscribe", "channels": channels})
}

// Next reads the next message.
func (c *Client) Next() (*Message, error) {
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		return nil, err
	}
	m := &Message{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("ws: bad message %q: %w", data, err)
	}
	return m, nil
}

// Close closes the connection (with a normal close frame).
func (c *Client) Close() error {
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return c.conn.Close()
}

// Book is a local order book kept from an orderbook channel: a snapshot, then diffs.
// A diff that does not start at or before Seq+1 is a gap: the book is no longer valid
// until the next snapshot (ask for one by subscribing to the channel again).
type Book struct {
	Seq    uint64
	Synced bool
	Bids   map[string]string // price -> quantity (decimal strings as sent)
	Asks   map[string]string
	Gaps   int // gaps detected
}

// ErrGap is returned by Book.Apply for a diff that skips sequences.
var ErrGap = errors.New("ws: orderbook gap")

// Apply applies a snapshot or diff. Diffs ending at or before Seq are ignored (the
// snapshot already holds them; quantities are absolute, so overlap is harmless).
func (b *Book) Apply(m *Message) error {
	switch m.Type {
	case "snapshot":
		b.Bids, b.Asks = map[string]string{}, map[string]string{}
		setLevels(b.Bids, m.Bids)
		setLevels(b.Asks, m.Asks)
		b.Seq, b.Synced = m.Sequence, true
	case "diff":
		if !b.Synced || m.LastSequence <= b.Seq {
			return nil
		}
		if m.FirstSequence > b.Seq+1 {
			b.Synced = false
			b.Gaps++
			return fmt.Errorf("%w: have %d, diff starts at %d", ErrGap, b.Seq, m.FirstSequence)
		}
		setLevels(b.Bids, m.Bids)
		setLevels(b.Asks, m.Asks)
		b.Seq = m.LastSequence
	}
	return nil
}

func setLevels(side map[string]string, ls [][2]string) {
	for _, l := range ls {
		if isZero(l[1]) {
			delete(side, l[0])
		} else {
			side[l[0]] = l[1]
		}
	}
}

func isZero(s string) bool { return strings.Trim(s, "0.") == "" }

// Levels returns a side best first as [price, quantity] pairs, at most n (n <= 0: all).
func (b *Book) Levels(bids bool, n int) [][2]string {
	side := b.Asks
	if bids {
		side = b.Bids
	}
	out := make([][2]string, 0, len(side))
	for p, q := range side {
		out = append(out, [2]string{p, q})
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := price(out[i][0]), price(out[j][0])
		if bids {
			return x > y
		}
		return x < y
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// price orders decimal strings of one symbol (same number of decimals).
func price(s string) int64 {
	dec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dec = len(s) - i - 1
	}
	v, _ := engine.ParseDecimal(s, dec)
	return v
}

// Watch keeps book from the orderbook channel of symbol until stop returns true or the
// connection fails: it subscribes, applies every snapshot and diff, and on a gap
// subscribes again for a fresh snapshot. symbol may carry an update interval
// ("USDT-NGN@100ms", "USDT-NGN@1000ms"; none: a diff per 20 ms). onUpdate (optional) runs after each applied
// message; drop (optional, tests) may swallow a message to simulate a lost one.
func (c *Client) Watch(symbol string, book *Book, onUpdate func(*Book, *Message) bool, drop func(*Message) bool) error {
	ch := "orderbook:" + symbol
	if err := c.Subscribe(ch); err != nil {
		return err
	}
	for {
		m, err := c.Next()
		if err != nil {
			return err
		}
		if m.Type == "error" {
			return fmt.Errorf("ws: %s: %s", m.Code, m.Message)
		}
		if m.Channel != ch || (drop != nil && drop(m)) {
			continue
		}
		if err := book.Apply(m); errors.Is(err, ErrGap) {
			if err := c.Subscribe(ch); err != nil {
				return err
			}
			continue
		}
		if onUpdate != nil && !onUpdate(book, m) {
			return nil
		}
	}
}
