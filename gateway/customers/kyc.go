package customers

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	o "svc/gateway/openapi"
	"svc/gateway/ratelimit"
	"svc/payments"
	"svc/payments/customers"
)

// KYCService is what the verification routes and the sandbox KYC page need of
// payments/customers (*customers.Service).
type KYCService interface {
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (customers.Customer, error)
	Verifications(ctx context.Context, t payments.Tenant, id uuid.UUID) ([]customers.Verification, error)
	GetVerification(ctx context.Context, t payments.Tenant, customerID, id uuid.UUID) (customers.Verification, customers.Customer, error)
	Session(ctx context.Context, environment, reference string) (customers.Session, error)
	CompleteHosted(ctx context.Context, environment, reference string, out customers.HostedOutcome) (customers.Session, bool, error)
}

var _ KYCService = (*customers.Service)(nil)

// KYCRoutes serves the status of KYC verifications (GET /v1/customers/{id}/verifications,
// .../verifications/{verification_id}) and the sandbox KYC provider's hosted page
// (/sandbox/kyc/{session}), where a tester approves or rejects a hosted session: its form
// posts the provider's outcome, which completes the verification through
// customers.CompleteHosted exactly as a live provider's callback does. The page serves
// sandbox sessions only (a live or unknown session is 404) and is limited per client
// address (it needs no credentials).
type KYCRoutes struct {
	svc      KYCService
	limiter  *ratelimit.Limiter
	perMin   int
	clientIP func(*fasthttp.RequestCtx) netip.Addr
}

// NewKYC returns the routes over svc. clientIP finds the caller's address for the page's
// limit (behind trusted proxies); nil: the socket's peer.
func NewKYC(svc KYCService, clientIP func(*fasthttp.RequestCtx) netip.Addr) *KYCRoutes {
	if clientIP == nil {
		clientIP = func(ctx *fasthttp.RequestCtx) netip.Addr {
			a, _ := netip.AddrFromSlice(ctx.RemoteIP())
			return a.Unmap()
		}
	}
	return &KYCRoutes{svc: svc, limiter: ratelimit.New(nil), perMin: 60, clientIP: clientIP}
}

// SandboxKYCPath is where the sandbox KYC provider's verification URLs point, under the
// public base URL: <base>/sandbox/kyc/<session reference>.
const SandboxKYCPath = "/sandbox/kyc/"

// Register adds the routes.
func (k *KYCRoutes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/customers/{id}/verifications", protect(k.list))
	r.GET("/v1/customers/{id}/verifications/{verification_id}", protect(k.get))
	r.GET(SandboxKYCPath+"{session}", k.limited(k.page))
	r.POST(SandboxKYCPath+"{session}", k.limited(k.decide))
}

// kycVerificationJSON is a verification with when it completed.
type kycVerificationJSON struct {
	verificationJSON
	Kind string `json:"kind"` // submission or hosted
}

func kycOut(v customers.Verification, c *customers.Customer) kycVerificationJSON {
	out := kycVerificationJSON{verificationJSON: verificationOut(v, c), Kind: v.Kind}
	if out.Kind == "" {
		out.Kind = customers.KindSubmission
	}
	return out
}

// verifications is the KYC resource for the generic handlers of api: a bad customer id is the
// customer's 404; the service calls of a request take at most 10 s.
var verifications = api.Resource{NotFound: customers.ErrNotFound, Timeout: 10 * time.Second}

func (k *KYCRoutes) list(ctx *fasthttp.RequestCtx) {
	api.Get(ctx, verifications, k.verifications, kycListOut)
}

// verifications reads the customer first (another tenant's customer is 404, not an empty
// list), then its verifications.
func (k *KYCRoutes) verifications(c context.Context, t payments.Tenant, id uuid.UUID) ([]customers.Verification, error) {
	if _, err := k.svc.Get(c, t, id); err != nil {
		return nil, err
	}
	return k.svc.Verifications(c, t, id)
}

func kycListOut(vs []customers.Verification) []kycVerificationJSON {
	out := make([]kycVerificationJSON, 0, len(vs))
	for _, v := range vs {
		out = append(out, kycOut(v, nil))
	}
	return out
}

func (k *KYCRoutes) get(ctx *fasthttp.RequestCtx) {
	t, id, ok := api.Target(ctx, verifications.NotFound)
	if !ok {
		return
	}
	vid, ok := api.PathUUID(ctx, "verification_id", customers.ErrVerificationNotFound)
	if !ok {
		return
	}
	c, cancel := verifications.Context(ctx)
	defer cancel()
	v, cu, err := k.svc.GetVerification(c, t, id, vid)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, kycOut(v, &cu))
}

// --- the sandbox KYC provider's hosted page ---

