package customers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/persistence/postgres"
)

// Expired is how a PENDING hosted verification whose session has expired is shown: the
// provider's callback is refused from then on (ErrSessionExpired) and the merchant starts
// another one. It is computed on read; the row stays PENDING.
const Expired = "EXPIRED"

// Errors of hosted flows.
var (
	// ErrVerificationNotFound: no such verification of this customer, merchant and
	// environment (404).
	ErrVerificationNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "verification not found"}
	// ErrSessionNotFound: no hosted session with this reference in this environment (404).
	ErrSessionNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "verification session not found"}
	// ErrSessionExpired: the provider's outcome came after the session expired (422).
	ErrSessionExpired error = &payments.Error{Code: "INVALID_STATE", Message: "the verification session has expired; start a new one"}
)

// HostedOutcome is the KYC provider's callback on a hosted session: the customer passed or
// not, and why not.
type HostedOutcome struct {
	Approved bool
	Reason   string // when rejected
}

// Session is a hosted verification as its page (or the provider's callback) sees it.
type Session struct {
	Verification
	Tenant   payments.Tenant
	Customer Customer
}

// shown is the status a reader sees at now: EXPIRED for a PENDING session past its expiry.
func shown(v Verification, now time.Time) Verification {
	if v.Status == Pending && v.ExpiresAt != nil && !now.Before(*v.ExpiresAt) {
		v.Status = Expired
	}
	return v
}

// GetVerification returns one of the customer's verifications (submission or hosted).
// Errors: ErrNotFound (no such customer for the tenant), ErrVerificationNotFound.
func (s *Service) GetVerification(ctx context.Context, t payments.Tenant, customerID, id uuid.UUID) (Verification, Customer, error) {
	c, err := s.Get(ctx, t, customerID)
	if err != nil {
		return Verification{}, c, err
	}
	v, err := scanVerification(s.pool.QueryRow(ctx, `select `+verificationCols+` from kyc_verifications
		where merchant_id = $1 and environment = $2 and customer_id = $3 and id = $4`, t.MerchantID, t.Environment, customerID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Verification{}, c, ErrVerificationNotFound
	}
	if err != nil {
		return Verification{}, c, fmt.Errorf("customers: verification: %w", err)
	}
	return shown(v, s.clock()), c, nil
}

const sessionCols = `merchant_id, environment, ` + verificationCols

func (s *Service) loadSession(ctx context.Context, q postgres.Querier, environment, reference string, lock bool) (Session, error) {
	sql := `select ` + sessionCols + ` from kyc_verifications
		where environment = $1 and provider_reference = $2 and kind = 'hosted'`
	if lock {
		sql += ` for update`
	}
	var ss Session
	v := &ss.Verification
	err := q.QueryRow(ctx, sql, environment, reference).Scan(append([]any{&ss.Tenant.MerchantID, &ss.Tenant.Environment},
		verificationDest(v)...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ss, ErrSessionNotFound
	}
	if err != nil {
		return ss, fmt.Errorf("customers: session: %w", err)
	}
	ss.Customer, err = Load(ctx, q, ss.Tenant, ss.CustomerID, lock)
	return ss, err
}

// Session returns the hosted verification of the session reference in environment (the
// sandbox page shows it). Errors: ErrSessionNotFound.
func (s *Service) Session(ctx context.Context, environment, reference string) (Session, error) {
	ss, err := s.loadSession(ctx, s.pool, environment, reference, false)
	ss.Verification = shown(ss.Verification, s.clock())
	return ss, err
}

// CompleteHosted applies the KYC provider's outcome of the hosted session reference in
// environment, in one transaction: the verification becomes VERIFIED or REJECTED (with the
// reason), an approval raises the customer's tier (tier 1: TIER_1 and
// customer.tier1_verified; tier 2: TIER_2 and customer.tier2_verified; a customer already
// at or above it keeps its tier and no event is recorded) and a tier 2 rejection records
// customer.tier2_rejected (a tier 1 rejection has no event, as for submissions).
//
// Idempotent: a session already completed is answered as it is (replayed true) and
// nothing changes, whatever the repeated outcome says: the first outcome stands.
// Errors: ErrSessionNotFound (unknown, or of the other environment), ErrSessionExpired.
func (s *Service) CompleteHosted(ctx context.Context, environment, reference string, out HostedOutcome) (ss Session, replayed bool, err error) {
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		ss, replayed, err = s.CompleteHostedTx(ctx, tx, environment, reference, out)
		return err
	})
	return ss, replayed, err
}

// CompleteHostedTx is CompleteHosted in the caller's transaction (payments/partners applies
// a partner's identification notification and records it in one transaction). A refusal
// (ErrSessionNotFound, ErrSessionExpired) comes before any write.
func (s *Service) CompleteHostedTx(ctx context.Context, tx pgx.Tx, environment, reference string, out HostedOutcome) (ss Session, replayed bool, err error) {
	err = func() error {
		var err error
		ss, err = s.loadSession(ctx, tx, environment, reference, true)
		if err != nil {
			return err
		}
		if ss.Status != Pending {
			replayed = true
			return nil
		}
		now := s.clock()
		if ss.ExpiresAt != nil && !now.Before(*ss.ExpiresAt) {
			return ErrSessionExpired
		}
		ss.Status, ss.Reason = Verified, ""
		if !out.Approved {
			ss.Status, ss.Reason = Rejected, out.Reason
			if ss.Reason == "" {
				ss.Reason = "rejected by the KYC provider"
			}
		}
		if _, err := tx.Exec(ctx, `update kyc_verifications set status = $2, reason = $3, completed_at = $4 where id = $1`,
			ss.ID, ss.Status, postgres.NullIfEmpty(ss.Reason), now); err != nil {
			return fmt.Errorf("customers: complete session: %w", err)
		}
		t := ss.Tenant
		switch {
		case !out.Approved && ss.Tier == 2:
			reason := ss.Reason
			_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, events.CustomerTier2Rejected, eventData(ss.Customer, &reason))
			return err
		case !out.Approved || TierRank(ss.Customer.KYCTier) >= ss.Tier:
			return nil
		}
		tier, typ := Tier1, events.CustomerTier1Verified
		if ss.Tier == 2 {
			tier, typ = Tier2, events.CustomerTier2Verified
		}
		if ss.Customer, err = s.setTier(ctx, tx, t, ss.CustomerID, ss.Customer.KYCTier, tier); err != nil {
			return err
		}
		_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, typ, eventData(ss.Customer, nil))
		return err
	}()
	return ss, replayed, err
}
