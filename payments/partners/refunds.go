package partners

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// Refunder returns money that arrived for no active account to its sender, through the
// partner that received it (*paystack.Client with its Refund API; the sandbox bank's
// SandboxRefunder). Asking again with the same request answers the same refund's state.
type Refunder interface {
	Refund(ctx context.Context, req providers.RefundRequest) (providers.RefundResult, error)
}

// States of a refund (table partner_refunds).
const (
	RefundPending   = "PENDING"   // recorded; the partner not yet asked (or asking failed: retried)
	RefundSubmitted = "SUBMITTED" // the partner accepted it and has not paid it back yet
	RefundRefunded  = "REFUNDED"  // paid back to the sender
	RefundFailed    = "FAILED"    // the partner refused or failed it: for the operator
)

// SandboxRefunder is the sandbox bank's refund: no external call, processed at once (the
// same record and job as live, so tests cover the path).
type SandboxRefunder struct{}

// Refund answers RefundProcessed with a reference derived from req.Reference.
func (SandboxRefunder) Refund(_ context.Context, req providers.RefundRequest) (providers.RefundResult, error) {
	d := sha256.Sum256([]byte("sandbox-refund:" + req.Reference))
	return providers.RefundResult{Status: providers.RefundProcessed, ProviderReference: "sbx_rfd_" + hex.EncodeToString(d[:8])}, nil
}

// giveBack records money that cannot be credited for return to its sender (in tx, with the
// notification's row locked) and enqueues the refund job; it answers the outcome's words.
// merchant and onramp are the inactive onramp's (nil for an unknown account).
func (s *Service) giveBack(ctx context.Context, tx pgx.Tx, eventRow uuid.UUID, p Partner, in providers.InboundTransfer,
	merchant, onramp *uuid.UUID, why string) (string, error) {
	if p.Refunder == nil {
		return "return the money to the sender (this partner has no refund capability)", nil
	}
	id := uuid.Must(uuid.NewV7())
	now := s.stamp()
	_, err := tx.Exec(ctx, `insert into partner_refunds (id, partner_event_id, provider, environment, merchant_id, onramp_id,
			bank_code, account_number, provider_reference, currency, amount, sender_name, reason, status, created_at, updated_at)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13, 'PENDING', $14, $14)`,
		id, eventRow, p.Name, p.Environment, merchant, onramp, in.BankCode, in.AccountNumber, in.ProviderReference,
		string(in.Amount.Asset), in.Amount.Minor, in.SenderName, why, now)
	if err != nil {
		return "", fmt.Errorf("partners: record the refund: %w", err)
	}
	if _, err := s.cfg.Jobs.InsertTx(ctx, tx, RefundArgs{ID: id}, nil); err != nil {
		return "", fmt.Errorf("partners: enqueue the refund: %w", err)
	}
	s.log.Warn("money for no active account: returning it to the sender", "provider", p.Name, "refund", id,
		"account", in.AccountNumber, "amount", in.Amount.String(), "why", why)
	return "refund " + id.String() + " returns it to the sender", nil
}

// refundNotice applies a partner's word that a refund changed state: it only wakes the
// refund's job (a new run enqueued with the notification's outcome), which asks the partner
// under the row lock (the API is the record, the notification only a prompt). Advancing here
// too would race the job: two askers at once, and a lost race writing FAILED over the
// winner's REFUNDED (issue 32).
func (s *Service) refundNotice(ctx context.Context, id uuid.UUID, p Partner, n providers.RefundNotice) (Result, error) {
	var rid uuid.UUID
	err := s.pool.QueryRow(ctx, `select id from partner_refunds where provider = $1 and provider_reference = $2
		order by created_at desc limit 1`, p.Name, n.ProviderReference).Scan(&rid)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.settle(ctx, id, Result{Status: Ignored, Outcome: "not a refund of ours (charge " + n.ProviderReference + ")"})
	}
	if err != nil {
		return Result{}, fmt.Errorf("partners: find the refund: %w", err)
	}
	return s.apply(ctx, id, func(tx pgx.Tx) (Result, error) {
		if _, err := s.cfg.Jobs.InsertTx(ctx, tx, RefundArgs{ID: rid}, nil); err != nil {
			return Result{}, fmt.Errorf("partners: wake the refund job: %w", err)
		}
		return Result{Status: Processed, Outcome: fmt.Sprintf("refund %s (%s notified): its job asks the partner", rid, n.Status)}, nil
	})
}

// RefundRecord is one refund as recorded (for the operator and tests).
type RefundRecord struct {
	ID                uuid.UUID
	PartnerEventID    uuid.UUID
	Provider          string
	Environment       string
	MerchantID        *uuid.UUID
	OnrampID          *uuid.UUID
	ProviderReference string
	Amount            money.Amount
	Reason            string
	Status            string
	ProviderRefundID  string
	FailureReason     string
	LastError         string
	Attempts          int
	RefundedAt        *time.Time
}

const refundCols = `id, partner_event_id, provider, environment, merchant_id, onramp_id, provider_reference, currency, amount,
	reason, status, coalesce(provider_refund_id, ''), coalesce(failure_reason, ''), coalesce(last_error, ''), attempts, refunded_at`

