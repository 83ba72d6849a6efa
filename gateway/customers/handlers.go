// Package customers serves the /v1/customers routes (records, KYC, crypto wallets and
// funding, balance and ledger) over payments/customers. The customer's virtual-account
// routes are in gateway/virtualaccounts.
package customers

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
	"svc/payments/customers"
	"svc/payments/ledger"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/providers"
)

// Service is what the handlers need of payments/customers (*customers.Service).
type Service interface {
	Create(ctx context.Context, t payments.Tenant, in customers.CreateInput) (customers.Customer, error)
	Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (customers.Customer, error)
	Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in customers.UpdateInput) (customers.Customer, error)
	List(ctx context.Context, t payments.Tenant, f customers.ListFilter) ([]customers.Customer, uuid.UUID, error)
	VerifyTier1(ctx context.Context, t payments.Tenant, id uuid.UUID, in customers.Tier1Input) (customers.Verification, customers.Customer, error)
	VerifyTier2(ctx context.Context, t payments.Tenant, id uuid.UUID, in customers.Tier2Input) (customers.Verification, customers.Customer, error)
	Initiate(ctx context.Context, t payments.Tenant, id uuid.UUID, tier int, in customers.InitiateInput) (customers.Verification, error)
	AddWallet(ctx context.Context, t payments.Tenant, id uuid.UUID, in customers.WalletInput) (customers.Wallet, error)
	Wallets(ctx context.Context, t payments.Tenant, id uuid.UUID, limit, offset int) ([]customers.Wallet, int64, error)
	CreateFunding(ctx context.Context, t payments.Tenant, id uuid.UUID, in customers.FundingInput) (customers.FundingRequest, error)
	Balance(ctx context.Context, t payments.Tenant, id uuid.UUID) (customers.Balance, error)
	Ledger(ctx context.Context, t payments.Tenant, id uuid.UUID, limit, offset int) ([]ledger.Entry, int64, error)
}

// Routes is the customers RouteSet.
type Routes struct {
	svc  Service
	idem api.Middleware
}

// New returns the routes. idem wraps the POST handlers (X-Idempotency-Key); nil: none.
func New(svc Service, idem api.Middleware) *Routes { return &Routes{svc: svc, idem: api.OrNone(idem)} }

// Register adds the routes.
func (h *Routes) Register(r *router.Router, protect func(fasthttp.RequestHandler) fasthttp.RequestHandler) {
	r.POST("/v1/customers", protect(h.idem(h.create)))
	r.GET("/v1/customers", protect(h.list))
	r.GET("/v1/customers/{id}", protect(h.get))
	r.PATCH("/v1/customers/{id}", protect(h.update))
	r.POST("/v1/customers/{id}/tier1-verification", protect(h.idem(h.tier1)))
	r.POST("/v1/customers/{id}/tier2-verification", protect(h.idem(h.tier2)))
	r.POST("/v1/customers/{id}/kyc/initiate", protect(h.idem(h.initiate1)))
	r.POST("/v1/customers/{id}/tier2-kyc/initiate", protect(h.idem(h.initiate2)))
	r.POST("/v1/customers/{id}/crypto-wallet", protect(h.idem(h.addWallet)))
	r.GET("/v1/customers/{id}/crypto-wallets", protect(h.wallets))
	r.POST("/v1/customers/{id}/crypto-funding", protect(h.idem(h.funding)))
	r.GET("/v1/customers/{id}/balance", protect(h.balance))
	r.GET("/v1/customers/{id}/ledger", protect(h.ledger))
}

