package ledger

import (
	"errors"
	"fmt"

	"svc/payments/money"
)

// InsufficientBalanceError is returned by Post when a posting would take an account that
// may not go negative below zero. Nothing was written. errors.Is(err, ErrInsufficientBalance)
// matches any of them; the gateway answers 422 INSUFFICIENT_BALANCE (APICode).
type InsufficientBalanceError struct {
	Account Account
	Asset   money.Asset
	Balance int64 // minor units before the post
	Change  int64 // the post's net change (negative)
}

// ErrInsufficientBalance matches every *InsufficientBalanceError.
var ErrInsufficientBalance error = &InsufficientBalanceError{}

func (e *InsufficientBalanceError) Error() string {
	if e.Asset == "" {
		return "insufficient balance"
	}
	return fmt.Sprintf("insufficient balance: %s %s holds %s, the movement needs %s",
		e.Account, e.Asset, money.Format(e.Asset, e.Balance), money.Format(e.Asset, -e.Change))
}

// APICode is the gateway's error code.
func (e *InsufficientBalanceError) APICode() string { return "INSUFFICIENT_BALANCE" }

// Is matches by type.
func (e *InsufficientBalanceError) Is(target error) bool {
	_, ok := target.(*InsufficientBalanceError)
	return ok
}

// UnbalancedError is a transaction whose postings do not sum to zero in an asset; found by
// Validate before any SQL.
type UnbalancedError struct {
	Asset money.Asset
	Sum   int64
}

// ErrUnbalanced matches every *UnbalancedError.
var ErrUnbalanced error = &UnbalancedError{}

func (e *UnbalancedError) Error() string {
	return fmt.Sprintf("ledger: postings do not sum to zero in %s (sum %s)", e.Asset, money.Format(e.Asset, e.Sum))
}

// Is matches by type.
func (e *UnbalancedError) Is(target error) bool {
	_, ok := target.(*UnbalancedError)
	return ok
}

// InvalidTransactionError is a malformed transaction (no reference, one posting, a zero
// amount, an unknown asset or owner...); found by Validate before any SQL.
type InvalidTransactionError struct{ Reason string }

// ErrInvalidTransaction matches every *InvalidTransactionError.
var ErrInvalidTransaction error = &InvalidTransactionError{}

func (e *InvalidTransactionError) Error() string { return "ledger: invalid transaction: " + e.Reason }

// Is matches by type.
func (e *InvalidTransactionError) Is(target error) bool {
	_, ok := target.(*InvalidTransactionError)
	return ok
}

func invalid(format string, args ...any) error {
	return &InvalidTransactionError{Reason: fmt.Sprintf(format, args...)}
}

// ErrReferenceConflict: the reference was already posted with different postings.
var ErrReferenceConflict = errors.New("ledger: reference already posted with different postings")
