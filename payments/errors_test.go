package payments_test

import (
	"errors"
	"fmt"
	"testing"

	"svc/payments"
)

func TestErrorIs(t *testing.T) {
	onrampNotFound := &payments.Error{Code: "NOT_FOUND", Message: "onramp not found"}
	customerNotFound := &payments.Error{Code: "NOT_FOUND", Message: "customer not found"}
	anyNotFound := &payments.Error{Code: "NOT_FOUND"}
	productNotFound := &payments.Error{Code: "NOT_FOUND", Message: "product not found", Family: "commerce"}
	invoiceNotFound := &payments.Error{Code: "NOT_FOUND", Message: "invoice not found", Family: "commerce"}
	archived := &payments.Error{Code: "PRODUCT_INACTIVE", Message: "product p is ARCHIVED", Family: "commerce"}
	inactive := &payments.Error{Code: "PRODUCT_INACTIVE", Message: "product is not active", Family: "commerce"}
	for _, c := range []struct {
		name        string
		err, target error
		want        bool
	}{
		{"a sentinel is itself", onrampNotFound, onrampNotFound, true},
		{"a wrapped sentinel is itself", fmt.Errorf("load: %w", onrampNotFound), onrampNotFound, true},
		{"an equal value is the sentinel", &payments.Error{Code: "NOT_FOUND", Message: "onramp not found"}, onrampNotFound, true},
		{"two sentinels of one code stay apart", customerNotFound, onrampNotFound, false},
		{"a target without a message stands for its code", customerNotFound, anyNotFound, true},
		{"another code is not the target", &payments.Error{Code: "CONFLICT", Message: "onramp not found"}, onrampNotFound, false},
		{"a family matches by code", invoiceNotFound, productNotFound, true},
		{"a family's own sentence is its sentinel", archived, inactive, true},
		{"a family matches only itself", onrampNotFound, productNotFound, false},
		{"an error of another type is not", errors.New("onramp not found"), onrampNotFound, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errors.Is(c.err, c.target); got != c.want {
				t.Fatalf("errors.Is(%v, %v) = %v, want %v", c.err, c.target, got, c.want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	var p payments.Problems
	if !p.Ok() || p.Err() != nil {
		t.Fatal("an empty Problems is not ok")
	}
	p.Check(true, "name", "is required")
	p.Check(false, "price", "must be positive")
	if !p.Merge("lines[0].", &payments.ValidationError{Fields: []payments.FieldError{{Field: "quantity", Message: "must be at least 1"}}}) {
		t.Fatal("Merge refused a *ValidationError")
	}
	if p.Merge("x", errors.New("boom")) {
		t.Fatal("Merge took a plain error")
	}
	var ve *payments.ValidationError
	if err := p.Err(); !errors.As(err, &ve) || len(ve.Fields) != 2 || ve.APIField() != "price" ||
		ve.Fields[1].Field != "lines[0].quantity" {
		t.Fatalf("Err() = %#v", p.Err())
	}
	if got, want := ve.Error(), "invalid request: price must be positive; lines[0].quantity must be at least 1"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	fe := &payments.FieldError{Field: "amount", Message: "must be positive"}
	if fe.Error() != "must be positive" || fe.APIField() != "amount" {
		t.Fatalf("FieldError = %q on %q", fe.Error(), fe.APIField())
	}
}
