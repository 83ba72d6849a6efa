package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

// Merchant KYC review states (merchant_kyc.status).
const (
	KYCPending  = "PENDING"
	KYCApproved = "APPROVED"
	KYCRejected = "REJECTED"
)

// Operator actions on a merchant's KYC (audit_log action names).
const (
	ActionKYCApprove = "merchant.kyc.approve"
	ActionKYCReject  = "merchant.kyc.reject"
)

// AdmitLive checks that the merchant may use live: its live KYC is APPROVED. Settings come
// from the cache (an operator's review reaches running servers through NOTIFY).
// Errors: ErrUnauthorized (no such merchant), ErrKYCRequired.
func (s *Service) AdmitLive(ctx context.Context, merchantID uuid.UUID) error {
	st, ok, err := s.cache.settings(ctx, merchantID)
	if err != nil {
		return err
	}
	if !ok {
		return ErrUnauthorized
	}
	if !st.LiveApproved {
		return ErrKYCRequired
	}
	return nil
}

// ReviewKYC records an operator's decision on a merchant's live KYC (approve true:
// APPROVED, else REJECTED), with the audit row (actor, reason, the status before) and the
// cache notification in the same transaction. A merchant that never submitted gets a row
// (the operator reviewed its documents outside the API). It returns the status before.
// Errors: ErrNotFound.
func (s *Store) ReviewKYC(ctx context.Context, id uuid.UUID, approve bool, actor, reason string) (before string, err error) {
	status, action := KYCApproved, ActionKYCApprove
	if !approve {
		status, action = KYCRejected, ActionKYCReject
	}
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from merchants where id = $1)`, id).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		k, err := kycOf(ctx, tx, id, Live)
		if err != nil {
			return err
		}
		before = k.Status
		if _, err := tx.Exec(ctx, `insert into merchant_kyc (merchant_id, environment, status, submitted_at, reviewed_at)
			values ($1, 'live', $2, $3, $3)
			on conflict (merchant_id, environment) do update set status = excluded.status, reviewed_at = excluded.reviewed_at`,
			id, status, time.Now().UTC()); err != nil {
			return fmt.Errorf("merchant kyc: %w", err)
		}
		if err := audit(ctx, tx, actor, action, "merchant:"+id.String(), reason,
			map[string]any{"environment": "live", "before": before, "after": status}); err != nil {
			return err
		}
		return notify(ctx, tx, "merchant:"+id.String())
	})
	return before, err
}

// KYCStatuses returns the merchant's KYC status in sandbox and live (NOT_SUBMITTED when
// there is no record), for the operator's view.
func (s *Store) KYCStatuses(ctx context.Context, id uuid.UUID) (map[Environment]string, error) {
	out := map[Environment]string{}
	for _, env := range []Environment{Sandbox, Live} {
		k, err := kycOf(ctx, s.pool, id, env)
		if err != nil {
			return nil, err
		}
		out[env] = k.Status
	}
	return out, nil
}
