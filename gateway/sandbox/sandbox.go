// Package sandbox is the HTTP edge of the sandbox-only operations that drive a deposit
// through the states no other merchant route reaches (issue 11, docs/sandbox.md):
//
//	POST /v1/payments/sandbox/deposits/{id}/reverse   SETTLED -> REVERSED
//	POST /v1/payments/sandbox/deposits/{id}/clear     FLAGGED -> (lifecycle resumes) -> SETTLED
//	POST /v1/payments/sandbox/deposits/{id}/reject    FLAGGED -> FAILED (SETTLED -> REVERSED)
//
// They are what the operator does in live with `svc deposits reverse|clear|reject`; here a
// test key does it to its own sandbox deposits (a live key: 403 SANDBOX_ONLY; another
// merchant's deposit: 404). Each is idempotent (a repeat answers the deposit as it is) and
// recorded in the audit log with the merchant as actor.
package sandbox

import (
	"context"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/gateway/openapi"
	"svc/payments"
	"svc/payments/deposits"
)

// Actions is what the handlers need; *payments/operator.Deposits is one.
type Actions interface {
	Reverse(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error)
	Clear(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error)
	Reject(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error)
}

// Routes is the RouteSet of the sandbox deposit controls.
type Routes struct{ act Actions }

// New returns the routes over act.
func New(act Actions) *Routes { return &Routes{act: act} }

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/sandbox/deposits/{id}/reverse", protect(rs.handle(Actions.Reverse)))
	r.POST("/v1/payments/sandbox/deposits/{id}/clear", protect(rs.handle(Actions.Clear)))
	r.POST("/v1/payments/sandbox/deposits/{id}/reject", protect(rs.handle(Actions.Reject)))
}

type body struct {
	Reason string `json:"reason"`
}

// MaxReason is the longest reason kept.
const MaxReason = 500

func (rs *Routes) handle(fn func(Actions, context.Context, string, *payments.Tenant, uuid.UUID, string) (deposits.Outcome, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		t, ok := api.Tenant(ctx)
		if !ok {
			return
		}
		if t.Environment != "sandbox" {
			api.Fail(ctx, deposits.ErrSandboxOnly)
			return
		}
		id, ok := api.PathUUID(ctx, "id", deposits.ErrNotFound)
		if !ok {
			return
		}
		var b body
		if len(ctx.PostBody()) > 0 {
			if err := api.Decode(ctx, &b); err != nil {
				api.Fail(ctx, err)
				return
			}
		}
		if len([]rune(b.Reason)) > MaxReason {
			api.Fail(ctx, api.Invalid("reason", "must be at most 500 characters"))
			return
		}
		reason := b.Reason
		if reason == "" {
			reason = "sandbox simulation"
		}
		c, cancel := api.ContextTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := fn(rs.act, c, "merchant:"+t.MerchantID.String(), &t, id, reason)
		if err != nil {
			api.Fail(ctx, err)
			return
		}
		api.OK(ctx, shapes.DepositOut(out.Deposit, true, nil))
	}
}

// Docs documents every route.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "deposits"
	reqBody := openapi.Obj(map[string]openapi.Schema{
		"reason": openapi.Str("optional, up to 500 characters; kept in the audit log and the deposit's failure_reason"),
	})
	errs := []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia, api.CodeSandboxOnly,
		api.CodeNotFound, api.CodeInvalidState}
	ok := map[int]openapi.Response{200: {Description: "the deposit as it is after the operation", Data: shapes.DepositSchema(true)}}
	return []openapi.Op{
		{Method: "POST", Path: "/v1/payments/sandbox/deposits/{id}/reverse", Tag: tag,
			Summary: "Reverse a settled deposit (test keys only)",
			Description: "SETTLED -> REVERSED: the settled amount is debited back from the balance it was credited to (the customer's " +
				"or the merchant's; the merchant's for an on-chain settlement); what that balance no longer covers is recorded on the " +
				"merchant's receivable account. Sends deposit.failed with status REVERSED, and customer.balance.refunded when a " +
				"customer balance was debited. Reversing again changes nothing. A live key is refused (403 SANDBOX_ONLY); the " +
				"operator reverses live deposits with `svc deposits reverse`.",
			Body: reqBody, Responses: ok, Errors: errs},
		{Method: "POST", Path: "/v1/payments/sandbox/deposits/{id}/clear", Tag: tag,
			Summary: "Clear a flagged deposit after compliance review (test keys only)",
			Description: "FLAGGED -> PENDING_FX: the hold is lifted and the lifecycle resumes by itself (PENDING_WITHDRAWAL, SETTLED, " +
				"with their events). Clearing a deposit that is not held changes nothing; a FAILED or REVERSED one is 422 INVALID_STATE.",
			Body: reqBody, Responses: ok, Errors: errs},
		{Method: "POST", Path: "/v1/payments/sandbox/deposits/{id}/reject", Tag: tag,
			Summary: "Reject a flagged deposit after compliance review (test keys only)",
			Description: "FLAGGED (or still pending) -> FAILED with the NGN returned to the sender (deposit.failed); a SETTLED deposit " +
				"is reversed instead (REVERSED, as /reverse). Rejecting again changes nothing.",
			Body: reqBody, Responses: ok, Errors: errs},
	}
}
