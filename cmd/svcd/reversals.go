package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/partners"
	"svc/payments/transfers"
)

// payoutReversals is what credits back a settled payout the bank reversed, by reference kind
// (issue 19): transfers. Offramp payouts ("payout:<id>") have none yet: their reversal is
// left REJECTED for the operator (docs/live.md).
func payoutReversals(tfs *transfers.Service) map[string]partners.PayoutReverser {
	return map[string]partners.PayoutReverser{
		"transfer": func(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (bool, error) {
			_, applied, err := tfs.ReverseTx(ctx, tx, id, reason)
			if errors.Is(err, transfers.ErrNotSettled) {
				return false, fmt.Errorf("%w: %v", partners.ErrNotReversible, err)
			}
			return applied, err
		},
	}
}
