package onramps

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/customers"
	"svc/persistence/postgres"
)

// Directory reads customers from payments/customers.
var Directory Customers = LookupFunc(func(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Customer, error) {
	c, err := customers.Load(ctx, q, t, id, false)
	if errors.Is(err, customers.ErrNotFound) {
		return Customer{}, ErrCustomerNotFound
	}
	if err != nil {
		return Customer{}, err
	}
	return Customer{ID: c.ID, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName, KYCTier: c.KYCTier}, nil
})
