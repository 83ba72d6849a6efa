// Package paystacktest owns an in-process Paystack contract server: an HTTP server on
// 127.0.0.1 that speaks the documented Paystack requests and answers (Bearer secret key,
// JSON envelopes {status, message, data}) for the endpoints the paystack adapter calls,
// checks what the adapter sends (required fields, integer kobo amounts, transfer references,
// one transfer per reference), can be told to fail (5xx or 4xx a number of times, lost
// answers, stalls) and emits signed notification bodies (charge.success on a dedicated
// account, transfer.success / transfer.failed / transfer.reversed, customeridentification.success /
// customeridentification.failed) in the documented shape.
//
// It is written from Paystack's public documentation independently of the adapter (it signs
// with its own HMAC), so the adapter's tests check the contract and not themselves. Usable
// from any test, including end-to-end tests of svcd in live mode:
//
//	srv := paystacktest.New("sk_test_contract")
//	defer srv.Close()
//	srv.AddAccount("058", "0123456789", "ADA LOVELACE")
//	... paystack.New(paystack.Config{SecretKey: srv.Secret, BaseURL: srv.URL, ...})
package paystacktest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"svc/payments/providers"
)

// Routes, as Fault.Route and Requests name them.
const (
	RouteFetchCustomer   = "GET /customer/{id}"
	RouteCreateCustomer  = "POST /customer"
	RouteCreateDVA       = "POST /dedicated_account"
	RouteResolveAccount  = "GET /bank/resolve"
	RouteCreateRecipient = "POST /transferrecipient"
	RouteCreateTransfer  = "POST /transfer"
	RouteVerifyTransfer  = "GET /transfer/verify/{reference}"
	RouteVerifyCharge    = "GET /transaction/verify/{reference}"
	RouteIdentify        = "POST /customer/{code}/identification"
	RouteCreateRefund    = "POST /refund"
	RouteListRefunds     = "GET /refund"
)

// Fault makes requests to one route misbehave.
type Fault struct {
	Route  string        // one of the Route constants
	Times  int           // how many requests it hits (at least 1)
	Status int           // the status to answer (5xx, 4xx); 0 with Delay: stall only
	After  bool          // do the request's work first, then answer Status (a lost answer)
	Delay  time.Duration // wait this long first (or until the client gives up)
}

