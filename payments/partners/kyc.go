package partners

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/customers"
	"svc/payments/providers"
)

// HostedCompleter applies a KYC provider's outcome to the hosted verification whose provider
// reference is reference; *customers.Service is one.
type HostedCompleter interface {
	CompleteHostedTx(ctx context.Context, tx pgx.Tx, environment, reference string, out customers.HostedOutcome) (customers.Session, bool, error)
}

// identity applies a partner's identification outcome (Paystack customeridentification.*)
// to the verification it answers: verified or rejected, the tier and events, once
// (customers.CompleteHostedTx, in the transaction that records it). An outcome for no verification of ours, or one that expired,
// is Rejected for the operator; the database unavailable is retried.
func (s *Service) identity(ctx context.Context, id uuid.UUID, p Partner, o providers.IdentityOutcome) (Result, error) {
	if s.cfg.Verifications == nil {
		return s.reject(ctx, id, "no KYC service in this process to apply the identification of "+o.ProviderReference, nil)
	}
	if o.Reference == "" {
		return s.settle(ctx, id, Result{Status: Ignored, Outcome: "identification of " + o.ProviderReference + " was not started by us"})
	}
	return s.apply(ctx, id, func(tx pgx.Tx) (Result, error) {
		ss, replayed, err := s.cfg.Verifications.CompleteHostedTx(ctx, tx, p.Environment, o.Reference,
			customers.HostedOutcome{Approved: o.Approved, Reason: o.Reason})
		switch {
		case errors.Is(err, customers.ErrSessionNotFound), errors.Is(err, customers.ErrSessionExpired):
			return Result{Status: Rejected, Outcome: fmt.Sprintf("identification %s (%s): %v", o.Reference, o.ProviderReference, err),
				Refusal: err}, nil
		case err != nil:
			return Result{}, err
		}
		outcome := fmt.Sprintf("verification %s of customer %s: %s", ss.ID, ss.CustomerID, ss.Status)
		if replayed {
			outcome += " (already completed: unchanged)"
		}
		return Result{Status: Processed, Outcome: outcome}, nil
	})
}
