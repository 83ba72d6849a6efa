package devhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

// TriggerConfig is where and as whom Trigger calls svcd.
type TriggerConfig struct {
	BaseURL string // svcd's HTTP address, e.g. http://127.0.0.1:8080
	APIKey  string // a sandbox key
	Client  *http.Client
}

// scenario makes one kind of sandbox event happen through the public API.
type scenario struct {
	summary string
	events  []string // what the merchant receives
	run     func(ctx context.Context, a *apiClient, out io.Writer) error
}

// Scenarios are the events Trigger can make happen, by name (an event name, or a short
// alias for the flow).
func scenarios() map[string]scenario {
	customer := scenario{"creates a customer", []string{"customer.created"}, triggerCustomer}
	deposit := scenario{"a sandbox NGN deposit into a new onramp, settled to the merchant's balance",
		[]string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled"}, triggerDeposit(false)}
	flagged := scenario{"a sandbox deposit held for compliance review", []string{"deposit.received", "deposit.flagged"}, triggerDeposit(true)}
	checkout := scenario{"a checkout link paid by a sandbox bank transfer",
		[]string{"deposit.received", "deposit.pending_withdrawal", "deposit.settled", "checkout.payment.completed"}, triggerCheckout}
	return map[string]scenario{
		"customer": customer, "customer.created": customer,
		"deposit": deposit, "deposit.received": deposit, "deposit.pending_withdrawal": deposit, "deposit.settled": deposit,
		"deposit.flagged": flagged,
		"checkout":        checkout, "checkout.payment.completed": checkout,
	}
}

// TriggerNames lists what Trigger accepts, for usage texts.
func TriggerNames() string {
	var names []string
	for n, s := range scenarios() {
		names = append(names, fmt.Sprintf("  %-28s %s", n, s.summary))
	}
	sort.Strings(names)
	return strings.Join(names, "\n")
}

// Trigger makes the named sandbox event happen through the real flows and says what it did
// and which events follow. It refuses live keys: the sandbox routes answer SANDBOX_ONLY.
func Trigger(ctx context.Context, cfg TriggerConfig, name string, out io.Writer) error {
	s, ok := scenarios()[name]
	if !ok {
		return fmt.Errorf("cannot trigger %q; choose one of:\n%s", name, TriggerNames())
	}
	if cfg.APIKey == "" {
		return fmt.Errorf("a sandbox API key is required (--api-key or SVC_API_KEY)")
	}
	if strings.HasPrefix(cfg.APIKey, "svc_sk_live_") {
		return fmt.Errorf("svc trigger works in the sandbox only: use a svc_sk_test_ key")
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	a := &apiClient{base: strings.TrimRight(cfg.BaseURL, "/"), key: cfg.APIKey, http: client}
	if err := s.run(ctx, a, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "Done. Events on their way: %s\n", strings.Join(s.events, ", "))
	return nil
}

func triggerCustomer(ctx context.Context, a *apiClient, out io.Writer) error {
	tag := uuid.NewString()[:8]
	var c struct{ ID string }
	if err := a.post(ctx, "/v1/customers", map[string]any{"email": "trigger-" + tag + "@example.com",
		"first_name": "Trigger", "last_name": "Customer " + tag}, &c); err != nil {
		return err
	}
	fmt.Fprintf(out, "Created customer %s\n", c.ID)
	return nil
}

func triggerDeposit(flag bool) func(ctx context.Context, a *apiClient, out io.Writer) error {
	return func(ctx context.Context, a *apiClient, out io.Writer) error {
		var o struct{ ID string }
		if err := a.post(ctx, "/v1/payments/onramps", map[string]any{"type": "TEMPORARY", "amount": 16000}, &o); err != nil {
			return err
		}
		fmt.Fprintf(out, "Created onramp %s (a temporary account for 16000 NGN)\n", o.ID)
		var d struct{ ID, Status string }
		if err := a.post(ctx, "/v1/payments/sandbox/deposits", map[string]any{"onramp_id": o.ID, "should_flag": flag}, &d); err != nil {
			return err
		}
		if d.Status == "SETTLED" { // svcd converts and settles it as it arrives
			fmt.Fprintf(out, "Simulated deposit %s (SETTLED): converted and credited as it arrived\n", d.ID)
			return nil
		}
		fmt.Fprintf(out, "Simulated deposit %s (%s); it moves on by itself\n", d.ID, d.Status)
		return nil
	}
}

func triggerCheckout(ctx context.Context, a *apiClient, out io.Writer) error {
	var l struct{ ID, Slug, URL string }
	if err := a.post(ctx, "/v1/checkout-links", map[string]any{"title": "svc trigger", "amount": 16000}, &l); err != nil {
		return err
	}
	fmt.Fprintf(out, "Created checkout link %s (%s)\n", l.ID, l.URL)
	// The payer's side: start a bank transfer on the hosted page, then the sandbox sends it.
	loc, err := a.form(ctx, "/pay/"+l.Slug+"/transfer", nil)
	if err != nil {
		return err
	}
	u, err := url.Parse(loc)
	if err != nil || u.Query().Get("payment") == "" {
		return fmt.Errorf("the pay page answered %q, not a payment", loc)
	}
	payment := u.Query().Get("payment")
	if _, err := a.form(ctx, "/pay/"+l.Slug+"/simulate", url.Values{"payment": {payment}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Paid it: payment %s, a sandbox transfer that settles by itself\n", payment)
	return nil
}

// apiClient calls svcd's enveloped JSON API with an API key.
type apiClient struct {
	base, key string
	http      *http.Client
}

func (a *apiClient) post(ctx context.Context, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", a.key)
	req.Header.Set("X-Idempotency-Key", "trigger-"+uuid.NewString())
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
		Data    json.RawMessage `json:"data"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(b, &env); err != nil || !env.Success {
		return fmt.Errorf("POST %s: %d %s %s", path, resp.StatusCode, env.Message, env.Detail)
	}
	return json.Unmarshal(env.Data, out)
}

// form posts a hosted page's form and returns the redirect's Location.
func (a *apiClient) form(ctx context.Context, path string, v url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, strings.NewReader(v.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := a.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || strings.Contains(loc, "notice=") {
		return "", fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, loc)
	}
	return loc, nil
}
