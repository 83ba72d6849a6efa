package paystacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Refund is a refund the server holds (POST /refund), of one charge.
type Refund struct {
	ID             int64
	TransactionID  int64  // the refunded charge's id
	Reference      string // the refunded charge's reference
	Amount         int64  // kobo
	Status         string // "pending" when made; FinishRefund moves it
	CustomerNote   string
	MerchantNote   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeductedAmount int64
}

// Refunds returns a copy of every refund made.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copies(slices.Values(s.refunds), len(s.refunds))
}

// FinishRefund moves the refund of the charge under reference to status ("processed" or
// "failed"; a failed refund gives the amount back to the balance) and returns its signed
// refund.<status> notification, in the shape of Paystack's documentation.
func (s *Server) FinishRefund(reference, status string) (Notification, error) {
	if status != "processed" && status != "failed" {
		return Notification{}, fmt.Errorf("paystacktest: a refund finishes processed or failed, not %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.refunds {
		if r.Reference != reference {
			continue
		}
		if status == "failed" && r.Status != "failed" {
			s.balance += r.Amount
		}
		r.Status, r.UpdatedAt = status, s.now()
		if status == "processed" {
			r.DeductedAmount = r.Amount
		}
		return s.sign("refund."+status, map[string]any{
			"status": status, "transaction_reference": r.Reference, "refund_reference": fmt.Sprintf("RF_%010d", r.ID),
			"amount": r.Amount, "currency": "NGN", "processor": "test", "integration": 100043, "domain": "test",
			"customer": map[string]any{"first_name": nil, "last_name": nil, "email": "payer@example.com"},
		}), nil
	}
	return Notification{}, fmt.Errorf("paystacktest: no refund of charge %q", reference)
}

// chargeByKey finds a charge by reference or id (Paystack takes either). Locked by the caller.
func (s *Server) chargeByKey(key string) map[string]any {
	if d := s.charges[key]; d != nil {
		return d
	}
	for _, d := range s.charges {
		if fmt.Sprint(d["id"]) == key {
			return d
		}
	}
	return nil
}

func (r *Refund) json(withTransaction map[string]any) map[string]any {
	var tx any = r.TransactionID
	if withTransaction != nil {
		tx = map[string]any{"id": r.TransactionID, "domain": "test", "reference": r.Reference, "amount": withTransaction["amount"],
			"paid_at": withTransaction["paid_at"], "channel": withTransaction["channel"], "currency": "NGN"}
	}
	return map[string]any{
		"id": r.ID, "integration": 100043, "domain": "test", "transaction": tx, "dispute": nil, "amount": r.Amount,
		"deducted_amount": r.DeductedAmount, "currency": "NGN", "channel": "dedicated_nuban", "fully_deducted": r.DeductedAmount == r.Amount,
		"refunded_by": "api", "expected_at": stamp(r.CreatedAt.Add(24 * time.Hour)), "customer_note": r.CustomerNote,
		"merchant_note": r.MerchantNote, "status": r.Status, "createdAt": stamp(r.CreatedAt), "updatedAt": stamp(r.UpdatedAt),
	}
}

// createRefund refunds a charge (documented body: transaction (reference or id, required),
// amount (kobo, optional: the whole charge), currency, customer_note, merchant_note). The
// amount must be an integer no larger than what is left of the charge; the balance pays it.
func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) {
	m, ok := request(w, r)
	if !ok {
		return
	}
	key := str(m, "transaction")
	if n, ok := m["transaction"].(json.Number); ok {
		key = n.String()
	}
	if key == "" {
		fail(w, http.StatusBadRequest, "Transaction reference or id is required", "")
		return
	}
	if m["currency"] != nil && str(m, "currency") != "NGN" {
		fail(w, http.StatusBadRequest, "Currency not supported", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chargeByKey(key)
	if c == nil {
		fail(w, http.StatusNotFound, "Transaction not found", "")
		return
	}
	if c["status"] != "success" {
		fail(w, http.StatusBadRequest, "Transaction has been fully reversed", "")
		return
	}
	total, _ := c["amount"].(int64)
	id, _ := c["id"].(int64)
	left := total
	for _, x := range s.refunds {
		if x.TransactionID == id && x.Status != "failed" {
			left -= x.Amount
		}
	}
	amount := left
	if m["amount"] != nil {
		n, isNum := m["amount"].(json.Number)
		v, err := strconv.ParseInt(n.String(), 10, 64)
		if !isNum || err != nil || v <= 0 {
			fail(w, http.StatusBadRequest, "Amount must be a positive integer in kobo", "invalid_amount")
			return
		}
		amount = v
	}
	if refused(w,
		check{left <= 0, "Transaction has been fully reversed", ""},
		check{amount > left, "Refund amount cannot be more than the transaction amount left", ""},
		check{s.balance < amount, "Your balance is not enough to fulfil this request", "insufficient_balance"},
	) {
		return
	}
	now := s.now()
	ref, _ := c["reference"].(string)
	rf := &Refund{ID: s.id(), TransactionID: id, Reference: ref, Amount: amount, Status: "pending",
		CustomerNote: str(m, "customer_note"), MerchantNote: str(m, "merchant_note"), CreatedAt: now, UpdatedAt: now}
	s.refunds = append(s.refunds, rf)
	s.balance -= amount
	reply(w, http.StatusOK, "Refund has been queued for processing", rf.json(c))
}

// listRefunds lists refunds, newest first, filtered by transaction (id or reference) and
// currency when given.
func (s *Server) listRefunds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if cur := q.Get("currency"); cur != "" && cur != "NGN" {
		reply(w, http.StatusOK, "Refunds retrieved", []any{})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	key := q.Get("transaction")
	for i := len(s.refunds) - 1; i >= 0; i-- {
		x := s.refunds[i]
		if key != "" && key != x.Reference && key != strconv.FormatInt(x.TransactionID, 10) {
			continue
		}
		out = append(out, x.json(nil))
	}
	reply(w, http.StatusOK, "Refunds retrieved", out)
}
