package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/payments"
)

// SenderConfig says how deliveries are sent.
type SenderConfig struct {
	// Timeout is the whole attempt: connect, TLS, request and response headers (default 10s,
	// the receiver's deadline in the spec).
	Timeout time.Duration
	// AllowInsecure is the local development and test switch: http URLs, and loopback and
	// private addresses. Off by default; link-local, multicast and unspecified addresses are
	// refused even with it on.
	AllowInsecure bool
	// RootCAs are the certificate authorities trusted for receivers; nil: the system's.
	RootCAs *x509.CertPool
	// UserAgent of every delivery (default "svc-webhooks/1").
	UserAgent string
	// MaxConnsPerHost bounds the connections to one receiver (default 64).
	MaxConnsPerHost int
}

// Sender posts signed deliveries through the SSRF guard. Safe for concurrent use.
type Sender struct {
	cfg    SenderConfig
	client *http.Client
}

// NewSender builds a Sender; it opens no connection until the first delivery.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "svc-webhooks/1"
	}
	if cfg.MaxConnsPerHost <= 0 {
		cfg.MaxConnsPerHost = 64
	}
	d := guardedDialer(cfg.AllowInsecure, cfg.Timeout)
	tr := &http.Transport{
		Proxy:                 nil, // never: a proxy would connect past the guard
		DialContext:           d.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   cfg.MaxConnsPerHost,
		MaxConnsPerHost:       cfg.MaxConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &Sender{cfg: cfg, client: &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// A redirect is an answer, not a new destination: 3xx counts as a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// LoadCAFile returns the system's certificate pool plus the PEM certificates in path.
func LoadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("webhook CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("webhook CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// outcome is the result of one attempt.
type outcome struct {
	status   *int
	err      *string
	duration time.Duration
}

func (o outcome) success() bool { return o.err == nil && o.status != nil && *o.status/100 == 2 }

// delivery is what one attempt sends.
type delivery struct {
	eventID   uuid.UUID
	event     string
	data      []byte // JSON object
	createdAt time.Time
	secret    string
	oldSecret string // during a rotation's overlap, the replaced secret: it signs too
	test      bool
}

// Envelope is the body of a delivery of an event sent at sentAt, exactly as the delivery
// worker encodes it ({id, event, data, timestamp, created_at}): `svc listen` forwards the
// events stream to a local URL in this shape, signed with Sign.
func Envelope(eventID uuid.UUID, event string, data []byte, createdAt, sentAt time.Time) []byte {
	return delivery{eventID: eventID, event: event, data: data, createdAt: createdAt}.body(sentAt)
}

// body encodes the envelope {id, event, data, timestamp, created_at}: timestamp is the time
// of this attempt (signed, so Verify can bound replays), created_at when the event happened.
func (d delivery) body(sentAt time.Time) []byte {
	ev, _ := json.Marshal(d.event)
	b := make([]byte, 0, 128+len(d.data))
	b = append(b, `{"id":"`...)
	b = append(b, d.eventID.String()...)
	b = append(b, `","event":`...)
	b = append(b, ev...)
	b = append(b, `,"data":`...)
	b = append(b, d.data...)
	b = append(b, `,"timestamp":"`...)
	b = sentAt.UTC().AppendFormat(b, payments.TimeLayout)
	b = append(b, `","created_at":"`...)
	b = d.createdAt.UTC().AppendFormat(b, payments.TimeLayout)
	b = append(b, `"}`...)
	return b
}

// send posts one attempt of d to rawURL and returns the body sent and the outcome.
func (s *Sender) send(ctx context.Context, rawURL string, d delivery, now time.Time) ([]byte, outcome) {
	body := d.body(now)
	start := time.Now()
	status, err := s.post(ctx, rawURL, body, d, now)
	o := outcome{duration: time.Since(start)}
	if status != 0 {
		o.status = &status
	}
	if err != nil {
		msg := err.Error()
		o.err = &msg
	}
	return body, o
}

func (s *Sender) post(ctx context.Context, rawURL string, body []byte, d delivery, now time.Time) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, fmt.Errorf("bad endpoint URL: %w", err)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && s.cfg.AllowInsecure) {
		return 0, fmt.Errorf("%w: endpoint URL must use https", ErrRefused)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", s.cfg.UserAgent)
	sig := Sign(body, d.secret)
	if d.oldSecret != "" {
		sig += " " + Sign(body, d.oldSecret) // the new secret's first, as Standard Webhooks lists them
	}
	h.Set(HeaderSignature, sig)
	h.Set(HeaderEventID, d.eventID.String())
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	if d.test {
		h.Set(HeaderTestMode, "true")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, describe(err, s.cfg.Timeout)
	}
	// Drain a little so the connection can be reused; the body is not recorded.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("receiver answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return resp.StatusCode, nil
}

// describe turns a client error into a short sentence for the log.
func describe(err error, timeout time.Duration) error {
	if errors.Is(err, ErrRefused) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var oe *net.OpError
		if errors.As(err, &oe) {
			return oe.Err
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timeout: no answer within %s", timeout)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timeout: no answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
