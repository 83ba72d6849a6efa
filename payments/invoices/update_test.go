package invoices_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/invoices"
	"svc/payments/paymentstest"
)

// TestUpdateIssueDate: a PATCH's issue_date replaces the invoice's when it is a date, and
// leaves it as it was when it is absent or empty; null or a malformed date is a problem of
// issue_date and changes nothing.
func TestUpdateIssueDate(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	svc := invoices.NewService(pool, paymentstest.Jobs(t, pool), nil, nil)
	tn := payments.Tenant{MerchantID: uuid.New(), Environment: payments.Sandbox}
	paymentstest.Exec(t, pool, `insert into merchants (id, email, password_hash, business_name, first_name, last_name)
		values ($1, $2, '', 'Shop', 'Ada', 'L')`, tn.MerchantID, tn.MerchantID.String()+"@example.com")
	one, price := int64(1), "100"
	inv, err := svc.Create(ctx, tn, invoices.CreateInput{Title: "T", CustomerName: "Ada", CustomerEmail: "ada@example.com",
		IssueDate: "2030-01-02", Lines: []invoices.LineInput{{Description: "x", Quantity: &one, UnitPrice: &price}}})
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name, body string
		want       time.Time
		problem    bool
	}{
		{"absent keeps it", `{}`, day("2030-01-02"), false},
		{"a date replaces it", `{"issue_date":"2030-03-04"}`, day("2030-03-04"), false},
		{"empty keeps it", `{"issue_date":""}`, day("2030-03-04"), false},
		{"null is refused", `{"issue_date":null}`, day("2030-03-04"), true},
		{"a malformed date is refused", `{"issue_date":"04/03/2030"}`, day("2030-03-04"), true},
	} {
		var in struct {
			IssueDate json.RawMessage `json:"issue_date"`
		}
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		var up invoices.UpdateInput
		if in.IssueDate != nil {
			if err := up.IssueDate.UnmarshalJSON(in.IssueDate); err != nil {
				t.Fatal(err)
			}
		}
		_, err := svc.Update(ctx, tn, inv.ID, up)
		var v *payments.ValidationError
		if refused := errors.As(err, &v); refused != c.problem || (refused && (len(v.Fields) != 1 || v.Fields[0].Field != "issue_date")) {
			t.Errorf("%s: %v, want a problem of issue_date: %v", c.name, err, c.problem)
		} else if !refused && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		got, err := svc.Get(ctx, tn, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.IssueDate.Equal(c.want) {
			t.Errorf("%s: issue date %v, want %v", c.name, got.IssueDate, c.want)
		}
	}
}
