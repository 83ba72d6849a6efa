package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/offramps"
	"svc/payments/partners"
	"svc/payments/transfers"
)

// payoutReversals is what credits back a settled payout the bank reversed, by reference kind
// (issue 19): a transfer's USDT to the merchant, an offramp payout's NGN to the customer.
func payoutReversals(tfs *transfers.Service, ofs *offramps.Service) map[string]partners.PayoutReverser {
	return map[string]partners.PayoutReverser{
		"payout": func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (bool, error) {
			applied, err := ofs.ReversePayoutTx(ctx, tx, id, reason)
			if errors.Is(err, offramps.ErrPayoutNotSettled) {
				return false, fmt.Errorf("%w: %v", partners.ErrNotReversible, err)
			}
			return applied, err
		},
		"transfer": func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (bool, error) {
			_, applied, err := tfs.ReverseTx(ctx, tx, id, reason)
			if errors.Is(err, transfers.ErrNotSettled) {
				return false, fmt.Errorf("%w: %v", partners.ErrNotReversible, err)
			}
			return applied, err
		},
	}
}
