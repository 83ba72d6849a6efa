// Package offramps is the HTTP edge of offramps (spec "Offramps"): a gateway RouteSet over
// payments/offramps, and Dispatch, which the sandbox deposit route
// (POST /payments/sandbox/deposits, owned by the deposits edge) wraps its handler with so a
// body naming offramp_id simulates crypto arriving at that offramp: the sandbox
// custodian's signed deposit.confirmed notification, taken in and processed through
// payments/partners like any partner's (Simulator).
package offramps

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	gwidem "svc/gateway/idempotency"
	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/money"
	po "svc/payments/offramps"
	"svc/payments/partners"
	"svc/payments/providers"
	"svc/payments/rates"
)

// Simulator is the sandbox custodian behind the offramp flavour of POST
// /payments/sandbox/deposits: it emits its deposit.confirmed notification for the offramp
// and takes it in through the partner path (payments/partners SandboxOfframps is one).
type Simulator interface {
	Simulate(ctx context.Context, t payments.Tenant, in partners.OfframpArrival) (po.CryptoDeposit, error)
}

// Routes is the RouteSet of /v1/payments/offramps.
type Routes struct {
	svc  *po.Service
	keys *idempotency.Keys
	sim  Simulator
	// AfterCreate, when set, runs between the service's write and the response; tests panic
	// in it to simulate the process dying in between.
	AfterCreate func()
}

// New returns the routes over svc; POST takes X-Idempotency-Key through keys. sim answers
// the sandbox offramp deposits of Dispatch (nil: they answer 503 PROVIDER_UNAVAILABLE).
func New(svc *po.Service, keys *idempotency.Keys, sim Simulator) *Routes {
	return &Routes{svc: svc, keys: keys, sim: sim}
}

// Register adds every route behind protect.
func (rs *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/payments/offramps", protect(gwidem.Middleware(rs.keys)(rs.create)))
	r.GET("/v1/payments/offramps", protect(rs.list))
	r.GET("/v1/payments/offramps/{id}", protect(rs.get))
}

type settlementJSON struct {
	Mode            string   `json:"mode"`
	RateID          *string  `json:"rate_id"`
	Rate            *string  `json:"rate"` // NGN per unit of the asset, locked (TEMPORARY)
	DestinationBank *po.Bank `json:"destination_bank"`
}

