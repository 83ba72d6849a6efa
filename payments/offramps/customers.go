package offramps

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/customers"
	"svc/persistence/postgres"
)

// Customers is what offramps need of the customer records.
type Customers interface {
	// Lookup checks id is a customer of the tenant, through q (the caller's transaction).
	// Errors: ErrCustomerNotFound, the database's.
	Lookup(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) error
	// FindOrCreate returns the tenant's customer with email, creating it (customer.created)
	// with the names when there is none, in the request's idempotency scope if ctx has one.
	FindOrCreate(ctx context.Context, t payments.Tenant, email, firstName, lastName string) (uuid.UUID, error)
}

// Directory is Customers over payments/customers.
type Directory struct{ Svc *customers.Service }

// Lookup implements Customers.
func (d Directory) Lookup(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) error {
	_, err := customers.Load(ctx, q, t, id, false)
	if errors.Is(err, customers.ErrNotFound) {
		return ErrCustomerNotFound
	}
	return err
}

// DefaultNames are the names of a customer created by email without them: the address's
// local part and "Customer".
func DefaultNames(email, first, last string) (string, string) {
	if first == "" {
		first = email
		if at := strings.IndexByte(email, '@'); at > 0 {
			first = email[:at]
		}
		if len([]rune(first)) > 100 {
			first = string([]rune(first)[:100])
		}
	}
	if last == "" {
		last = "Customer"
	}
	return first, last
}

// FindOrCreate implements Customers.
func (d Directory) FindOrCreate(ctx context.Context, t payments.Tenant, email, first, last string) (uuid.UUID, error) {
	find := func() (uuid.UUID, bool, error) {
		cs, _, err := d.Svc.List(ctx, t, customers.ListFilter{Email: email, Limit: 1})
		if err != nil || len(cs) == 0 {
			return uuid.Nil, false, err
		}
		return cs[0].ID, true, nil
	}
	if id, ok, err := find(); err != nil || ok {
		return id, err
	}
	first, last = DefaultNames(email, first, last)
	c, err := d.Svc.Create(ctx, t, customers.CreateInput{Email: email, FirstName: first, LastName: last})
	if errors.Is(err, customers.ErrCustomerExists) { // created meanwhile
		id, _, err := find()
		return id, err
	}
	return c.ID, err
}
