package deposits

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
)

// Machine is the deposit's state machine (see the package doc); every status change,
// this package's steps and payments/offramps' payouts alike, goes through it.
var Machine = payments.Machine{Name: "deposit", Moves: map[string][]string{
	PendingFX:         {PendingWithdrawal, Flagged, Failed},
	PendingWithdrawal: {Settled, Failed},
	Flagged:           {PendingFX, Failed}, // compliance clear / reject (issue 11)
	Settled:           {Reversed},          // the merchant's or the bank's reversal (issue 11, issue 32)
}}

// CanMove reports whether the state machine allows from -> to.
func CanMove(from, to string) bool { return Machine.Can(from, to) }

// This package is the only writer of the deposits table (issue 32; layering's owner test).
// The other packages that create or move deposits (payments/offramps: the crypto that
// arrives at an offramp) call CreateTx and MoveTx with their own transaction.

// CreateTx inserts d, a new deposit, in the caller's transaction. It begins PENDING_FX or
// PENDING_WITHDRAWAL, or SETTLED when the money is credited as it arrives (an offramp's
// INTERNAL_BALANCE crypto); SettledAt is set for a SETTLED one when missing.
//
// Errors: *payments.IllegalMoveError (another starting status), the database's.
func CreateTx(ctx context.Context, tx pgx.Tx, d Deposit) error {
	switch d.Status {
	case PendingFX, PendingWithdrawal:
	case Settled:
		if d.SettledAt == nil {
			at := d.CreatedAt
			d.SettledAt = &at
		}
	default:
		return &payments.IllegalMoveError{Machine: Machine.Name, From: "", To: d.Status}
	}
	return insert(ctx, tx, d)
}

// MoveTx moves deposit id to status to at `at`, in the caller's transaction: the row is
// read FOR UPDATE, the move checked by Machine, and reason kept as the failure reason (a
// move to FAILED or REVERSED). It returns the deposit as moved; recording its event is the
// caller's (EventData gives the data).
//
// Errors: ErrNotFound, *payments.IllegalMoveError (the deposit is not where the move
// starts: the row is left as it was), the database's.
func MoveTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, to, reason string, at time.Time) (Deposit, error) {
	d, err := getByID(ctx, tx, id)
	if err != nil {
		return Deposit{}, err
	}
	if err := moveTo(&d, to, at); err != nil {
		return Deposit{}, err
	}
	if reason != "" {
		d.FailureReason = reason
	}
	if err := update(ctx, tx, d); err != nil {
		return Deposit{}, fmt.Errorf("deposits: move: %w", err)
	}
	return d, nil
}

// moveTo applies the move from d's status to `to` on d (not stored), through Machine.
func moveTo(d *Deposit, to string, at time.Time) error {
	if err := Machine.Check(d.Status, to); err != nil {
		return err
	}
	d.Status, d.UpdatedAt = to, at
	if to == Settled {
		d.SettledAt = &at
	}
	return nil
}