// Transfer is a transfer the server holds.
type Transfer struct {
	ID            int64
	Code          string // TRF_...
	Reference     string
	Amount        int64 // kobo
	Status        string
	Reason        string
	RecipientCode string
	BankCode      string
	AccountNumber string
	AccountName   string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Notification is a signed notification body, as Paystack posts it.
type Notification struct {
	Type      string
	Body      []byte
	Signature string // the x-paystack-signature header: hex HMAC-SHA512 of Body
}

// Sender describes who pays into a dedicated account.
type Sender struct {
	Name, Bank, AccountNumber, Narration string
}

type customer struct {
	ID                         int64
	Code, Email                string
	FirstName, LastName, Phone string
	Metadata                   json.RawMessage
	CreatedAt                  time.Time
	dva                        *dva
}

type dva struct {
	ID            int64
	AccountNumber string
	AccountName   string
	BankSlug      string
	Active        bool
	CreatedAt     time.Time
	customer      *customer
}

type recipient struct {
	ID                            int64
	Code, Name, BankCode, Account string
	CreatedAt                     time.Time
}

// Server is the contract server. Its methods are safe for concurrent use.
type Server struct {
	URL    string // http://127.0.0.1:port
	Secret string // the secret key it accepts and signs with

	hs   *httptest.Server
	stop chan struct{}
	once sync.Once

	mu          sync.Mutex
	now         func() time.Time
	nextID      int64
	business    string
	initial     string // the status of a new transfer
	balance     int64
	customers   map[string]*customer // by code
	byEmail     map[string]*customer
	dvas        map[string]*dva // by account number
	accounts    map[[2]string]string
	recipients  map[string]*recipient // by code
	recipientBy map[[2]string]*recipient
	transfers   map[string]*Transfer      // by reference
	charges     map[string]map[string]any // charge data by reference
	faults      []*Fault
	requests    map[string]int
	idents      map[string]*Identification // by customer code
	refunds     []*Refund
}

// Identification is a customer identification the server holds (POST
// /customer/{code}/identification), answered by FinishIdentification.
type Identification struct {
	CustomerCode, Email                string
	FirstName, MiddleName, LastName    string
	BVN, BankCode, AccountNumber, Type string
	Status                             string // "pending", "success" or "failed"
}

// Banks the server knows (code -> name), for resolution and recipients.
var banks = map[string]string{
	"011": "First Bank of Nigeria", "033": "United Bank For Africa", "035": "Wema Bank",
	"044": "Access Bank", "057": "Zenith Bank", "058": "Guaranty Trust Bank",
}

// DVA banks the server issues accounts at (slug -> name, bank id).
var dvaBanks = map[string]struct {
	name string
	id   int64
}{"wema-bank": {"Wema Bank", 20}, "titan-paystack": {"Titan Paystack", 1}, "test-bank": {"Test Bank", 21}}

// New starts a server on 127.0.0.1 that accepts secret. New transfers start "pending"; the
// balance is 1,000,000,000 kobo. Close it when done.
func New(secret string) *Server {
	s := &Server{
		Secret: secret, stop: make(chan struct{}), now: time.Now, nextID: 1000,
		business: "SVC", initial: "pending", balance: 1_000_000_000,
		customers: map[string]*customer{}, byEmail: map[string]*customer{}, dvas: map[string]*dva{},
		accounts: map[[2]string]string{}, recipients: map[string]*recipient{}, recipientBy: map[[2]string]*recipient{},
		transfers: map[string]*Transfer{}, charges: map[string]map[string]any{}, requests: map[string]int{},
		idents: map[string]*Identification{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc(RouteFetchCustomer, s.fetchCustomer)
	mux.HandleFunc(RouteCreateCustomer, s.createCustomer)
	mux.HandleFunc(RouteCreateDVA, s.createDVA)
	mux.HandleFunc(RouteResolveAccount, s.resolve)
	mux.HandleFunc(RouteCreateRecipient, s.createRecipient)
	mux.HandleFunc(RouteCreateTransfer, s.createTransfer)
	mux.HandleFunc(RouteVerifyTransfer, s.verifyTransfer)
	mux.HandleFunc(RouteVerifyCharge, s.verifyCharge)
	mux.HandleFunc(RouteIdentify, s.identify)
	mux.HandleFunc(RouteCreateRefund, s.createRefund)
	mux.HandleFunc(RouteListRefunds, s.listRefunds)
	s.hs = httptest.NewServer(s.middleware(mux)) // listens on 127.0.0.1
	s.URL = s.hs.URL
	return s
}

// Close releases stalled requests and stops the server (it waits for running handlers).
func (s *Server) Close() {
	s.once.Do(func() { close(s.stop) })
	s.hs.Close()
}

// AddAccount makes bankCode/number resolvable to name (GET /bank/resolve); every other
// account "could not be resolved".
func (s *Server) AddAccount(bankCode, number, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[[2]string{bankCode, number}] = name
}

// SetBalance sets the Paystack balance transfers are paid from (kobo).
func (s *Server) SetBalance(kobo int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance = kobo
}

// Balance is the Paystack balance (kobo).
func (s *Server) Balance() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance
}

// SetInitialTransferStatus sets the status new transfers start in ("pending", "success",
// "otp", ...).
func (s *Server) SetInitialTransferStatus(status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initial = status
}

// SetClock replaces the server's clock (times in answers and notifications).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Inject adds a fault.
func (s *Server) Inject(f Fault) {
	if f.Times < 1 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Requests is how many requests reached route (faulted ones included).
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// Transfers returns a copy of every transfer made.
func (s *Server) Transfers() []Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copies(maps.Values(s.transfers), len(s.transfers))
}

// Transfer returns the transfer made under reference.
func (s *Server) Transfer(reference string) (Transfer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.transfers[reference]
	if !ok {
		return Transfer{}, false
	}
	return *t, true
}

// DedicatedAccounts is how many dedicated accounts were issued.
func (s *Server) DedicatedAccounts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dvas)
}

