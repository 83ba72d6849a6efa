package offramps

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/deposits"
	"svc/payments/events"
)

// ErrPayoutNotSettled: the payout is still PROCESSING, so there is no settlement to reverse.
var ErrPayoutNotSettled = errors.New("offramps: the payout is not settled: nothing to reverse")

// ReversePayoutTx applies the bank's reversal of a SETTLED offramp payout (the NGN reached
// the bank and came back; issue 19), in the caller's transaction, as a failed payout ends:
// the payout ends FAILED and its deposit REVERSED (deposit.failed with status REVERSED)
// ("reversed by the bank after settlement: <reason>"),
// the NGN is credited to the customer's available balance in full ("payout:<id>:reversal",
// system external -> customer available) and customer.balance.credited is recorded with the
// reason. applied is false for a payout already FAILED (nothing to do).
//
// Errors: ErrNotFound, ErrPayoutNotSettled (still PROCESSING), the database's.
func (s *Service) ReversePayoutTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (applied bool, err error) {
	why := "reversed by the bank after settlement"
	if reason != "" {
		why += ": " + reason
	}
	now := s.cfg.Stamp()
	if err := PayoutMachine.Check(PayoutSettled, PayoutFailed); err != nil {
		return false, err
	}
	p, err := scanPayout(tx.QueryRow(ctx, `update payouts set status = 'FAILED', updated_at = $2, failure_reason = $3
		where id = $1 and status = 'SETTLED' returning `+payoutCols, id, now, why))
	if errors.Is(err, ErrNotFound) {
		p, err = scanPayout(tx.QueryRow(ctx, `select `+payoutCols+` from payouts where id = $1`, id))
		switch {
		case err != nil:
			return false, err
		case p.Status == PayoutFailed:
			return false, nil
		}
		return false, ErrPayoutNotSettled
	}
	if err != nil {
		return false, fmt.Errorf("offramps: reverse payout: %w", err)
	}
	f := payoutFunds(p)
	f.Metadata = map[string]string{"payout_id": p.ID.String(), "provider_reference": p.ProviderReference}
	posted, err := f.Reverse(ctx, tx, "NGN payout to "+p.Bank.AccountNumber+" "+why)
	if err != nil {
		return false, err
	}
	dep, err := deposits.MoveTx(ctx, tx, p.DepositID, deposits.Reversed, why, now)
	if err != nil {
		return false, fmt.Errorf("offramps: deposit: %w", err)
	}
	// deposit.failed with status REVERSED, as a merchant's reversal of a settled deposit
	// (the spec has no deposit.reversed; docs/decisions.md "Money has one owner").
	if err := s.cfg.Record(ctx, tx, p.Tenant, events.DepositFailed, deposits.EventData(dep)); err != nil {
		return false, err
	}
	if err := s.credited(ctx, tx, p, posted, why); err != nil {
		return false, err
	}
	return true, nil
}
