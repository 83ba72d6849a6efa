package auth

import (
	"sort"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/identity"
)

// access is what one route asks of its caller.
type access struct {
	need identity.Scope // scopes an API key must hold (bearer tokens hold all)
	// merchantWide: the route changes settings shared by both environments (password,
	// profile, merchant KYC, IP whitelist). A sandbox key may not: bearer token or live key.
	merchantWide bool
	public       bool // not behind authentication (the public /v1/auth routes, hosted pages, system routes)
	selfAuth     bool // not behind the protect middleware but authenticates itself (the WebSocket upgrade)
}

var (
	read     = access{need: identity.ScopeRead}
	trade    = access{need: identity.ScopeTrade}
	payments = access{need: identity.ScopePayments}
	withdraw = access{need: identity.ScopeWithdraw}
	// full: key management. A key with fewer scopes could otherwise mint a key with more.
	full    = access{need: identity.AllScopes}
	account = access{need: identity.AllScopes, merchantWide: true}
	public  = access{public: true}
)

// routeAccess maps every route of the server (path template, then method) to what it asks
// of the caller. TestEveryRouteHasAScope registers every route set and checks this table
// against the router both ways: a protected route needs an entry with a scope, an
// unprotected one must be marked public. A protected route missing here is refused to any
// key without all four scopes (fail closed) and logged.
var routeAccess = map[string]map[string]access{
	// system routes (gateway)
	"/health": {"GET": public}, "/ready": {"GET": public}, "/v1/health": {"GET": public}, "/v1/ready": {"GET": public},
	"/metrics": {"GET": public}, "/v1/openapi.json": {"GET": public},

	// identity and access (this package)
	"/v1/auth/register": {"POST": public}, "/v1/auth/verify-email": {"POST": public}, "/v1/auth/resend-otp": {"POST": public},
	"/v1/auth/login": {"POST": public}, "/v1/auth/refresh": {"POST": public}, "/v1/auth/logout": {"POST": public},
	"/v1/auth/forgot-password": {"POST": public}, "/v1/auth/reset-password": {"POST": public},
	"/v1/auth/me":              {"GET": read},
	"/v1/auth/me/password":     {"PATCH": account},
	"/v1/merchant/profile":     {"PATCH": account},
	"/v1/merchant/kyc":         {"POST": account},
	whitelistPath:              {"GET": read, "PUT": account},
	"/v1/api-keys":             {"GET": read, "POST": full},
	"/v1/api-keys/{id}/revoke": {"PATCH": full},
	"/v1/api-keys/{id}":        {"DELETE": full},

	// trading and market data; the WebSocket authenticates itself (private channels: read)
	"/v1/trading/orders":                                {"GET": read, "POST": trade, "DELETE": trade},
	"/v1/trading/orders/{id}":                           {"GET": read, "DELETE": trade, "PATCH": trade},
	"/v1/trading/orders/by-client-id/{client_order_id}": {"GET": read, "DELETE": trade, "PATCH": trade},
	"/v1/trading/orders/countdown-cancel-all":           {"POST": trade},
	"/v1/trading/trades":                                {"GET": read},
	"/v1/trading/balances":                              {"GET": read},
	"/v1/trading/sandbox/fund":                          {"POST": trade},
	"/v1/trading/market/pairs":                          {"GET": public}, // market data needs no credentials
	"/v1/trading/market/orderbook":                      {"GET": public},
	"/v1/trading/market/ticker":                         {"GET": public},
	"/v1/trading/market/klines":                         {"GET": public},
	"/v1/ws":                                            {"GET": {need: identity.ScopeRead, selfAuth: true}},
	"/v1/partners/{provider}/events":                    {"POST": public}, // partners sign each notification (issue 19)

	// customers and virtual accounts
	"/v1/customers":                          {"GET": read, "POST": payments},
	"/v1/customers/{id}":                     {"GET": read, "PATCH": payments},
	"/v1/customers/{id}/balance":             {"GET": read},
	"/v1/customers/{id}/ledger":              {"GET": read},
	"/v1/customers/{id}/crypto-wallets":      {"GET": read},
	"/v1/customers/{id}/crypto-wallet":       {"POST": payments},
	"/v1/customers/{id}/crypto-funding":      {"POST": payments},
	"/v1/customers/{id}/kyc/initiate":        {"POST": payments},
	"/v1/customers/{id}/tier1-verification":  {"POST": payments},
	"/v1/customers/{id}/tier2-kyc/initiate":  {"POST": payments},
	"/v1/customers/{id}/tier2-verification":  {"POST": payments},
	"/v1/customers/{id}/ngn-virtual-account": {"GET": read, "POST": payments},
	"/v1/customers/{id}/virtual-accounts":    {"GET": read},
	"/v1/virtual-accounts":                   {"GET": read},
	"/v1/virtual-accounts/{id}":              {"GET": read},

	// KYC verification status and the sandbox KYC provider's hosted page (issue 19)
	"/v1/customers/{id}/verifications":                   {"GET": read},
	"/v1/customers/{id}/verifications/{verification_id}": {"GET": read},
	"/sandbox/kyc/{session}":                             {"GET": public, "POST": public}, // the sandbox KYC provider's hosted page

	// money in
	"/v1/payments/rates":                         {"GET": read},
	"/v1/payments/onramps":                       {"GET": read, "POST": payments},
	"/v1/payments/onramps/{id}":                  {"GET": read},
	"/v1/payments/deposits":                      {"GET": read},
	"/v1/payments/deposits/{id}":                 {"GET": read},
	"/v1/payments/sandbox/deposits":              {"POST": payments},
	"/v1/payments/sandbox/crypto-deposits":       {"POST": payments},
	"/v1/payments/sandbox/deposits/{id}/clear":   {"POST": payments},
	"/v1/payments/sandbox/deposits/{id}/reject":  {"POST": payments},
	"/v1/payments/sandbox/deposits/{id}/reverse": {"POST": payments},
	"/v1/payments/merchant/balance":              {"GET": read},
	"/v1/payments/merchant/balance/transfer":     {"POST": payments},
	"/v1/payments/merchant/balance/transfers":    {"GET": read},
	"/v1/payments/merchant/funding":              {"GET": read},

	// money out
	"/v1/payments/withdrawals":      {"GET": read, "POST": withdraw},
	"/v1/payments/withdrawals/{id}": {"GET": read},
	"/v1/payments/offramps":         {"GET": read, "POST": withdraw},
	"/v1/payments/offramps/{id}":    {"GET": read},
	"/v1/payments/transfers":        {"GET": read, "POST": withdraw},
	"/v1/payments/transfers/{id}":   {"GET": read},
	"/v1/recipients":                {"GET": read, "POST": withdraw},
	"/v1/recipients/{id}":           {"GET": read, "DELETE": withdraw},

	// commerce; the hosted pages are public
	"/v1/products":                              {"GET": read, "POST": payments},
	"/v1/products/{id}":                         {"GET": read, "PATCH": payments, "DELETE": payments},
	"/v1/invoices":                              {"GET": read, "POST": payments},
	"/v1/invoices/{id}":                         {"GET": read, "PATCH": payments, "DELETE": payments},
	"/v1/invoices/{id}/line-items":              {"POST": payments},
	"/v1/invoices/{id}/line-items/{lineItemId}": {"DELETE": payments},
	"/v1/invoices/{id}/send":                    {"POST": payments},
	"/v1/checkout-links":                        {"GET": read, "POST": payments},
	"/v1/checkout-links/{id}":                   {"GET": read, "PATCH": payments, "DELETE": payments},
	"/pay/{slug}":                               {"GET": public},
	"/pay/{slug}/status":                        {"GET": public},
	"/pay/{slug}/simulate":                      {"POST": public},
	"/pay/{slug}/transfer":                      {"POST": public},
	"/checkout-assets/{file}":                   {"GET": public},

	// webhooks
	"/v1/webhooks/endpoints":                    {"GET": read, "POST": payments},
	"/v1/webhooks/endpoints/{id}":               {"GET": read, "PATCH": payments, "DELETE": payments},
	"/v1/webhooks/endpoints/{id}/rotate-secret": {"POST": payments},
	"/v1/webhooks/endpoints/{id}/test":          {"POST": payments},
	"/v1/webhooks/logs":                         {"GET": read},
	"/v1/events":                                {"GET": read},
	"/v1/events/{id}":                           {"GET": read},
	"/v1/events/{id}/resend":                    {"POST": payments},
}

