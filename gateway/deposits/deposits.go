// Package deposits is the HTTP edge of /v1/payments/deposits and the sandbox deposit
// simulation (spec "Deposits") over payments/deposits.
package deposits

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/gateway/api/shapes"
	"svc/gateway/openapi"
	"svc/payments"
	"svc/payments/deposits"
	pon "svc/payments/onramps"
)

// Service is what the handlers need; *payments/deposits.Service is one.
type Service interface {
	Simulate(ctx context.Context, t payments.Tenant, in deposits.SimulateInput) (deposits.Deposit, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (deposits.Deposit, error)
	List(ctx context.Context, t payments.Tenant, f deposits.Filter) ([]deposits.Deposit, int64, error)
	Customer(ctx context.Context, d deposits.Deposit) (*pon.Customer, error)
}

var _ Service = (*deposits.Service)(nil)

// Routes is the RouteSet of deposits.
type Routes struct {
	svc Service
	// offramps, when set, wraps the sandbox deposit handler: a body with offramp_id
	// simulates crypto arriving at an offramp (gateway/offramps Routes.Dispatch).
	offramps func(fasthttp.RequestHandler) fasthttp.RequestHandler
}

// New returns the routes over svc. offramps (nil: none) routes sandbox deposits whose body
// names offramp_id: gateway/offramps Routes.Dispatch, which answers them and passes every
// other body on.
func New(svc Service, offramps func(fasthttp.RequestHandler) fasthttp.RequestHandler) *Routes {
	return &Routes{svc: svc, offramps: offramps}
}

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.GET("/v1/payments/deposits", protect(rs.list))
	r.GET("/v1/payments/deposits/{id}", protect(rs.get))
	simulate := rs.simulate
	if rs.offramps != nil {
		simulate = rs.offramps(simulate)
	}
	r.POST("/v1/payments/sandbox/deposits", protect(simulate))
}

type simulateBody struct {
	OnrampID   string          `json:"onramp_id"`
	OfframpID  string          `json:"offramp_id"`
	ShouldFlag bool            `json:"should_flag"`
	Amount     json.RawMessage `json:"amount"`
}