// JSON is an offramp as the API shows it.
type JSON struct {
	ID             string            `json:"id"`
	Type           string            `json:"type"`
	Status         string            `json:"status"`
	CustomerID     string            `json:"customer_id"`
	Chain          string            `json:"chain"`
	Asset          string            `json:"asset"`
	DepositAddress string            `json:"deposit_address"`
	Settlement     settlementJSON    `json:"settlement"`
	ExpiresAt      *string           `json:"expires_at"`
	Metadata       map[string]string `json:"metadata"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
}

// Out renders an offramp.
func Out(o po.Offramp) JSON {
	j := JSON{ID: o.ID.String(), Type: o.Type, Status: o.Status, CustomerID: o.CustomerID.String(), Chain: string(o.Chain),
		Asset: string(o.Asset), DepositAddress: o.DepositAddress,
		Settlement: settlementJSON{Mode: o.Settlement.Mode, DestinationBank: o.Settlement.DestinationBank},
		ExpiresAt:  api.TimePtr(o.ExpiresAt), Metadata: o.Metadata.OrEmpty(), CreatedAt: api.Time(o.CreatedAt), UpdatedAt: api.Time(o.UpdatedAt)}
	if o.Settlement.RateID != nil {
		s := o.Settlement.RateID.String()
		j.Settlement.RateID = &s
		r := rates.FormatPrice(o.Settlement.Price)
		j.Settlement.Rate = &r
	}
	return j
}

type createBody struct {
	Type     string `json:"type"`
	Customer *struct {
		CustomerID *string `json:"customer_id"`
		Email      string  `json:"email"`
		FirstName  string  `json:"first_name"`
		LastName   string  `json:"last_name"`
	} `json:"customer"`
	Chain      string `json:"chain"`
	Asset      string `json:"asset"`
	Settlement *struct {
		Mode            string   `json:"mode"`
		RateID          *string  `json:"rate_id"`
		DestinationBank *po.Bank `json:"destination_bank"`
	} `json:"settlement"`
	Metadata json.RawMessage `json:"metadata"`
}

// offramp is the offramps resource for the generic handlers of api.
var offramp = api.Resource{NotFound: po.ErrNotFound}

func (rs *Routes) create(ctx *fasthttp.RequestCtx) { api.Create(ctx, offramp, rs.createChecked, Out) }

// createChecked checks the body (400 naming every bad field), then creates; AfterCreate runs
// after the write.
func (rs *Routes) createChecked(c context.Context, t payments.Tenant, b createBody) (po.Offramp, error) {
	var v api.Validator
	in := po.CreateInput{Type: b.Type, Chain: b.Chain, Asset: b.Asset}
	if c := b.Customer; c != nil {
		in.Customer = &po.CustomerRef{ID: api.UUIDField(&v, "customer.customer_id", c.CustomerID), Email: c.Email,
			FirstName: c.FirstName, LastName: c.LastName}
		if c.CustomerID != nil && in.Customer.ID == nil { // a bad UUID still counts as given for exclusivity
			in.Customer.ID = &uuid.Nil
		}
	}
	if st := b.Settlement; st != nil {
		in.Settlement = &po.SettlementInput{Mode: st.Mode, RateID: api.UUIDField(&v, "settlement.rate_id", st.RateID),
			DestinationBank: st.DestinationBank}
		if st.RateID != nil && in.Settlement.RateID == nil {
			in.Settlement.RateID = &uuid.Nil
		}
	}
	in.Validate(&v)
	in.Metadata, _ = v.Metadata(b.Metadata, false)
	if err := v.Err(); err != nil {
		return po.Offramp{}, err
	}
	o, err := rs.svc.Create(c, t, in)
	if err == nil && rs.AfterCreate != nil {
		rs.AfterCreate()
	}
	return o, err
}

func (rs *Routes) list(ctx *fasthttp.RequestCtx) {
	p, ok := api.RequirePrincipal(ctx, "not authenticated")
	if !ok {
		return
	}
	pg, err := api.Paging(ctx, "limit", 20, 200)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	var f po.Filter
	for _, q := range []struct {
		name    string
		dst     *string
		allowed []string
	}{
		{"type", &f.Type, po.Types},
		{"chain", &f.Chain, []string{"APTOS", "BASE", "CELO", "ETHEREUM", "POLYGON", "SOLANA", "TRON"}},
		{"asset", &f.Asset, po.Assets},
		{"status", &f.Status, po.Statuses},
		{"settlement_mode", &f.Mode, po.Modes},
	} {
		if *q.dst, ok = api.Query(ctx, q.name, q.allowed...); !ok {
			return
		}
	}
	if f.Metadata, err = api.MetadataFilter(ctx); err != nil {
		api.Fail(ctx, err)
		return
	}
	f.Page, f.Limit = pg.Page, pg.Limit
	items, total, err := rs.svc.List(api.Ctx(ctx), p.Tenant(), f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.PageOf(ctx, items, Out, pg.Meta(total))
}

func (rs *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, offramp, rs.svc.Get, Out) }

// DepositJSON is a simulated crypto deposit as POST /payments/sandbox/deposits answers it.
type DepositJSON struct {
	ID             string      `json:"id"`
	Type           string      `json:"type"`
	Status         string      `json:"status"`
	OfframpID      string      `json:"offramp_id"`
	CustomerID     string      `json:"customer_id"`
	Amount         string      `json:"amount"`
	Currency       string      `json:"currency"`
	Chain          string      `json:"chain"`
	SettlementMode string      `json:"settlement_mode"`
	Rate           *string     `json:"rate"`
	AmountNGN      *string     `json:"amount_ngn"`
	Payout         *PayoutJSON `json:"payout"`
	CreatedAt      string      `json:"created_at"`
}

// PayoutJSON is an NGN payout of an offramp deposit.
type PayoutJSON struct {
	ID            string  `json:"id"`
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"`
	Status        string  `json:"status"`
	BankCode      string  `json:"bank_code"`
	AccountNumber string  `json:"account_number"`
	AccountName   string  `json:"account_name"`
	FailureReason *string `json:"failure_reason"`
	CreatedAt     string  `json:"created_at"`
	SettledAt     *string `json:"settled_at"`
}