// routeOf returns what the matched route asks; ok is false for a route missing from the
// table (treated as needing every scope).
func routeOf(ctx *fasthttp.RequestCtx) (access, string, bool) {
	path, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
	if path == "" {
		path = string(ctx.Path()) // a handler called without the router (tests)
	}
	a, ok := routeAccess[path][string(ctx.Method())]
	if !ok || a.public {
		return access{need: identity.AllScopes}, path, false
	}
	return a, path, true
}

// RouteScopes checks the scope table against the server's routes (method -> paths) and
// which of them go through the protect middleware. It lists, as "METHOD path: problem",
// protected routes the table misses, unprotected ones it does not mark public (or
// self-authenticating), public ones served behind authentication, and table entries no
// route serves.
func RouteScopes(routes map[string][]string, protected func(method, path string) bool) []string {
	var out []string
	routed := map[string]bool{}
	for method, paths := range routes {
		for _, p := range paths {
			routed[method+" "+p] = true
		}
	}
	for p, methods := range routeAccess {
		for m := range methods {
			if !routed[m+" "+p] {
				out = append(out, m+" "+p+": in the scope table but not routed")
			}
		}
	}
	for method, paths := range routes {
		for _, p := range paths {
			a, ok := routeAccess[p][method]
			prot := protected(method, p)
			switch {
			case !ok:
				out = append(out, method+" "+p+": no scope")
			case prot && a.public:
				out = append(out, method+" "+p+": protected but marked public")
			case !prot && !a.public && !a.selfAuth:
				out = append(out, method+" "+p+": public but given a scope")
			}
		}
	}
	sort.Strings(out)
	return out
}

