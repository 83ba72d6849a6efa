// Package partners is the HTTP edge of POST /v1/partners/{provider}/events: the route banks
// and custodians post their signed notifications to (issue 19, docs/live.md) over
// payments/partners. It is not behind API-key authentication (partners sign each body
// instead); it is rate-limited per client address and takes bodies up to BodyLimit. It
// answers at once: 200 once the notification is stored and its processing job enqueued (or
// when it was already stored), 401 for a missing or forged signature (nothing stored).
package partners

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/openapi"
	"svc/gateway/ratelimit"
	"svc/payments"
	"svc/payments/money"
	"svc/payments/partners"
	"svc/payments/providers"
)

// Intake is what the handler needs; *payments/partners.Service is one.
type Intake interface {
	Receive(ctx context.Context, provider string, in partners.Incoming) (partners.Receipt, error)
}

// CryptoSimulator is the sandbox custodian's simulation; partners.CustodySimulator is one.
type CryptoSimulator interface {
	Simulate(ctx context.Context, t payments.Tenant, in partners.CryptoArrival) (partners.Receipt, partners.Result, error)
}

// Config tunes the route.
type Config struct {
	// Crypto simulates crypto at a sandbox deposit address (POST
	// /v1/payments/sandbox/crypto-deposits); nil answers 503.
	Crypto CryptoSimulator
	// PerMinute is how many notifications one client address may post a minute (IPv6 by
	// /64); default 600.
	PerMinute int
	// BodyLimit is the largest body taken, in bytes (413 above it); default 256 KiB.
	BodyLimit int
	// ClientIP finds a request's client address (behind trusted proxies); default the peer.
	ClientIP func(*fasthttp.RequestCtx) netip.Addr
	Now      func() time.Time
}

// Routes is the RouteSet of the partner-events route.
type Routes struct {
	in      Intake
	cfg     Config
	limiter *ratelimit.Limiter
}

