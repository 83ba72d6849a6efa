// Package devhooks is the merchant's side of local webhook development (issue 30), behind
// `svc listen` and `svc trigger`: both need only an API key and svcd's address, no
// database. Listen receives the merchant's events over the WebSocket events channel and
// POSTs each to a local URL as a webhook delivery, signed with a secret of its own; Trigger
// makes sandbox events happen through the real flows (the sandbox simulation routes).
package devhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"svc/gateway/ws"
	"svc/payments/events"
	"svc/payments/webhooks"
)

// ListenConfig says where events come from and go to.
type ListenConfig struct {
	WSURL     string   // svcd's WebSocket, e.g. ws://127.0.0.1:8080/v1/ws
	APIKey    string   // the merchant's key: its environment's events are forwarded
	ForwardTo string   // local receiver, e.g. http://localhost:4242/webhook
	Events    []string // only these event names; empty: every event
	Secret    string   // signing secret; empty: a new whsec_ one, printed at start
	// Ready, when set, is called once the events channel is subscribed (tests).
	Ready func(secret string)
	// Client posts to ForwardTo (default: 10 s timeout, redirects not followed).
	Client *http.Client
}

// NewSecret returns a whsec_ secret for a listen session.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// CheckEvents refuses names outside the catalogue.
func CheckEvents(names []string) error {
	for _, n := range names {
		if !events.Known(n) {
			return fmt.Errorf("unknown event %q (see docs/events.md)", n)
		}
	}
	return nil
}

type eventMsg struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	CreatedAt string          `json:"created_at"`
}

// Listen forwards events until ctx ends (nil then) or the stream fails. It prints the
// secret and the environment at start, then one line per delivery with the local answer.
func Listen(ctx context.Context, cfg ListenConfig, out io.Writer) error {
	if err := CheckEvents(cfg.Events); err != nil {
		return err
	}
	if u, err := url.Parse(cfg.ForwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to %q: want an http(s) URL such as http://localhost:4242/webhook", cfg.ForwardTo)
	}
	if cfg.APIKey == "" {
		return errors.New("an API key is required (--api-key or SVC_API_KEY)")
	}
	if cfg.Secret == "" {
		cfg.Secret = NewSecret()
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	c, err := ws.Dial(cfg.WSURL, "")
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()
	env, err := handshake(c, cfg.APIKey)
	if err != nil {
		return err
	}
	which := "every event"
	if len(cfg.Events) > 0 {
		which = strings.Join(cfg.Events, ", ")
	}
	fmt.Fprintf(out, "Ready. Forwarding %s of the %s environment to %s\n", which, env, cfg.ForwardTo)
	fmt.Fprintf(out, "Your webhook signing secret for this session is %s\n", cfg.Secret)
	if cfg.Ready != nil {
		cfg.Ready(cfg.Secret)
	}
	for {
		m, err := c.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("events stream: %w", err)
		}
		switch m.Type {
		case "event":
		case "error":
			return fmt.Errorf("events stream: %s: %s", m.Code, m.Message)
		default:
			continue // pong and the like
		}
		var e eventMsg
		if err := json.Unmarshal(m.Data, &e); err != nil {
			return fmt.Errorf("events stream: bad event: %w", err)
		}
		if len(cfg.Events) > 0 && !slices.Contains(cfg.Events, e.Event) {
			continue
		}
		fmt.Fprintln(out, forward(ctx, client, cfg, e))
	}
}

// handshake authenticates with the key and subscribes to the events channel; it returns the
// key's environment.
func handshake(c *ws.Client, key string) (string, error) {
	deadline := time.Now().Add(15 * time.Second)
	_ = c.Conn().SetReadDeadline(deadline)
	defer c.Conn().SetReadDeadline(time.Time{})
	if err := c.Auth(key); err != nil {
		return "", err
	}
	var env string
	for env == "" {
		_, raw, err := c.Conn().ReadMessage()
		if err != nil {
			return "", fmt.Errorf("authenticate: %w", err)
		}
		var m struct {
			Type, Op, Code, Message, Environment string
		}
		_ = json.Unmarshal(raw, &m)
		switch {
		case m.Type == "error":
			return "", fmt.Errorf("authenticate: %s: %s", m.Code, m.Message)
		case m.Type == "ack" && m.Op == "auth":
			env = m.Environment
		}
	}
	if err := c.Subscribe(ws.EventsChannel); err != nil {
		return "", err
	}
	for {
		m, err := c.Next()
		if err != nil {
			return "", fmt.Errorf("subscribe: %w", err)
		}
		if m.Type == "error" {
			return "", fmt.Errorf("subscribe: %s: %s", m.Code, m.Message)
		}
		if m.Type == "ack" && slices.Contains(m.Channels, ws.EventsChannel) {
			return env, nil
		}
	}
}

// forward POSTs one event as a webhook delivery and returns the line to print.
func forward(ctx context.Context, client *http.Client, cfg ListenConfig, e eventMsg) string {
	id, err := uuid.Parse(e.ID)
	if err != nil {
		return "skipped an event with a bad id " + strconv.Quote(e.ID)
	}
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	now := time.Now()
	body := webhooks.Envelope(id, e.Event, e.Data, created, now)
	line := fmt.Sprintf("%s  %-28s %s  -> ", now.UTC().Format("15:04:05"), e.Event, e.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.ForwardTo, bytes.NewReader(body))
	if err != nil {
		return line + "error: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-listen/1")
	req.Header.Set(webhooks.HeaderSignature, webhooks.Sign(body, cfg.Secret))
	req.Header.Set(webhooks.HeaderEventID, e.ID)
	req.Header.Set(webhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return line + "error: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return fmt.Sprintf("%s%d %s (%d ms)", line, resp.StatusCode, http.StatusText(resp.StatusCode), time.Since(start).Milliseconds())
}
