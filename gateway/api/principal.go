package api

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// Environment separates sandbox from live data; every row and query carries one.
type Environment string

const (
	Sandbox Environment = "sandbox"
	Live    Environment = "live"
)

// Valid reports whether e is one of the two environments.
func (e Environment) Valid() bool { return e == Sandbox || e == Live }

// AuthMethod says how a request proved who it is.
type AuthMethod string

const (
	ByAPIKey AuthMethod = "api_key"
	ByBearer AuthMethod = "bearer"
)

// Principal is the authenticated caller of a request: the tenant (merchant + environment)
// every query must be scoped by.
type Principal struct {
	MerchantID  uuid.UUID
	Environment Environment
	Method      AuthMethod
	APIKeyID    uuid.UUID // zero for bearer tokens
}

// SetPrincipal records the caller; the auth middleware is its only writer.
func SetPrincipal(ctx *fasthttp.RequestCtx, p Principal) { ctx.SetUserValue(keyPrincipal, p) }

// PrincipalOf returns the caller of an authenticated route.
func PrincipalOf(ctx *fasthttp.RequestCtx) (Principal, bool) {
	p, ok := ctx.UserValue(keyPrincipal).(Principal)
	return p, ok
}

// RequirePrincipal returns the caller of an authenticated route; when there is none it
// answers 401 UNAUTHORIZED with detail and false.
func RequirePrincipal(ctx *fasthttp.RequestCtx, detail string) (Principal, bool) {
	p, ok := PrincipalOf(ctx)
	if !ok {
		Fail(ctx, NewError(CodeUnauthorized, detail))
	}
	return p, ok
}