// New returns the route over in.
func New(in Intake, cfg Config) *Routes {
	if cfg.PerMinute <= 0 {
		cfg.PerMinute = 600
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 256 << 10
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = func(ctx *fasthttp.RequestCtx) netip.Addr {
			a, _ := netip.AddrFromSlice(ctx.RemoteIP())
			return a.Unmap()
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Routes{in: in, cfg: cfg, limiter: ratelimit.New(cfg.Now)}
}

// Path is the route.
const Path = "/v1/partners/{provider}/events"

// SimulatePath is the sandbox custody simulation's route.
const SimulatePath = "/v1/payments/sandbox/crypto-deposits"

// Register adds the partner route, not behind protect (partners sign instead), and the
// sandbox custody simulation behind it.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST(Path, rs.events)
	r.POST(SimulatePath, protect(rs.simulate))
}

type simulateBody struct {
	Chain   string `json:"chain"`
	Asset   string `json:"asset"`
	Address string `json:"address"`
	Amount  string `json:"amount"`
}

type simulatedJSON struct {
	EventID string `json:"event_id"`
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
}

func (rs *Routes) simulate(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	if t.Environment != payments.Sandbox {
		api.Fail(ctx, partners.ErrSandboxOnly)
		return
	}
	var b simulateBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	v.Required("chain", b.Chain)
	v.Required("address", b.Address)
	var in partners.CryptoArrival
	in.Chain, in.Address = providers.Chain(b.Chain), b.Address
	if v.OneOf("asset", b.Asset, string(money.USDT), string(money.USDC)) && v.Required("amount", b.Amount) {
		a, err := money.ParsePositive(money.Asset(b.Asset), b.Amount)
		if v.Check(err == nil, "amount", "must be a positive decimal string with at most 6 decimal places") {
			in.Amount = a
		}
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	if rs.cfg.Crypto == nil {
		api.Fail(ctx, &providers.UnavailableError{Provider: "custody", Operation: "sandbox deposit"})
		return
	}
	c, cancel := context.WithTimeout(api.Ctx(ctx), 10*time.Second)
	defer cancel()
	rc, res, err := rs.cfg.Crypto.Simulate(c, t, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, simulatedJSON{EventID: rc.EventID, Status: res.Status, Outcome: res.Outcome})
}

// RateLimited is how many notifications the per-address limit refused (for metrics).
func (rs *Routes) RateLimited() uint64 { return rs.limiter.Refused() }

type receiptJSON struct {
	EventID   string `json:"event_id"`
	Status    string `json:"status"`
	Duplicate bool   `json:"duplicate"`
}

func (rs *Routes) events(ctx *fasthttp.RequestCtx) {
	addr := rs.cfg.ClientIP(ctx)
	d := rs.limiter.Take(ratelimit.AddrKey("p", addr), rs.cfg.PerMinute)
	if !d.Allowed {
		d.SetHeaders(ctx)
		api.Fail(ctx, api.Errorf(api.CodeRateLimited, "too many notifications from this address; retry in %d s", ratelimit.CeilSeconds(d.RetryAfter)))
		return
	}
	if len(ctx.PostBody()) > rs.cfg.BodyLimit {
		api.Fail(ctx, api.Errorf(api.CodeBodyTooLarge, "a notification is at most %d bytes", rs.cfg.BodyLimit))
		return
	}
	provider, _ := ctx.UserValue("provider").(string)
	h := http.Header{}
	for k, v := range ctx.Request.Header.All() {
		h.Add(string(k), string(v))
	}
	h.Del("Authorization")
	h.Del("Cookie")
	in := partners.Incoming{Header: h, Body: append([]byte(nil), ctx.PostBody()...), RemoteAddr: addr.String()}
	c, cancel := context.WithTimeout(api.Ctx(ctx), 10*time.Second)
	defer cancel()
	r, err := rs.in.Receive(c, provider, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, receiptJSON{EventID: r.EventID, Status: r.Status, Duplicate: r.Duplicate})
}

// Docs documents the route.
func (rs *Routes) Docs() []openapi.Op {
	return []openapi.Op{{Method: "POST", Path: Path, Tag: "partners", Public: true,
		Summary: "Receive a partner's signed notification (banks and custodians; not for merchants)",
		Description: "provider is paystack (x-paystack-signature: hex HMAC-SHA512 of the raw body under the secret key), sandbox-bank " +
			"or sandbox-custody (X-Svc-Partner-Signature: sha256=<hex HMAC-SHA256 of the raw body under the sandbox secret>); " +
			"the body is the partner's own format (docs/live.md). A missing or wrong signature is 401 and nothing is stored. " +
			"The notification is stored raw for audit, keyed by the partner's event id (a repeat answers 200 with duplicate true " +
			"and changes nothing), and processed by a durable job: the answer does not wait for the money to be credited. " +
			"Limited per client address (429 with Retry-After); bodies up to 256 KiB (413).",
		Body: openapi.Schema{"type": "object", "description": "the partner's notification, as the partner sends it"},
		Responses: map[int]openapi.Response{200: {Description: "stored (or already stored)", Data: openapi.Obj(map[string]openapi.Schema{
			"event_id":  openapi.Str("the partner's event id"),
			"status":    openapi.Enum(partners.Received, partners.Processed, partners.Ignored, partners.Rejected, partners.Malformed),
			"duplicate": openapi.Bool("true when this event id was already stored: nothing changed"),
		}, "event_id", "status", "duplicate")}},
		Errors: []string{api.CodeUnauthorized, api.CodeNotFound, api.CodeRateLimited, api.CodeBodyTooLarge}},
		{Method: "POST", Path: SimulatePath, Tag: "partners", Summary: "Simulate crypto confirmed at one of your deposit addresses (test keys only)",
			Description: "The sandbox custodian posts its deposit.confirmed notification through the partner path (stored, processed at once). " +
				"address is your merchant funding address (GET /v1/payments/merchant/balance: credits your payments balance), a " +
				"customer's crypto funding request address (credits the customer, completes the oldest open request for that address " +
				"and amount, customer.balance.credited) or an offramp's deposit address (settles the offramp). status PROCESSED, or " +
				"REJECTED with the reason in outcome (e.g. an offramp no longer ACTIVE).",
			Body: openapi.Obj(map[string]openapi.Schema{
				"chain":   openapi.Str("e.g. BASE"),
				"asset":   openapi.Enum(string(money.USDT), string(money.USDC)),
				"address": openapi.Str("one of your deposit addresses on that chain"),
				"amount":  openapi.Decimal("> 0, at most 6 decimal places"),
			}, "chain", "asset", "address", "amount"),
			Responses: map[int]openapi.Response{201: {Description: "what the notification did", Data: openapi.Obj(map[string]openapi.Schema{
				"event_id": openapi.Str("the sandbox custodian's event id"),
				"status":   openapi.Enum(partners.Processed, partners.Rejected),
				"outcome":  openapi.Str("what processing did, or why not"),
			}, "event_id", "status", "outcome")}},
			Errors: []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeSandboxOnly, api.CodeNotFound, api.CodeProviderUnavailable}},
	}
}