func (rs *Routes) simulate(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	if t.Environment != "sandbox" {
		api.Fail(ctx, deposits.ErrSandboxOnly)
		return
	}
	var b simulateBody
	if err := api.Decode(ctx, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	var in deposits.SimulateInput
	in.ShouldFlag = b.ShouldFlag
	if b.OfframpID != "" {
		v.Add("offramp_id", "crypto deposits to offramps are not available yet; simulate an NGN deposit with onramp_id")
	} else if v.Required("onramp_id", b.OnrampID) {
		id, err := uuid.Parse(b.OnrampID)
		if v.Check(err == nil, "onramp_id", "must be an onramp id (UUID)") {
			in.OnrampID = id
		}
	}
	if len(b.Amount) > 0 && string(b.Amount) != "null" {
		if a, msg := shapes.ParseNGN(b.Amount); v.Check(msg == "", "amount", msg) {
			in.Amount = &a
		}
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := api.ContextTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := rs.svc.Simulate(c, t, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, shapes.DepositOut(d, true, nil))
}

// deposit is the deposits resource (reads bounded to 10 s) for the generic handlers of api.
var deposit = api.Resource{NotFound: deposits.ErrNotFound, Timeout: 10 * time.Second}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) {
	api.Get(ctx, deposit, rs.detail, func(d detail) shapes.DepositJSON { return shapes.DepositOut(d.Deposit, true, d.customer) })
}

// detail is a deposit with its customer, as GET /payments/deposits/{id} shows it.
type detail struct {
	deposits.Deposit
	customer *pon.Customer
}

func (rs *Routes) detail(c context.Context, t payments.Tenant, id uuid.UUID) (detail, error) {
	d, err := rs.svc.Get(c, t, id)
	if err != nil {
		return detail{}, err
	}
	cust, err := rs.svc.Customer(c, d)
	return detail{d, cust}, err
}

// statusChoices is what the status filter takes: the two summaries deposits.ExpandStatus
// knows, then every stored status.
var statusChoices = append([]string{"PENDING", "COMPLETED"}, deposits.Statuses...)

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	pg, err := api.Paging(ctx, "per_page", 20, 100)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	args := ctx.QueryArgs()
	var v api.Validator
	f := deposits.Filter{Page: pg.Page, PerPage: pg.Limit}
	if s := string(args.Peek("type")); s != "" && v.OneOf("type", s, deposits.TypeNGN, deposits.TypeCrypto) {
		f.Type = s
	}
	if s := string(args.Peek("status")); s != "" {
		f.Statuses = deposits.ExpandStatus(s)
		v.Check(f.Statuses != nil, "status", "must be one of "+strings.Join(statusChoices, ", "))
	}
	for _, name := range []string{"onramp_id", "offramp_id"} {
		if s := string(args.Peek(name)); s != "" {
			id, err := uuid.Parse(s)
			if v.Check(err == nil, name, "must be a UUID") {
				if name == "onramp_id" {
					f.OnrampID = &id
				} else {
					f.OfframpID = &id
				}
			}
		}
	}
	f.From, f.To = api.TimeRange(ctx, &v)
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	c, cancel := deposit.Context(ctx)
	defer cancel()
	ds, total, err := rs.svc.List(c, t, f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items := make([]shapes.DepositJSON, len(ds))
	for i, d := range ds {
		items[i] = shapes.DepositOut(d, false, nil)
	}
	meta := pg.Meta(total)
	api.Array(ctx, items, &meta)
}

// Docs documents every route.
func (rs *Routes) Docs() []openapi.Op {
	const tag = "deposits"
	return []openapi.Op{
		{Method: "GET", Path: "/v1/payments/deposits", Tag: tag, Summary: "List deposits",
			Description: "status also accepts PENDING (PENDING_FX or PENDING_WITHDRAWAL) and COMPLETED (SETTLED). from and to " +
				"bound created_at (inclusive).",
			Query: []openapi.Param{
				{Name: "type", In: "query", Schema: openapi.Enum(deposits.TypeNGN, deposits.TypeCrypto)},
				{Name: "status", In: "query", Schema: openapi.Enum(statusChoices...)},
				{Name: "onramp_id", In: "query", Schema: openapi.UUID("")},
				{Name: "offramp_id", In: "query", Schema: openapi.UUID("")},
				{Name: "from", In: "query", Schema: openapi.Time(api.TimeDoc)},
				{Name: "to", In: "query", Schema: openapi.Time(api.TimeDoc)},
				{Name: "page", In: "query", Schema: openapi.Int("1-indexed, default 1")},
				{Name: "per_page", In: "query", Schema: openapi.Int("1 to 100, default 20")},
			},
			Responses: map[int]openapi.Response{200: {Description: "the deposits (data is the array, paging in meta)", Data: openapi.Arr(shapes.DepositSchema(false))}},
			Errors:    []string{api.CodeValidation}},
		{Method: "GET", Path: "/v1/payments/deposits/{id}", Tag: tag, Summary: "Get a deposit with its settlement",
			Responses: map[int]openapi.Response{200: {Description: "the deposit", Data: shapes.DepositSchema(true)}},
			Errors:    []string{api.CodeNotFound}},
		{Method: "POST", Path: "/v1/payments/sandbox/deposits", Tag: tag, Summary: "Simulate an NGN deposit into an onramp (test keys only)",
			Description: "The deposit starts PENDING_FX (deposit.received) and moves on: PENDING_WITHDRAWAL, then SETTLED, both usually " +
				"as it is received, so the answer is the deposit SETTLED (ONCHAIN: PENDING_WITHDRAWAL until its send); with " +
				"should_flag it stops at FLAGGED. amount defaults to the TEMPORARY onramp's amount (another amount fails at " +
				"conversion: returned to the sender) or 10000.00 NGN for a PERMANENT onramp. With offramp_id instead of onramp_id, " +
				"amount (a decimal string in the offramp's asset) is crypto arriving at that offramp: a CRYPTO_DEPOSIT credited to " +
				"the customer (INTERNAL_BALANCE) or converted and paid out in NGN (NGN_PAYOUT; payout.completed, offramp.completed).",
			Body: openapi.Obj(map[string]openapi.Schema{
				"onramp_id":   openapi.UUID("an ACTIVE onramp"),
				"should_flag": openapi.Bool("hold for compliance review (FLAGGED)"),
				"offramp_id":  openapi.UUID("an ACTIVE offramp: simulates crypto arriving (with amount)"),
				"amount":      openapi.Schema{"type": "number", "description": "NGN received (optional)"},
			}, "onramp_id"),
			Responses: map[int]openapi.Response{201: {Description: "the deposit", Data: shapes.DepositSchema(true)}},
			Errors: []string{api.CodeValidation, api.CodeInvalidJSON, api.CodeUnsupportedMedia, api.CodeSandboxOnly,
				api.CodeNotFound, api.CodeOnrampNotActive}},
	}
}