// PayoutOut renders a payout.
func PayoutOut(p po.Payout) PayoutJSON {
	return PayoutJSON{ID: p.ID.String(), Amount: p.Amount.String(), Currency: string(money.NGN), Status: p.Status,
		BankCode: p.Bank.BankCode, AccountNumber: p.Bank.AccountNumber, AccountName: p.Bank.AccountName,
		FailureReason: api.StrPtr(p.FailureReason), CreatedAt: api.Time(p.CreatedAt), SettledAt: api.TimePtr(p.SettledAt)}
}

func depositOut(d po.CryptoDeposit) DepositJSON {
	j := DepositJSON{ID: d.ID.String(), Type: d.Type, Status: d.Status, OfframpID: d.OfframpID.String(), CustomerID: d.CustomerID.String(),
		Amount: d.Amount.String(), Currency: string(d.Amount.Asset), Chain: string(d.Chain), SettlementMode: d.Mode,
		CreatedAt: api.Time(d.CreatedAt)}
	if d.AmountNGN != nil {
		s, r := d.AmountNGN.String(), rates.FormatPrice(d.Price)
		j.AmountNGN, j.Rate = &s, &r
	}
	if d.Payout != nil {
		p := PayoutOut(*d.Payout)
		j.Payout = &p
	}
	return j
}

type simulateBody struct {
	OfframpID *string         `json:"offramp_id"`
	Amount    json.RawMessage `json:"amount"`
}

// Dispatch wraps the sandbox deposit handler of the deposits edge: a body with offramp_id
// ({offramp_id, amount: decimal string in the offramp's asset}) is a crypto deposit at that
// offramp, answered here (201 with the deposit); any other body goes to next unchanged.
// Test keys only (403 SANDBOX_ONLY).
func (rs *Routes) Dispatch(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		body := ctx.PostBody()
		if !bytes.Contains(body, []byte(`"offramp_id"`)) {
			next(ctx)
			return
		}
		var b simulateBody
		if err := api.Decode(ctx, &b); err != nil {
			api.Fail(ctx, err)
			return
		}
		if b.OfframpID == nil {
			next(ctx)
			return
		}
		rs.SimulateDeposit(ctx, *b.OfframpID, amountText(b.Amount))
	}
}

// amountText accepts the amount as a decimal string or a JSON number.
func amountText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return string(raw)
}

// SimulateDeposit answers a simulated crypto deposit of amount at offramp offrampID: the
// sandbox custodian's deposit.confirmed notification through the partner path (Simulator).
// The request's idempotency key (X-Idempotency-Key or Idempotency-Key) names the
// notification, so a repeat of the key credits once and answers the same deposit.
func (rs *Routes) SimulateDeposit(ctx *fasthttp.RequestCtx, offrampID, amount string) {
	p, ok := api.RequirePrincipal(ctx, "not authenticated")
	if !ok {
		return
	}
	if p.Environment != api.Sandbox {
		api.Fail(ctx, po.ErrSandboxOnly)
		return
	}
	id, err := uuid.Parse(offrampID)
	if err != nil {
		api.Fail(ctx, api.Invalid("offramp_id", "must be a UUID"))
		return
	}
	if rs.sim == nil {
		api.Fail(ctx, &providers.UnavailableError{Provider: "custody", Operation: "sandbox deposit"})
		return
	}
	key := string(ctx.Request.Header.Peek(gwidem.HeaderKey))
	if key == "" {
		key = string(ctx.Request.Header.Peek(gwidem.HeaderAltKey))
	}
	if len(key) > idempotency.MaxKeyLength {
		api.Fail(ctx, api.Invalid(gwidem.HeaderKey, "must be 1 to 255 characters"))
		return
	}
	c, cancel := api.ContextTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := rs.sim.Simulate(c, p.Tenant(), partners.OfframpArrival{OfframpID: id, Amount: amount, Key: key})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, depositOut(d))
}