type customerJSON struct {
	ID        string            `json:"id"`
	Email     string            `json:"email"`
	FirstName string            `json:"first_name"`
	LastName  string            `json:"last_name"`
	KYCTier   string            `json:"kyc_tier"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
}

func customerOut(c customers.Customer) customerJSON {
	return customerJSON{c.ID.String(), c.Email, c.FirstName, c.LastName, c.KYCTier, c.Metadata.OrEmpty(), api.Time(c.CreatedAt), api.Time(c.UpdatedAt)}
}

// customer is the customers resource for the generic handlers of api: every route under
// /v1/customers/{id} answers an id naming none of the caller's customers with its 404.
var customer = api.Resource{NotFound: customers.ErrNotFound}

type createBody struct {
	Email     string          `json:"email"`
	FirstName string          `json:"first_name"`
	LastName  string          `json:"last_name"`
	Metadata  json.RawMessage `json:"metadata"`
}

func (h *Routes) create(ctx *fasthttp.RequestCtx) {
	api.Create(ctx, customer, h.createChecked, customerOut)
}

// createChecked checks the body (400 naming every bad field), then creates.
func (h *Routes) createChecked(c context.Context, t payments.Tenant, b createBody) (customers.Customer, error) {
	var v api.Validator
	if v.Required("email", b.Email) {
		v.Email("email", b.Email)
	}
	v.Length("first_name", b.FirstName, 1, 100)
	v.Length("last_name", b.LastName, 1, 100)
	md, _ := v.Metadata(b.Metadata, false)
	if err := v.Err(); err != nil {
		return customers.Customer{}, err
	}
	return h.svc.Create(c, t, customers.CreateInput{Email: b.Email, FirstName: b.FirstName, LastName: b.LastName, Metadata: md})
}

func (h *Routes) get(ctx *fasthttp.RequestCtx) { api.Get(ctx, customer, h.svc.Get, customerOut) }

type updateBody struct {
	FirstName *string         `json:"first_name"`
	LastName  *string         `json:"last_name"`
	Metadata  json.RawMessage `json:"metadata"`
}

func (h *Routes) update(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, customer, h.updateChecked, customerOut)
}

// updateChecked checks the body, then changes the customer.
func (h *Routes) updateChecked(c context.Context, t payments.Tenant, id uuid.UUID, b updateBody) (customers.Customer, error) {
	var v api.Validator
	md, hasMD := v.Metadata(b.Metadata, true)
	if b.FirstName == nil && b.LastName == nil && !hasMD {
		v.Add("first_name", "at least one of first_name, last_name and metadata is required")
	}
	if b.FirstName != nil {
		v.Length("first_name", *b.FirstName, 1, 100)
	}
	if b.LastName != nil {
		v.Length("last_name", *b.LastName, 1, 100)
	}
	if err := v.Err(); err != nil {
		return customers.Customer{}, err
	}
	if hasMD && md == nil {
		md = metadata.Metadata{} // {}: nothing to change, but the field was given
	}
	return h.svc.Update(c, t, id, customers.UpdateInput{FirstName: b.FirstName, LastName: b.LastName, Metadata: md})
}

func (h *Routes) list(ctx *fasthttp.RequestCtx) {
	t, ok := api.Tenant(ctx)
	if !ok {
		return
	}
	cp, err := api.Cursor(ctx, 20, 200)
	var v api.Validator
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	f := customers.ListFilter{Limit: cp.Limit, Email: string(ctx.QueryArgs().Peek("email"))}
	if cp.After != "" {
		after, err := uuid.Parse(cp.After)
		if v.Check(err == nil, "cursor", "is not a cursor returned by this API") {
			f.After = after
		}
	}
	if tier := string(ctx.QueryArgs().Peek("kyc_tier")); tier != "" {
		if tier == "UNVERIFIED" {
			tier = customers.Tier0
		}
		if v.OneOf("kyc_tier", tier, customers.Tier0, customers.Tier1, customers.Tier2) {
			f.KYCTier = tier
		}
	}
	md, err := api.MetadataFilter(ctx)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	f.Metadata = md
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	cs, next, err := h.svc.List(api.Ctx(ctx), t, f)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	items := make([]customerJSON, len(cs))
	for i, c := range cs {
		items[i] = customerOut(c)
	}
	var nextCursor *string
	if next != uuid.Nil {
		s := api.EncodeCursor(next.String())
		nextCursor = &s
	}
	api.OK(ctx, map[string]any{"items": items, "next_cursor": nextCursor})
}

// --- KYC ---

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(s) <= 2048
}

func date(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

type verificationJSON struct {
	ID              *string       `json:"id"`
	CustomerID      string        `json:"customer_id"`
	Tier            string        `json:"tier"`
	Status          string        `json:"status"`
	Reason          *string       `json:"reason"`
	KYCTier         string        `json:"kyc_tier,omitempty"`
	Customer        *customerJSON `json:"customer,omitempty"`
	VerificationURL *string       `json:"verification_url,omitempty"`
	ExpiresAt       *string       `json:"expires_at,omitempty"`
	CreatedAt       string        `json:"created_at"`
	// BankAccount is the bank account a hosted flow was started with, masked.
	BankAccount *maskedAccountJSON `json:"bank_account,omitempty"`
}

// maskedAccountJSON is identity evidence as it is kept: the bank and the account number's
// last 4 digits.
type maskedAccountJSON struct {
	BankCode           string `json:"bank_code"`
	AccountNumberLast4 string `json:"account_number_last4"`
}

func verificationOut(v customers.Verification, c *customers.Customer) verificationJSON {
	out := verificationJSON{CustomerID: v.CustomerID.String(), Tier: "TIER_1", Status: v.Status, Reason: api.StrPtr(v.Reason),
		VerificationURL: api.StrPtr(v.VerificationURL), ExpiresAt: api.TimePtr(v.ExpiresAt), CreatedAt: api.Time(v.CreatedAt)}
	if v.Tier == 2 {
		out.Tier = "TIER_2"
	}
	if v.ID != uuid.Nil {
		s := v.ID.String()
		out.ID = &s
	}
	if v.BankCode != "" || v.AccountLast4 != "" {
		out.BankAccount = &maskedAccountJSON{BankCode: v.BankCode, AccountNumberLast4: v.AccountLast4}
	}
	if c != nil {
		co := customerOut(*c)
		out.Customer, out.KYCTier = &co, c.KYCTier
	}
	return out
}

// verified is what a verification answers: the verification and the customer after it.
type verified struct {
	v customers.Verification
	c customers.Customer
}

func verifiedOut(x verified) verificationJSON { return verificationOut(x.v, &x.c) }

type tier1Body struct {
	BVN      string `json:"bvn"`
	ImageURL string `json:"image_url"`
}

func (h *Routes) tier1(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, customer, h.tier1Checked, verifiedOut)
}

// tier1Checked checks the body, then verifies.
func (h *Routes) tier1Checked(c context.Context, t payments.Tenant, id uuid.UUID, b tier1Body) (verified, error) {
	var v api.Validator
	if v.Required("bvn", b.BVN) {
		v.Check(len(b.BVN) == 11 && digitsOnly(b.BVN), "bvn", "must be exactly 11 digits")
	}
	if v.Required("image_url", b.ImageURL) {
		v.Check(httpURL(b.ImageURL), "image_url", "must be an http(s) URL")
	}
	if err := v.Err(); err != nil {
		return verified{}, err
	}
	ver, cu, err := h.svc.VerifyTier1(c, t, id, customers.Tier1Input{BVN: b.BVN, ImageURL: b.ImageURL})
	return verified{ver, cu}, err
}

type tier2Address struct {
	StreetLine1 string `json:"street_line_1"`
	StreetLine2 string `json:"street_line_2,omitempty"`
	City        string `json:"city"`
	Subdivision string `json:"subdivision"`
	PostalCode  string `json:"postal_code"`
	Country     string `json:"country"`
}

type tier2ID struct {
	Type           string `json:"type"`
	IssuingCountry string `json:"issuing_country"`
	Number         string `json:"number,omitempty"`
	Expiration     string `json:"expiration,omitempty"`
	ImageFront     string `json:"image_front"`
	ImageBack      string `json:"image_back,omitempty"`
}

type tier2Doc struct {
	File     string   `json:"file"`
	Purposes []string `json:"purposes"`
}

type tier2Body struct {
	ResidentialAddress         *tier2Address `json:"residential_address"`
	Nationality                string        `json:"nationality"`
	BirthDate                  string        `json:"birth_date"`
	IdentifyingInformation     []tier2ID     `json:"identifying_information"`
	SourceOfFunds              string        `json:"source_of_funds"`
	AccountPurpose             string        `json:"account_purpose"`
	ExpectedMonthlyPaymentsUSD string        `json:"expected_monthly_payments_usd"`
	ActingAsIntermediary       *bool         `json:"acting_as_intermediary"`
	EmploymentStatus           string        `json:"employment_status"`
	MostRecentOccupation       string        `json:"most_recent_occupation,omitempty"`
	Documents                  []tier2Doc    `json:"documents,omitempty"`
}

// Enumerations of the tier 2 body (spec "Customers").
var (
	IDTypes         = []string{"passport", "drivers_license", "national_id"}
	SourcesOfFunds  = []string{"company_funds", "ecommerce_reseller", "gambling_proceeds", "gifts", "government_benefits", "inheritance", "investments_loans", "pension_retirement", "salary", "sale_of_assets_real_estate", "savings", "someone_elses_funds"}
	AccountPurposes = []string{"charitable_donations", "ecommerce_retail_payments", "investment_purposes", "operating_a_company", "other", "payments_to_friends_or_family_abroad", "personal_or_living_expenses", "protect_wealth", "purchase_goods_and_services", "receive_payment_for_freelancing", "receive_salary"}
	MonthlyPayments = []string{"0_4999", "5000_9999", "10000_49999", "50000_plus"}
	Employment      = []string{"employed", "homemaker", "retired", "self_employed", "student", "unemployed"}
	Occupations     = []string{"BUSINESS_ADMIN", "STEM", "HEALTHCARE_SOCIAL", "EDUCATION_ARTS_MEDIA", "SERVICE_PUBLIC_SAFETY", "TRADES_LABOR"}
	DocPurposes     = []string{"proof_of_address", "proof_of_source_of_funds"}
)

func validateTier2(b *tier2Body) error {
	var v api.Validator
	str := func(field, val string) bool { return v.Length(field, val, 1, 256) }
	country := func(field, val string) {
		if v.Required(field, val) {
			v.Check(alpha3[val], field, "must be an ISO 3166-1 alpha-3 country code")
		}
	}
	if a := b.ResidentialAddress; a == nil {
		v.Add("residential_address", "is required")
	} else {
		str("residential_address.street_line_1", a.StreetLine1)
		if a.StreetLine2 != "" {
			v.Length("residential_address.street_line_2", a.StreetLine2, 1, 256)
		}
		str("residential_address.city", a.City)
		str("residential_address.subdivision", a.Subdivision)
		v.Length("residential_address.postal_code", a.PostalCode, 1, 32)
		country("residential_address.country", a.Country)
	}
	country("nationality", b.Nationality)
	if v.Required("birth_date", b.BirthDate) {
		bd, err := time.Parse("2006-01-02", b.BirthDate)
		v.Check(err == nil && bd.Before(time.Now()) && bd.Year() >= 1900, "birth_date", "must be a past date as YYYY-MM-DD")
	}
	if len(b.IdentifyingInformation) == 0 {
		v.Add("identifying_information", "must list at least one identity document")
	}
	for i, d := range b.IdentifyingInformation {
		p := "identifying_information[" + itoa(i) + "]."
		if v.Required(p+"type", d.Type) {
			v.OneOf(p+"type", d.Type, IDTypes...)
		}
		country(p+"issuing_country", d.IssuingCountry)
		if d.Number != "" {
			v.Length(p+"number", d.Number, 1, 64)
		}
		if d.Expiration != "" {
			v.Check(date(d.Expiration), p+"expiration", "must be a date as YYYY-MM-DD")
		}
		if v.Required(p+"image_front", d.ImageFront) {
			v.Check(httpURL(d.ImageFront), p+"image_front", "must be an http(s) URL")
		}
		if d.ImageBack != "" {
			v.Check(httpURL(d.ImageBack), p+"image_back", "must be an http(s) URL")
		}
	}
	enum := func(field, val string, allowed []string) {
		if v.Required(field, val) {
			v.OneOf(field, val, allowed...)
		}
	}
	enum("source_of_funds", b.SourceOfFunds, SourcesOfFunds)
	enum("account_purpose", b.AccountPurpose, AccountPurposes)
	enum("expected_monthly_payments_usd", b.ExpectedMonthlyPaymentsUSD, MonthlyPayments)
	v.Check(b.ActingAsIntermediary != nil, "acting_as_intermediary", "is required")
	enum("employment_status", b.EmploymentStatus, Employment)
	if b.MostRecentOccupation != "" { // missing: the KYC provider decides (the sandbox rejects)
		v.OneOf("most_recent_occupation", b.MostRecentOccupation, Occupations...)
	}
	for i, d := range b.Documents {
		p := "documents[" + itoa(i) + "]."
		if v.Required(p+"file", d.File) {
			v.Check(httpURL(d.File), p+"file", "must be an http(s) URL")
		}
		if len(d.Purposes) == 0 {
			v.Add(p+"purposes", "must list at least one purpose")
		}
		for _, pu := range d.Purposes {
			v.OneOf(p+"purposes", pu, DocPurposes...)
		}
	}
	return v.Err()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func (h *Routes) tier2(ctx *fasthttp.RequestCtx) {
	api.Update(ctx, customer, h.tier2Checked, verifiedOut)
}

// tier2Checked checks the body, then verifies with the body as the customer's profile.
func (h *Routes) tier2Checked(c context.Context, t payments.Tenant, id uuid.UUID, b tier2Body) (verified, error) {
	if err := validateTier2(&b); err != nil {
		return verified{}, err
	}
	profile, err := json.Marshal(b)
	if err != nil {
		return verified{}, err
	}
	ver, cu, err := h.svc.VerifyTier2(c, t, id, customers.Tier2Input{
		MostRecentOccupation: b.MostRecentOccupation, ActingAsIntermediary: *b.ActingAsIntermediary, Profile: profile})
	return verified{ver, cu}, err
}

// initiateBody is the body of POST .../kyc/initiate and .../tier2-kyc/initiate: the spec's
// (bvn, redirect_url) and the identity evidence a live KYC provider may need (docs/kyc.md):
// middle_name and bank_account, tier 1 only. Every field is optional here; the service
// refuses a missing one the environment's provider needs.
type initiateBody struct {
	BVN         string `json:"bvn"`
	RedirectURL string `json:"redirect_url"`
	MiddleName  string `json:"middle_name"`
	BankAccount *struct {
		BankCode      string `json:"bank_code"`
		AccountNumber string `json:"account_number"`
	} `json:"bank_account"`
}

func validateInitiate(tier int, b *initiateBody) error {
	var v api.Validator
	if b.BVN != "" {
		v.Check(tier == 1 && len(b.BVN) == 11 && digitsOnly(b.BVN), "bvn", "must be exactly 11 digits (tier 1 only)")
	}
	if b.RedirectURL != "" {
		v.Check(httpURL(b.RedirectURL), "redirect_url", "must be an http(s) URL")
	}
	if b.MiddleName != "" {
		if v.Check(tier == 1, "middle_name", "is for tier 1 only") {
			v.Length("middle_name", b.MiddleName, 1, 100)
		}
	}
	if ba := b.BankAccount; ba != nil {
		if !v.Check(tier == 1, "bank_account", "is for tier 1 only") {
			return v.Err()
		}
		if v.Required("bank_account.bank_code", ba.BankCode) {
			v.Check(len(ba.BankCode) >= 3 && len(ba.BankCode) <= 6 && digitsOnly(ba.BankCode), "bank_account.bank_code", "must be 3 to 6 digits (a Nigerian bank code, e.g. 058)")
		}
		if v.Required("bank_account.account_number", ba.AccountNumber) {
			v.Check(len(ba.AccountNumber) == 10 && digitsOnly(ba.AccountNumber), "bank_account.account_number", "must be exactly 10 digits (a NUBAN)")
		}
	}
	return v.Err()
}

func (h *Routes) initiate(ctx *fasthttp.RequestCtx, tier int) {
	t, id, ok := api.Target(ctx, customers.ErrNotFound)
	if !ok {
		return
	}
	var b initiateBody
	if len(ctx.PostBody()) > 0 {
		if err := api.Decode(ctx, &b); err != nil {
			api.Fail(ctx, err)
			return
		}
	}
	if err := validateInitiate(tier, &b); err != nil {
		api.Fail(ctx, err)
		return
	}
	in := customers.InitiateInput{BVN: b.BVN, RedirectURL: b.RedirectURL, MiddleName: strings.TrimSpace(b.MiddleName)}
	if b.BankAccount != nil {
		in.BankCode, in.AccountNumber = b.BankAccount.BankCode, b.BankAccount.AccountNumber
	}
	ver, err := h.svc.Initiate(api.Ctx(ctx), t, id, tier, in)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.Created(ctx, verificationOut(ver, nil))
}

func (h *Routes) initiate1(ctx *fasthttp.RequestCtx) { h.initiate(ctx, 1) }
func (h *Routes) initiate2(ctx *fasthttp.RequestCtx) { h.initiate(ctx, 2) }

// --- wallets and funding ---

type walletJSON struct {
	ID         string  `json:"id"`
	CustomerID string  `json:"customer_id"`
	Chain      string  `json:"chain"`
	Asset      string  `json:"asset"`
	Address    string  `json:"address"`
	Label      *string `json:"label"`
	CreatedAt  string  `json:"created_at"`
}

func walletOut(w customers.Wallet) walletJSON {
	return walletJSON{w.ID.String(), w.CustomerID.String(), w.Chain, w.Asset, w.Address, w.Label, api.Time(w.CreatedAt)}
}

func chainAsset(v *api.Validator, chain, asset string) {
	if v.Required("chain", chain) {
		v.OneOf("chain", chain, providers.ChainNames(providers.WalletChains)...)
	}
	if v.Required("asset", asset) {
		v.OneOf("asset", asset, "USDC", "USDT")
	}
}

type walletBody struct {
	Chain   string  `json:"chain"`
	Asset   string  `json:"asset"`
	Address string  `json:"address"`
	Label   *string `json:"label"`
}

func (h *Routes) addWallet(ctx *fasthttp.RequestCtx) {
	api.AddTo(ctx, customer, h.addWalletChecked, walletOut)
}

// addWalletChecked checks the body, then adds the wallet.
func (h *Routes) addWalletChecked(c context.Context, t payments.Tenant, id uuid.UUID, b walletBody) (customers.Wallet, error) {
	var v api.Validator
	chainAsset(&v, b.Chain, b.Asset)
	if v.Required("address", b.Address) && providers.Chain(b.Chain).In(providers.WalletChains) {
		if err := providers.ValidateAddress(providers.Chain(b.Chain), b.Address); err != nil {
			v.Add("address", err.Error())
		}
	}
	if b.Label != nil {
		v.Length("label", *b.Label, 1, 100)
	}
	if err := v.Err(); err != nil {
		return customers.Wallet{}, err
	}
	return h.svc.AddWallet(c, t, id, customers.WalletInput{Chain: b.Chain, Asset: b.Asset, Address: b.Address, Label: b.Label})
}

func (h *Routes) wallets(ctx *fasthttp.RequestCtx) {
	api.ListOn(ctx, customer, h.svc.Wallets, walletOut)
}

type fundingBody struct {
	Chain  string  `json:"chain"`
	Asset  string  `json:"asset"`
	Amount *string `json:"amount"`
}

func (h *Routes) funding(ctx *fasthttp.RequestCtx) {
	api.AddTo(ctx, customer, h.fundingChecked, fundingOut)
}

// fundingChecked checks the body, then opens the funding request.
func (h *Routes) fundingChecked(c context.Context, t payments.Tenant, id uuid.UUID, b fundingBody) (customers.FundingRequest, error) {
	var v api.Validator
	chainAsset(&v, b.Chain, b.Asset)
	var amount *money.Amount
	if b.Amount != nil && (b.Asset == "USDC" || b.Asset == "USDT") {
		a, err := money.ParsePositive(money.Asset(b.Asset), *b.Amount)
		if err != nil {
			v.Add("amount", err.Error())
		} else {
			amount = &a
		}
	}
	if err := v.Err(); err != nil {
		return customers.FundingRequest{}, err
	}
	return h.svc.CreateFunding(c, t, id, customers.FundingInput{Chain: b.Chain, Asset: b.Asset, Amount: amount})
}

func fundingOut(f customers.FundingRequest) map[string]any {
	var amt *string
	if f.Amount != nil {
		s := f.Amount.String()
		amt = &s
	}
	return map[string]any{
		"id": f.ID, "customer_id": f.CustomerID, "chain": f.Chain, "asset": f.Asset, "amount": amt,
		"deposit_address": f.DepositAddress, "status": f.Status, "expires_at": api.Time(f.ExpiresAt), "created_at": api.Time(f.CreatedAt),
	}
}

// --- balance and ledger ---

func (h *Routes) balance(ctx *fasthttp.RequestCtx) { api.Get(ctx, customer, h.svc.Balance, balanceOut) }

func balanceOut(b customers.Balance) map[string]any {
	accts := make([]map[string]string, 0, len(b.Accounts))
	for _, a := range b.Accounts {
		accts = append(accts, map[string]string{"asset": string(a.Amount.Asset), "purpose": string(a.Account.Purpose), "balance": a.Amount.String()})
	}
	return map[string]any{"ngn": b.NGN.String(), "usd": b.USD.String(), "updated_at": api.Time(b.UpdatedAt), "accounts": accts}
}

func (h *Routes) ledger(ctx *fasthttp.RequestCtx) { api.ListOn(ctx, customer, h.svc.Ledger, entryOut) }

func entryOut(e ledger.Entry) map[string]any {
	desc := e.Description
	if desc == "" {
		desc = strings.ReplaceAll(e.Kind, ".", " ")
	}
	return map[string]any{
		"id": e.ID, "type": e.Type(), "amount": e.Amount.Abs().String(), "currency": string(e.Amount.Asset),
		"description": desc, "balance_after": e.BalanceAfter.String(), "account": string(e.Account.Purpose),
		"reference": e.Reference, "transaction_id": e.TransactionID, "created_at": api.Time(e.CreatedAt),
	}
}