func scanRefund(row pgx.Row) (RefundRecord, error) {
	var (
		r        RefundRecord
		currency string
		amount   int64
	)
	err := row.Scan(&r.ID, &r.PartnerEventID, &r.Provider, &r.Environment, &r.MerchantID, &r.OnrampID, &r.ProviderReference,
		&currency, &amount, &r.Reason, &r.Status, &r.ProviderRefundID, &r.FailureReason, &r.LastError, &r.Attempts, &r.RefundedAt)
	r.Amount = money.New(money.Asset(currency), amount)
	return r, err
}

// RefundOf returns the refund recorded for a stored notification (pgx.ErrNoRows: none).
func (s *Service) RefundOf(ctx context.Context, eventRow uuid.UUID) (RefundRecord, error) {
	return scanRefund(s.pool.QueryRow(ctx, `select `+refundCols+` from partner_refunds where partner_event_id = $1`, eventRow))
}

// RefundMachine is the refund's state machine: the partner asked (SUBMITTED, asked again
// while it stays so), then paid back or failed.
var RefundMachine = payments.Machine{Name: "refund", Moves: map[string][]string{
	RefundPending:   {RefundSubmitted, RefundRefunded, RefundFailed},
	RefundSubmitted: {RefundRefunded, RefundFailed},
}}

// AdvanceRefund takes one step of a refund (the job's work) and returns how long to wait
// before asking the partner again (0: nothing left to do). One advancer at a time: the step
// holds the refund's row lock (select ... for update skip locked) from the read to the
// recorded outcome, partner call included; a run that finds the row locked returns 0 at once,
// since the holder takes the step and snoozes its own job if the partner has not finished.
// PENDING or SUBMITTED: the partner is asked (reference "refund:<id>"; asking again answers
// the same refund): processed -> REFUNDED; refused or failed -> FAILED, logged as an error
// for the operator; accepted -> SUBMITTED, asked again after Config.RefundPollEvery; every
// move checked by RefundMachine. A Go error (the partner unavailable) is recorded on the row
// (last_error, attempts) and returned: the job retries.
func (s *Service) AdvanceRefund(ctx context.Context, id uuid.UUID) (time.Duration, error) {
	var (
		wait    time.Duration
		callErr error
	)
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// InTx reruns the closure after a deadlock or serialization failure: an aborted
		// run's outcome must not outlive it.
		wait, callErr = 0, nil
		r, err := scanRefund(tx.QueryRow(ctx, `select `+refundCols+` from partner_refunds where id = $1 for update skip locked`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			var exists bool
			if err := tx.QueryRow(ctx, `select exists(select 1 from partner_refunds where id = $1)`, id).Scan(&exists); err != nil {
				return fmt.Errorf("partners: load refund %s: %w", id, err)
			}
			if !exists {
				return fmt.Errorf("partners: load refund %s: %w", id, pgx.ErrNoRows)
			}
			return nil // another advancer holds it
		}
		if err != nil {
			return fmt.Errorf("partners: load refund %s: %w", id, err)
		}
		if r.Status != RefundPending && r.Status != RefundSubmitted {
			return nil
		}
		p, ok := s.partners[r.Provider]
		if !ok || p.Refunder == nil {
			return fmt.Errorf("partners: %q cannot refund in this process: will retry", r.Provider)
		}
		res, err := p.Refunder.Refund(ctx, providers.RefundRequest{Reference: "refund:" + r.ID.String(),
			ProviderReference: r.ProviderReference, Amount: r.Amount, Reason: "returned: " + r.Reason})
		if err != nil {
			callErr = err
			_, uerr := tx.Exec(ctx, `update partner_refunds set attempts = attempts + 1, last_error = $2, updated_at = $3
				where id = $1`, id, err.Error(), s.stamp())
			return uerr
		}
		to, next := RefundSubmitted, s.cfg.RefundPollEvery
		switch res.Status {
		case providers.RefundProcessed:
			to, next = RefundRefunded, 0
		case providers.RefundFailed:
			to, next = RefundFailed, 0
		}
		if to != r.Status { // SUBMITTED asked again and still SUBMITTED is a poll, not a move
			if err := RefundMachine.Check(r.Status, to); err != nil {
				return err
			}
		}
		now := s.stamp()
		if _, err := tx.Exec(ctx, `update partner_refunds set status = $2, provider_refund_id = coalesce(nullif($3, ''), provider_refund_id),
				failure_reason = nullif($4, ''), attempts = attempts + 1, last_error = null, updated_at = $5,
				refunded_at = case when $2 = 'REFUNDED' then $5::timestamptz else refunded_at end
			where id = $1`, id, to, res.ProviderReference, res.FailureReason, now); err != nil {
			return fmt.Errorf("partners: record the refund: %w", err)
		}
		if to == RefundFailed {
			s.log.Error("a refund to a sender failed: return the money by hand", "refund", id, "provider", r.Provider,
				"charge", r.ProviderReference, "amount", r.Amount.String(), "reason", res.FailureReason)
		}
		wait = next
		return nil
	})
	if err != nil {
		return 0, err
	}
	return wait, callErr
}