// ---- the HTTP side ----

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := routeOf(r)
		s.mu.Lock()
		s.requests[route]++
		var f *Fault
		for _, x := range s.faults {
			if x.Route == route && x.Times > 0 {
				x.Times--
				f = x
				break
			}
		}
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+s.Secret {
			fail(w, http.StatusUnauthorized, "Invalid key", "")
			return
		}
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			fail(w, http.StatusBadRequest, "Content-Type must be application/json", "")
			return
		}
		if f != nil && f.Delay > 0 {
			t := time.NewTimer(f.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-s.stop:
				t.Stop()
				return
			}
		}
		if f != nil && f.Status != 0 && !f.After {
			fail(w, f.Status, "Injected failure", "")
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if f != nil && f.Status != 0 {
			fail(w, f.Status, "Injected failure after the work was done", "")
			return
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

// routeOf names a request by the route it matches (for faults and counts).
func routeOf(r *http.Request) string {
	p := r.URL.Path
	switch {
	case r.Method == "GET" && strings.HasPrefix(p, "/customer/"):
		return RouteFetchCustomer
	case r.Method == "GET" && strings.HasPrefix(p, "/transfer/verify/"):
		return RouteVerifyTransfer
	case r.Method == "GET" && strings.HasPrefix(p, "/transaction/verify/"):
		return RouteVerifyCharge
	case r.Method == "POST" && strings.HasPrefix(p, "/customer/") && strings.HasSuffix(p, "/identification"):
		return RouteIdentify
	}
	return r.Method + " " + p
}

func reply(w http.ResponseWriter, status int, message string, data any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": true, "message": message, "data": data})
}

func fail(w http.ResponseWriter, status int, message, code string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	body := map[string]any{"status": false, "message": message}
	if code != "" {
		body["code"], body["type"] = code, "validation_error"
	}
	_ = json.NewEncoder(w).Encode(body)
}

// body decodes a JSON object with numbers kept exact.
func body(r *http.Request) (map[string]any, error) {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errors.New("invalid JSON body")
	}
	return m, nil
}

// request decodes the request's JSON object, or answers 400 as Paystack does and says so.
func request(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	m, err := body(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error(), "")
		return nil, false
	}
	return m, true
}

// check is one documented rule of a request: when broken, the answer is 400 with message and
// Paystack's error code (none when "").
type check struct {
	broken        bool
	message, code string
}

// refused answers 400 for the first broken check, in the order Paystack documents them, and
// says whether it did.
func refused(w http.ResponseWriter, checks ...check) bool {
	for _, c := range checks {
		if c.broken {
			fail(w, http.StatusBadRequest, c.message, c.code)
			return true
		}
	}
	return false
}

// copies returns a copy of each record (taken under s.mu), so callers never share the
// server's own.
func copies[T any](all iter.Seq[*T], n int) []T {
	out := make([]T, 0, n)
	for v := range all {
		out = append(out, *v)
	}
	return out
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return strings.TrimSpace(v)
}