// RequiredScope is what an API key needs for a route ("" for public routes and routes
// outside the table): the gateway writes it into the OpenAPI document (x-required-scope).
func (s *Service) RequiredScope(method, path string) string { return requiredScope(method, path) }

func requiredScope(method, path string) string {
	a, ok := routeAccess[path][method]
	if !ok || a.public {
		return ""
	}
	if a.need == identity.AllScopes {
		if a.merchantWide {
			return "all scopes, and a bearer token or live key (never a sandbox key)"
		}
		return "all scopes"
	}
	return a.need.String()
}

// authorize applies a route's requirements to an identified caller.
func (s *Service) authorize(ctx *fasthttp.RequestCtx, p api.Principal, scopes identity.Scope) error {
	a, path, known := routeOf(ctx)
	if !known {
		if _, seen := s.unscoped.LoadOrStore(string(ctx.Method())+" "+path, true); !seen {
			s.log.Warn("route missing from the scope table: refused to keys without every scope", "method", string(ctx.Method()), "route", path)
		}
	}
	if p.Method != api.ByAPIKey {
		return nil
	}
	if a.merchantWide && p.Environment == api.Sandbox {
		return errLiveCredentialRequired
	}
	if !scopes.Has(a.need) {
		return insufficientScope(a.need, scopes)
	}
	return nil
}

func insufficientScope(need, have identity.Scope) error {
	what := "every scope (" + identity.AllScopes.String() + ")"
	if need != identity.AllScopes {
		what = "scope " + need.String()
	}
	return api.NewError(api.CodeInsufficientScope, "this API key lacks "+what+" for this route; it holds "+have.String())
}

// errLiveCredentialRequired refuses a sandbox key on a route that changes what the live
// environment shares (password, profile, merchant KYC, IP whitelist).
var errLiveCredentialRequired = api.NewError(api.CodeLiveCredRequired, "a sandbox key cannot change merchant-wide settings (password, profile, KYC, IP whitelist); use a bearer token or a live key")