func (k *KYCRoutes) limited(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		d := k.limiter.Take(ratelimit.AddrKey("kyc:", k.clientIP(ctx)), k.perMin)
		if d.Allowed {
			next(ctx)
			return
		}
		d.SetHeaders(ctx)
		render(ctx, kycPage{Status: http.StatusTooManyRequests, Heading: "Too many requests",
			Message: "Please wait " + strconv.Itoa(max(1, ratelimit.CeilSeconds(d.RetryAfter))) + " seconds and try again."})
	}
}

type kycPage struct {
	Status    int
	Heading   string
	Message   string
	Session   string
	Tier      int
	Name      string
	Pending   bool
	Result    string // VERIFIED, REJECTED, EXPIRED
	Reason    string
	ExpiresAt string
	Redirect  string // the merchant's redirect_url, once completed
}

var kycTemplate = template.Must(template.New("kyc").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox identity verification</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
.sandbox{background:#fff3cd;border:1px solid #e0c36a;padding:.5rem .75rem;border-radius:4px}
button{font-size:1rem;padding:.5rem 1rem;margin-right:.5rem}input{font-size:1rem;width:100%;margin:.25rem 0 1rem}</style></head>
<body>
<p class="sandbox">Sandbox: this page simulates the identity provider. Nothing is checked.</p>
{{if .Heading}}<h1>{{.Heading}}</h1><p>{{.Message}}</p>{{else}}
<h1>Tier {{.Tier}} verification</h1>
<p>Customer: <strong>{{.Name}}</strong></p>
{{if .Pending}}
<p>Session expires at {{.ExpiresAt}} (UTC).</p>
<form method="post" action="/sandbox/kyc/{{.Session}}">
<label for="reason">Reason (for a rejection)</label>
<input id="reason" name="reason" maxlength="500" placeholder="document unreadable">
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="reject" id="reject">Reject</button>
</form>
{{else}}
<p id="result">Result: <strong>{{.Result}}</strong>{{if .Reason}} ({{.Reason}}){{end}}</p>
{{if .Redirect}}<p><a id="return" href="{{.Redirect}}">Return to the merchant</a></p>{{else}}<p>You can close this page.</p>{{end}}
{{end}}{{end}}
</body></html>
`))

func render(ctx *fasthttp.RequestCtx, p kycPage) {
	var b strings.Builder
	if err := kycTemplate.Execute(&b, p); err != nil {
		slog.Error("sandbox kyc page", "error", err)
		ctx.Error("internal error", http.StatusInternalServerError)
		return
	}
	if p.Status == 0 {
		p.Status = http.StatusOK
	}
	ctx.SetStatusCode(p.Status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("X-Frame-Options", "DENY")
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	ctx.SetBodyString(b.String())
}

func renderError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, customers.ErrSessionNotFound) || errors.Is(err, customers.ErrNotFound):
		render(ctx, kycPage{Status: http.StatusNotFound, Heading: "Verification not found",
			Message: "There is no sandbox verification at this address."})
	case errors.Is(err, customers.ErrSessionExpired):
		render(ctx, kycPage{Status: http.StatusUnprocessableEntity, Heading: "Verification expired",
			Message: "This verification session has expired. Ask the merchant to start a new one."})
	case api.Unavailable(err) != nil:
		ctx.Response.Header.Set("Retry-After", "2")
		render(ctx, kycPage{Status: http.StatusServiceUnavailable, Heading: "Temporarily unavailable",
			Message: "Please try again in a moment."})
	default:
		slog.Error("sandbox kyc page", "error", err)
		render(ctx, kycPage{Status: http.StatusInternalServerError, Heading: "Something went wrong",
			Message: "Please try again in a moment."})
	}
}

func sessionOf(ctx *fasthttp.RequestCtx) string {
	s, _ := ctx.UserValue("session").(string)
	return s
}

func sessionPage(ss customers.Session) kycPage {
	p := kycPage{Session: ss.ProviderReference, Tier: ss.Tier, Name: ss.Customer.FirstName,
		Pending: ss.Status == customers.Pending, Result: ss.Status, Reason: ss.Reason}
	if !p.Pending {
		p.Redirect = ss.RedirectURL
	}
	if ss.ExpiresAt != nil {
		p.ExpiresAt = ss.ExpiresAt.UTC().Format("2006-01-02 15:04")
	}
	return p
}

// page is GET /sandbox/kyc/{session}: the session with approve and reject buttons, or its
// result once completed.
func (k *KYCRoutes) page(ctx *fasthttp.RequestCtx) {
	c, cancel := context.WithTimeout(api.Ctx(ctx), 10*time.Second)
	defer cancel()
	ss, err := k.svc.Session(c, "sandbox", sessionOf(ctx))
	if err != nil {
		renderError(ctx, err)
		return
	}
	render(ctx, sessionPage(ss))
}

// decide is POST /sandbox/kyc/{session} (form: decision approve|reject, reason): the
// sandbox provider's callback. A repeat changes nothing and shows the first outcome.
func (k *KYCRoutes) decide(ctx *fasthttp.RequestCtx) {
	decision := string(ctx.PostArgs().Peek("decision"))
	if decision != "approve" && decision != "reject" {
		render(ctx, kycPage{Status: http.StatusBadRequest, Heading: "Choose approve or reject",
			Message: "The form must say decision=approve or decision=reject."})
		return
	}
	reason := strings.TrimSpace(string(ctx.PostArgs().Peek("reason")))
	if len(reason) > 500 {
		reason = strings.ToValidUTF8(reason[:500], "")
	}
	if decision == "reject" && reason == "" {
		reason = "rejected in the sandbox"
	}
	c, cancel := context.WithTimeout(api.Ctx(ctx), 10*time.Second)
	defer cancel()
	session := sessionOf(ctx)
	if _, _, err := k.svc.CompleteHosted(c, "sandbox", session, customers.HostedOutcome{Approved: decision == "approve", Reason: reason}); err != nil {
		renderError(ctx, err)
		return
	}
	ctx.Redirect(SandboxKYCPath+session, http.StatusSeeOther)
}

// Docs documents the verification routes (the sandbox page is HTML, outside /v1).
func (k *KYCRoutes) Docs() []o.Op {
	v := o.Named("CustomerVerification", o.Obj(map[string]o.Schema{
		"id":               o.Nullable(o.UUID("")),
		"customer_id":      o.UUID(""),
		"kind":             o.Enum("submission", "hosted"),
		"tier":             o.Enum("TIER_1", "TIER_2"),
		"status":           o.Enum(customers.Pending, customers.Verified, customers.Rejected, customers.Expired),
		"reason":           o.Nullable(o.Str("why it was rejected")),
		"kyc_tier":         o.Enum("TIER_0", "TIER_1", "TIER_2"),
		"customer":         customerSchema,
		"verification_url": o.Str("hosted flows only"),
		"expires_at":       o.Time("hosted flows only: when the session expires"),
		"created_at":       o.Time(""),
		"bank_account":     maskedAccountSchema,
	}, "customer_id", "kind", "tier", "status", "created_at"))
	page := func(d string) o.Response {
		return o.Response{Description: d, ContentType: "text/html", Data: o.Str("")}
	}
	return []o.Op{
		{Method: "GET", Path: SandboxKYCPath + "{session}", Tag: "customers", Public: true, Summary: "Sandbox KYC provider's hosted page (HTML)",
			Description: "Where a sandbox hosted flow's verification_url points (under --public-base-url): the session with approve and " +
				"reject buttons, or its result. Sandbox sessions only. Limited per client address (60 a minute): 429 page with Retry-After above it.",
			Responses: map[int]o.Response{200: page("the page"), 404: page("no sandbox session with this reference"), 429: page("too many requests")}},
		{Method: "POST", Path: SandboxKYCPath + "{session}", Tag: "customers", Public: true, Summary: "Approve or reject a sandbox KYC session (form post)",
			Description: "Form fields decision (approve or reject) and reason (optional, for a rejection). This is the sandbox provider's " +
				"callback: the verification becomes VERIFIED or REJECTED, the customer's tier and the customer.tier1_verified, " +
				"customer.tier2_verified or customer.tier2_rejected events follow, once; a repeat changes nothing. 303 back to the page.",
			Responses: map[int]o.Response{303: {Description: "to the page", ContentType: "text/html"}, 400: page("decision missing"),
				404: page("no sandbox session with this reference"), 422: page("the session expired"), 429: page("too many requests")}},
		{Method: "GET", Path: "/v1/customers/{id}/verifications", Tag: "customers", Summary: "The customer's KYC verifications",
			Description: "Every submission and hosted flow, newest first. A hosted flow is PENDING until the provider's outcome " +
				"(VERIFIED or REJECTED) and EXPIRED once its session expired without one.",
			Responses: map[int]o.Response{200: {Description: "the verifications", Data: o.Arr(v)}},
			Errors:    []string{api.CodeNotFound}},
		{Method: "GET", Path: "/v1/customers/{id}/verifications/{verification_id}", Tag: "customers", Summary: "One KYC verification's status",
			Description: "Poll this after sending the customer to a hosted flow's verification_url (or wait for the " +
				"customer.tier1_verified, customer.tier2_verified and customer.tier2_rejected webhooks).",
			Responses: map[int]o.Response{200: {Description: "the verification", Data: v}},
			Errors:    []string{api.CodeNotFound}},
	}
}