func (s *Server) id() int64 { s.nextID++; return s.nextID }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (c *customer) json() map[string]any {
	m := map[string]any{
		"id": c.ID, "customer_code": c.Code, "email": c.Email, "first_name": nullable(c.FirstName),
		"last_name": nullable(c.LastName), "phone": nullable(c.Phone), "domain": "test", "integration": 100043,
		"risk_action": "default", "identified": false, "identifications": nil,
		"createdAt": stamp(c.CreatedAt), "updatedAt": stamp(c.CreatedAt),
		"transactions": []any{}, "subscriptions": []any{}, "authorizations": []any{}, "dedicated_account": nil,
	}
	if len(c.Metadata) > 0 {
		m["metadata"] = c.Metadata
	} else {
		m["metadata"] = nil
	}
	if c.dva != nil {
		m["dedicated_account"] = c.dva.json(false)
	}
	return m
}

func (d *dva) json(withCustomer bool) map[string]any {
	b := dvaBanks[d.BankSlug]
	m := map[string]any{
		"bank":         map[string]any{"name": b.name, "id": b.id, "slug": d.BankSlug},
		"account_name": d.AccountName, "account_number": d.AccountNumber, "assigned": true, "currency": "NGN",
		"metadata": nil, "active": d.Active, "id": d.ID, "created_at": stamp(d.CreatedAt), "updated_at": stamp(d.CreatedAt),
		"assignment": map[string]any{"integration": 100043, "assignee_id": d.customer.ID, "assignee_type": "Customer",
			"expired": false, "account_type": "PAY-WITH-TRANSFER-RECURRING", "assigned_at": stamp(d.CreatedAt)},
	}
	if withCustomer {
		c := d.customer
		m["customer"] = map[string]any{"id": c.ID, "first_name": c.FirstName, "last_name": c.LastName,
			"email": c.Email, "customer_code": c.Code, "phone": c.Phone, "risk_action": "default"}
	}
	return m
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// one answers a GET of one record under s.mu: 200 with found and what find answers for the
// path value param, or 404 with missing when find answers nil (no such record).
func (s *Server) one(w http.ResponseWriter, r *http.Request, param, found, missing string, find func(key string) any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := find(r.PathValue(param))
	if data == nil {
		fail(w, http.StatusNotFound, missing, "")
		return
	}
	reply(w, http.StatusOK, found, data)
}

func (s *Server) fetchCustomer(w http.ResponseWriter, r *http.Request) {
	s.one(w, r, "id", "Customer retrieved", "Customer not found", func(key string) any {
		c := s.customers[key]
		if c == nil {
			c = s.byEmail[strings.ToLower(key)]
		}
		if c == nil {
			return nil
		}
		return c.json()
	})
}

var emailRE = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

func (s *Server) createCustomer(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	email := strings.ToLower(str(m, "email"))
	if !emailRE.MatchString(email) {
		fail(w, http.StatusBadRequest, "Invalid Email Address Passed", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byEmail[email]
	if c == nil {
		id := s.id()
		c = &customer{ID: id, Code: fmt.Sprintf("CUS_%013d", id), Email: email, CreatedAt: s.now()}
		s.byEmail[email], s.customers[c.Code] = c, c
	}
	applyNames(c, m)
	if md, ok := m["metadata"]; ok {
		c.Metadata, _ = json.Marshal(md)
	}
	reply(w, http.StatusOK, "Customer created", c.json())
}

func applyNames(c *customer, m map[string]any) {
	if v := str(m, "first_name"); v != "" {
		c.FirstName = v
	}
	if v := str(m, "last_name"); v != "" {
		c.LastName = v
	}
	if v := str(m, "phone"); v != "" {
		c.Phone = v
	}
}

func (s *Server) createDVA(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	slug := str(m, "preferred_bank")
	if _, ok := dvaBanks[slug]; !ok {
		fail(w, http.StatusBadRequest, "Invalid preferred bank: use a slug from the providers list", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := str(m, "customer")
	if n, ok := m["customer"].(json.Number); ok {
		key = n.String()
	}
	c := s.customers[key]
	if c == nil {
		for _, x := range s.customers {
			if strconv.FormatInt(x.ID, 10) == key {
				c = x
			}
		}
	}
	if c == nil {
		fail(w, http.StatusBadRequest, "Customer not found", "")
		return
	}
	applyNames(c, m)
	if c.FirstName == "" || c.LastName == "" || c.Phone == "" {
		fail(w, http.StatusBadRequest, "Customer first name, last name and phone are required to create a dedicated account", "")
		return
	}
	if c.dva != nil && c.dva.Active && c.dva.BankSlug == slug {
		fail(w, http.StatusBadRequest, "Customer already has an active dedicated account at this bank", "")
		return
	}
	id := s.id()
	num, err := providers.NUBAN("035", fmt.Sprintf("993%06d", id%1_000_000))
	if err != nil {
		fail(w, http.StatusInternalServerError, "could not issue an account number", "")
		return
	}
	d := &dva{ID: id, AccountNumber: num, BankSlug: slug, Active: true, CreatedAt: s.now(), customer: c,
		AccountName: s.business + "/" + strings.ToUpper(c.FirstName+" "+c.LastName)}
	c.dva, s.dvas[num] = d, d
	reply(w, http.StatusOK, "NUBAN successfully created", d.json(true))
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	acct, bank := q.Get("account_number"), q.Get("bank_code")
	if acct == "" || bank == "" {
		fail(w, http.StatusBadRequest, "account_number and bank_code are required", "")
		return
	}
	if _, ok := banks[bank]; !ok {
		fail(w, http.StatusBadRequest, "Unknown bank code: "+bank, "invalid_bank_code")
		return
	}
	s.mu.Lock()
	name, ok := s.accounts[[2]string{bank, acct}]
	s.mu.Unlock()
	if !ok {
		fail(w, http.StatusUnprocessableEntity, "Could not resolve account name. Check parameters or try again.", "")
		return
	}
	reply(w, http.StatusOK, "Account number resolved", map[string]any{"account_number": acct, "account_name": name, "bank_id": 9})
}

func (r *recipient) json() map[string]any {
	return map[string]any{
		"active": true, "createdAt": stamp(r.CreatedAt), "currency": "NGN", "domain": "test", "id": r.ID,
		"integration": 100043, "name": r.Name, "recipient_code": r.Code, "type": "nuban", "updatedAt": stamp(r.CreatedAt),
		"is_deleted": false, "email": nil, "description": nil, "metadata": nil,
		"details": map[string]any{"authorization_code": nil, "account_number": r.Account, "account_name": r.Name,
			"bank_code": r.BankCode, "bank_name": banks[r.BankCode]},
	}
}

var tenDigits = regexp.MustCompile(`^[0-9]{10}$`)

func (s *Server) createRecipient(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	if refused(w,
		check{str(m, "type") != "nuban", "Recipient type must be nuban for NGN bank accounts", ""},
		check{str(m, "name") == "", "Name is required", ""},
		check{!tenDigits.MatchString(str(m, "account_number")), "Account number must be 10 digits", "invalid_account_number"},
		check{banks[str(m, "bank_code")] == "", "Unknown bank code", "invalid_bank_code"},
		check{m["currency"] != nil && str(m, "currency") != "NGN", "Currency must be NGN for nuban recipients", ""},
	) {
		return
	}
	key := [2]string{str(m, "bank_code"), str(m, "account_number")}
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := s.recipientBy[key]
	if rc == nil {
		id := s.id()
		rc = &recipient{ID: id, Code: fmt.Sprintf("RCP_%013d", id), Name: str(m, "name"), BankCode: key[0], Account: key[1], CreatedAt: s.now()}
		s.recipients[rc.Code], s.recipientBy[key] = rc, rc
	}
	reply(w, http.StatusOK, "Transfer recipient created successfully", rc.json())
}

var referenceRE = regexp.MustCompile(`^[a-z0-9_-]{16,50}$`)

func (s *Server) createTransfer(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	n, isNum := m["amount"].(json.Number)
	amount, aerr := strconv.ParseInt(n.String(), 10, 64)
	ref := str(m, "reference")
	if refused(w,
		check{str(m, "source") != "balance", "Source must be balance", ""},
		check{!isNum || aerr != nil || amount <= 0, "Amount must be a positive integer in kobo", "invalid_amount"},
		check{m["currency"] != nil && str(m, "currency") != "NGN", "Currency not supported", ""},
		check{!referenceRE.MatchString(ref), "The transfer reference contains illegal characters or has the wrong length (16 to 50 of a-z, 0-9, - and _)", "invalid_reference"},
	) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := s.recipients[str(m, "recipient")]
	if refused(w,
		check{rc == nil, "Recipient specified is invalid", "invalid_transfer_recipient"},
		check{s.transfers[ref] != nil, "This reference has already been used on a prior transfer", "duplicate_transfer_reference"},
		check{s.balance < amount, "Your balance is not enough to fulfil this request", "insufficient_balance"},
	) {
		return
	}
	id := s.id()
	now := s.now()
	t := &Transfer{ID: id, Code: fmt.Sprintf("TRF_%013d", id), Reference: ref, Amount: amount, Status: s.initial,
		Reason: str(m, "reason"), RecipientCode: rc.Code, BankCode: rc.BankCode, AccountNumber: rc.Account,
		AccountName: rc.Name, CreatedAt: now, UpdatedAt: now}
	s.transfers[ref] = t
	s.balance -= amount
	reply(w, http.StatusOK, "Transfer has been queued", map[string]any{
		"transfersessionid": []any{}, "transfertrials": []any{}, "domain": "test", "amount": t.Amount, "currency": "NGN",
		"reference": t.Reference, "source": "balance", "source_details": nil, "reason": t.Reason, "status": t.Status,
		"failures": nil, "transfer_code": t.Code, "titan_code": nil, "transferred_at": nil, "id": t.ID,
		"integration": 100043, "request": id + 1, "recipient": rc.ID, "createdAt": stamp(now), "updatedAt": stamp(now),
	})
}

func (s *Server) transferJSON(t *Transfer) map[string]any {
	rc := s.recipients[t.RecipientCode]
	return map[string]any{
		"amount": t.Amount, "createdAt": stamp(t.CreatedAt), "currency": "NGN", "domain": "test", "failures": nil,
		"id": t.ID, "integration": 100043, "reason": t.Reason, "reference": t.Reference, "source": "balance",
		"source_details": nil, "status": t.Status, "titan_code": nil, "transfer_code": t.Code, "request": t.ID + 1,
		"transferred_at": nil, "updatedAt": stamp(t.UpdatedAt), "recipient": rc.json(),
		"session": map[string]any{"provider": nil, "id": nil}, "fee_charged": 0, "fees_breakdown": nil, "gateway_response": nil,
	}
}

func (s *Server) verifyTransfer(w http.ResponseWriter, r *http.Request) {
	s.one(w, r, "reference", "Transfer retrieved", "Transfer not found", func(ref string) any {
		if t := s.transfers[ref]; t != nil {
			return s.transferJSON(t)
		}
		return nil
	})
}

// ---- notifications ----

func (s *Server) sign(typ string, data any) Notification {
	body, err := json.Marshal(map[string]any{"event": typ, "data": data})
	if err != nil {
		panic(err) // our own maps always encode
	}
	m := hmac.New(sha512.New, []byte(s.Secret))
	m.Write(body)
	return Notification{Type: typ, Body: body, Signature: hex.EncodeToString(m.Sum(nil))}
}

// Finish moves the transfer made under reference to status ("success", "failed" or
// "reversed"; failed and reversed return the amount to the balance) and returns its signed
// transfer.<status> notification, in the shape of Paystack's documentation. gatewayResponse
// is the bank's words, or "".
func (s *Server) Finish(reference, status, gatewayResponse string) (Notification, error) {
	typ := map[string]string{"success": "transfer.success", "failed": "transfer.failed", "reversed": "transfer.reversed"}[status]
	if typ == "" {
		return Notification{}, fmt.Errorf("paystacktest: a transfer finishes success, failed or reversed, not %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.transfers[reference]
	if t == nil {
		return Notification{}, fmt.Errorf("paystacktest: no transfer under reference %q", reference)
	}
	if status != "success" && t.Status != "failed" && t.Status != "reversed" {
		s.balance += t.Amount
	}
	t.Status, t.UpdatedAt = status, s.now()
	data := s.transferJSON(t)
	data["integration"] = map[string]any{"id": 100043, "is_live": false, "business_name": s.business}
	data["updated_at"], data["created_at"] = stamp(t.UpdatedAt), stamp(t.CreatedAt)
	if gatewayResponse != "" {
		data["gateway_response"] = gatewayResponse
	}
	if status != "failed" {
		data["transferred_at"] = stamp(t.UpdatedAt)
	}
	return s.sign(typ, data), nil
}

// Charge records a bank transfer of kobo into the dedicated account accountNumber (the
// balance grows by it) and returns its signed charge.success notification, in the shape of
// Paystack's documentation (channel dedicated_nuban, the receiving account in authorization).
func (s *Server) Charge(accountNumber string, kobo int64, from Sender) (Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dvas[accountNumber]
	if d == nil {
		return Notification{}, fmt.Errorf("paystacktest: no dedicated account %s", accountNumber)
	}
	if kobo <= 0 {
		return Notification{}, errors.New("paystacktest: a charge is a positive number of kobo")
	}
	s.balance += kobo
	id := s.id()
	now := stamp(s.now())
	c := d.customer
	masked := from.AccountNumber
	if len(masked) == 10 {
		masked = "XXXXXX" + masked[6:]
	}
	data := map[string]any{
		"id": id, "domain": "test", "status": "success", "reference": fmt.Sprintf("dva_%d", id),
		"amount": kobo, "message": nil, "gateway_response": "Approved", "paid_at": now, "created_at": now,
		"channel": "dedicated_nuban", "currency": "NGN", "ip_address": nil,
		"metadata": map[string]any{"receiver_account_number": accountNumber, "receiver_bank": dvaBanks[d.BankSlug].name, "custom_fields": []any{}},
		"fees":     kobo / 100, "fees_split": nil,
		"customer": map[string]any{"id": c.ID, "first_name": c.FirstName, "last_name": c.LastName, "email": c.Email,
			"customer_code": c.Code, "phone": c.Phone, "metadata": nil, "risk_action": "default"},
		"authorization": map[string]any{
			"authorization_code": fmt.Sprintf("AUTH_%010d", id), "bin": "413XXX", "last4": "X011", "exp_month": "01", "exp_year": "2030",
			"channel": "dedicated_nuban", "card_type": "transfer", "bank": from.Bank, "country_code": "NG", "brand": "Managed Account",
			"reusable": false, "signature": nil, "sender_bank": from.Bank, "sender_bank_account_number": masked,
			"sender_country": "NG", "sender_name": from.Name, "narration": from.Narration,
			"receiver_bank_account_number": accountNumber, "receiver_bank": dvaBanks[d.BankSlug].name,
		},
		"plan": map[string]any{}, "subaccount": map[string]any{}, "paidAt": now, "createdAt": now, "requested_amount": kobo,
	}
	s.charges[data["reference"].(string)] = data
	return s.sign("charge.success", data), nil
}

// Reverse marks the charge under reference reversed (a transfer the sending bank pulled
// back): GET /transaction/verify then answers status "reversed".
func (s *Server) Reverse(reference string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.charges[reference]
	if d == nil {
		return fmt.Errorf("paystacktest: no charge under reference %q", reference)
	}
	d["status"] = "reversed"
	return nil
}

func (s *Server) verifyCharge(w http.ResponseWriter, r *http.Request) {
	s.one(w, r, "reference", "Verification successful", "Transaction reference not found", func(ref string) any {
		if d := s.charges[ref]; d != nil {
			return d
		}
		return nil
	})
}

// Deliver posts n to url as Paystack does (JSON body, x-paystack-signature) and returns the
// answer's status.
func Deliver(ctx context.Context, client *http.Client, url string, n Notification) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(n.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Paystack-Signature", n.Signature)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// ---- customer identification ----

var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// identify validates a customer's identity (documented fields: country, type bank_account,
// account_number, bvn, bank_code, first_name, last_name, optional middle_name) and answers
// 202 "Customer Identification in progress"; FinishIdentification gives the outcome.
func (s *Server) identify(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	if refused(w,
		check{str(m, "country") != "NG", "Invalid country: only NG is supported", "invalid_params"},
		check{str(m, "type") != "bank_account", "Invalid identification type: only bank_account is supported", "invalid_params"},
		check{len(str(m, "bvn")) != 11 || !digitsRE.MatchString(str(m, "bvn")), "BVN must be 11 digits", "invalid_params"},
		check{len(str(m, "account_number")) != 10 || !digitsRE.MatchString(str(m, "account_number")), "Account number must be 10 digits", "invalid_params"},
		check{banks[str(m, "bank_code")] == "", "Unknown bank code", "invalid_params"},
		check{str(m, "first_name") == "" || str(m, "last_name") == "", "first_name and last_name are required", "invalid_params"},
	) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customers[r.PathValue("code")]
	if c == nil {
		fail(w, http.StatusNotFound, "Customer not found", "")
		return
	}
	if id := s.idents[c.Code]; id != nil && id.Status == "success" {
		fail(w, http.StatusBadRequest, "Customer already identified", "")
		return
	}
	s.idents[c.Code] = &Identification{CustomerCode: c.Code, Email: c.Email, FirstName: str(m, "first_name"),
		MiddleName: str(m, "middle_name"), LastName: str(m, "last_name"), BVN: str(m, "bvn"), BankCode: str(m, "bank_code"),
		AccountNumber: str(m, "account_number"), Type: "bank_account", Status: "pending"}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": true, "message": "Customer Identification in progress"})
}

// Identifications lists the identifications the server holds (copies).
func (s *Server) Identifications() []Identification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copies(maps.Values(s.idents), len(s.idents))
}

func mask(s string, keepStart, keepEnd int) string {
	if len(s) <= keepStart+keepEnd {
		return s
	}
	return s[:keepStart] + strings.Repeat("*", len(s)-keepStart-keepEnd) + s[len(s)-keepEnd:]
}

// FinishIdentification answers the pending identification of customerCode and returns its
// signed customeridentification.success (success) or customeridentification.failed (with
// reason) notification in the documented shape (BVN and account number masked).
func (s *Server) FinishIdentification(customerCode string, success bool, reason string) (Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.idents[customerCode]
	if id == nil || id.Status != "pending" {
		return Notification{}, fmt.Errorf("paystacktest: no pending identification of customer %q", customerCode)
	}
	c := s.customers[customerCode]
	typ, status := "customeridentification.success", "success"
	if !success {
		typ, status = "customeridentification.failed", "failed"
	}
	id.Status = status
	data := map[string]any{"customer_id": strconv.FormatInt(c.ID, 10), "customer_code": c.Code, "email": c.Email,
		"identification": map[string]any{"country": "NG", "type": id.Type, "bvn": mask(id.BVN, 3, 3),
			"account_number": mask(id.AccountNumber, 3, 3), "bank_code": id.BankCode}}
	if !success {
		if reason == "" {
			reason = "Account number or BVN is incorrect"
		}
		data["reason"] = reason
	}
	return s.sign(typ, data), nil
}
