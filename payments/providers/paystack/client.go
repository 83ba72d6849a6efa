package paystack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"svc/payments/providers"
)

// DefaultBaseURL is Paystack's API.
const DefaultBaseURL = "https://api.paystack.co"

// Config configures a Client. SecretKey, CustomerEmailDomain and Phone are required; every other
// field has a default.
type Config struct {
	// SecretKey is the integration's secret key (sk_live_... or sk_test_...): the Bearer
	// token of every call and the HMAC key of notifications. From the environment only.
	SecretKey string
	// BaseURL is the API's root; default DefaultBaseURL (tests: the contract server's URL).
	// https, or http to a loopback address only (the key must not travel in clear).
	BaseURL string
	// PreferredBank is the slug of the bank that issues dedicated accounts; default
	// "wema-bank".
	PreferredBank string
	// BankCodes maps a DVA bank's slug to the bank code reported as VirtualAccount.BankCode
	// (and matched against inbound transfers); default {"wema-bank": "035"}. A slug missing
	// here reports the slug itself.
	BankCodes map[string]string
	// CustomerEmailDomain is the domain of the emails of the Paystack customers that hold
	// our dedicated accounts (one customer per account reference, e.g.
	// "onramp__0190...@dva.example.com"). Use a domain the business controls.
	CustomerEmailDomain string
	// Phone is the contact phone given to Paystack for every DVA customer, e.g.
	// "+2348000000000" (Paystack requires first name, last name and phone before it issues
	// a dedicated account; the API does not collect customers' phones). Required.
	Phone string
	// Timeout bounds each attempt of each call; default 10 s.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call (first try included); default 3.
	MaxAttempts int
	// Backoff is the wait before the first retry, doubled before each further one, at most
	// MaxBackoff; defaults 250 ms and 2 s. A 429's Retry-After is honoured up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// HTTPClient sends the requests; default a client with no timeout of its own (the
	// per-attempt context bounds every request).
	HTTPClient *http.Client
	// Logger receives retries and refusals; default slog.Default(). The key is never logged.
	Logger *slog.Logger
	// Now is the clock (an identification's expiry); default time.Now.
	Now func() time.Time
}

// Client is the Paystack adapter. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
	http *http.Client
	log  *slog.Logger
}

var _ providers.Bank = (*Client)(nil)

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.SecretKey) == "" {
		return nil, errors.New("paystack: a secret key is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("paystack: base URL %q must be an absolute http(s) URL", cfg.BaseURL)
	}
	if base.Scheme == "http" && !loopback(base.Hostname()) {
		return nil, fmt.Errorf("paystack: base URL %q would send the secret key in clear: use https (http only to a loopback test server)", cfg.BaseURL)
	}
	if cfg.CustomerEmailDomain == "" || strings.ContainsAny(cfg.CustomerEmailDomain, "@ /") || !strings.Contains(cfg.CustomerEmailDomain, ".") {
		return nil, fmt.Errorf("paystack: customer email domain %q must be a domain name such as dva.example.com", cfg.CustomerEmailDomain)
	}
	if strings.TrimSpace(cfg.Phone) == "" {
		return nil, errors.New("paystack: a contact phone is required (Paystack needs one on every dedicated account's customer)")
	}
	if cfg.PreferredBank == "" {
		cfg.PreferredBank = "wema-bank"
	}
	if cfg.BankCodes == nil {
		cfg.BankCodes = map[string]string{"wema-bank": "035"}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 250 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = cfg.Backoff
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, base: base, http: hc, log: log.With("provider", "paystack")}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// APIError is Paystack's refusal of a call: a 4xx answer with its envelope's message (and
// code, when Paystack gives one). It is not retried: the same request gets the same answer.
type APIError struct {
	Op         string // e.g. "create transfer"
	HTTPStatus int
	Message    string // Paystack's message
	Code       string // Paystack's error code, when given (e.g. "invalid_transfer_recipient")
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("paystack: %s: HTTP %d", e.Op, e.HTTPStatus)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// envelope is every Paystack answer: {status, message, data} (plus code and type on errors).
type envelope struct {
	Status  bool            `json:"status"`
	Message string          `json:"message"`
	Code    string          `json:"code"`
	Data    json.RawMessage `json:"data"`
}

// maxBody bounds what is read of an answer.
const maxBody = 1 << 20

// call sends one request (with retries, see the package doc) and decodes the envelope's data
// into out (when out is not nil). Errors: *APIError (a 4xx, or a 2xx whose envelope says
// status false), *providers.UnavailableError (down, slow, refusing our key, or a 2xx answer
// that cannot be read), or an encoding error of the request.
func (c *Client) call(ctx context.Context, op, method, path string, query url.Values, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("paystack: %s: encode request: %w", op, err)
		}
	}
	u := *c.base
	u.Path = c.base.Path + path // unescaped; String escapes what needs it
	u.RawQuery = query.Encode()
	wait := c.cfg.Backoff
	var last string
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return c.down(op, deadlineReason(last))
		}
		status, header, data, err := c.attempt(ctx, method, u.String(), payload)
		switch {
		case err != nil:
			last = "no answer: " + err.Error()
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			var env envelope
			_ = json.Unmarshal(data, &env)
			c.log.Error("paystack refused our secret key or integration", "op", op, "status", status, "message", env.Message)
			return c.down(op, fmt.Sprintf("the partner refused our credentials or integration (HTTP %d: %s)", status, env.Message))
		case status >= 200 && status < 300:
			err := decode(op, data, out)
			var ae *APIError
			if err != nil && !errors.As(err, &ae) {
				return c.down(op, err.Error()) // a 2xx we cannot read: the outcome is unknown
			}
			return err
		case status == http.StatusTooManyRequests || status >= 500:
			last = fmt.Sprintf("HTTP %d", status)
			if ra, err := strconv.Atoi(header.Get("Retry-After")); err == nil && ra > 0 {
				wait = max(wait, time.Duration(ra)*time.Second)
			}
		default:
			var env envelope
			_ = json.Unmarshal(data, &env)
			return &APIError{Op: op, HTTPStatus: status, Message: env.Message, Code: env.Code}
		}
		if attempt >= c.cfg.MaxAttempts {
			return c.down(op, fmt.Sprintf("%d attempts failed, the last: %s", attempt, last))
		}
		wait = min(wait, c.cfg.MaxBackoff)
		c.log.Warn("paystack call failed, retrying", "op", op, "attempt", attempt, "error", last, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return c.down(op, deadlineReason(last))
		case <-t.C:
		}
		wait *= 2
	}
}

// attempt is one HTTP exchange under the per-attempt timeout.
func (c *Client) attempt(ctx context.Context, method, u string, payload []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.SecretKey)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL holds no secret, but the error text is logged: keep it to the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

func decode(op string, data []byte, out any) error {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("paystack: %s: malformed answer: %w", op, err)
	}
	if !env.Status {
		return &APIError{Op: op, HTTPStatus: http.StatusOK, Message: env.Message, Code: env.Code}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("paystack: %s: malformed answer data: %w", op, err)
	}
	return nil
}

func deadlineReason(last string) string {
	if last == "" {
		return "the call's deadline passed before an answer"
	}
	return "the call's deadline passed; the last attempt: " + last
}

func (c *Client) down(op, reason string) error {
	return &providers.UnavailableError{Provider: "bank", Operation: "paystack " + op, Reason: reason}
}

// notFound reports whether err is Paystack's 404.
func notFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.HTTPStatus == http.StatusNotFound
}
