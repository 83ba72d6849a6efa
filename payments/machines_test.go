package payments_test

import (
	"errors"
	"slices"
	"testing"

	"svc/payments"
	"svc/payments/customers"
	"svc/payments/deposits"
	"svc/payments/invoices"
	"svc/payments/offramps"
	"svc/payments/transfers"
	"svc/payments/withdrawals"
)

// TestEveryMachine enumerates every pair of statuses of each production state machine
// against the moves written out here (the spec's and DESIGN.md's state tables): exactly these
// are allowed, every other pair is a typed *payments.IllegalMoveError.
func TestEveryMachine(t *testing.T) {
	for _, c := range []struct {
		machine  payments.Machine
		statuses []string // every stored status, moving or final
		allowed  []string // "FROM>TO"
	}{
		{deposits.Machine, deposits.Statuses, []string{
			"PENDING_FX>PENDING_WITHDRAWAL", "PENDING_FX>FLAGGED", "PENDING_FX>FAILED",
			"PENDING_WITHDRAWAL>SETTLED", "PENDING_WITHDRAWAL>FAILED",
			"FLAGGED>PENDING_FX", "FLAGGED>FAILED",
			"SETTLED>REVERSED",
		}},
		{withdrawals.Machine, withdrawals.Statuses, []string{
			"PENDING>SUBMITTED", "PENDING>FAILED", "SUBMITTED>SETTLED", "SUBMITTED>FAILED",
		}},
		{transfers.Machine, transfers.Statuses, []string{
			"PROCESSING>SETTLED", "PROCESSING>FAILED", "SETTLED>FAILED",
		}},
		{offramps.PayoutMachine, []string{offramps.PayoutProcessing, offramps.PayoutSettled, offramps.PayoutFailed}, []string{
			"PROCESSING>SETTLED", "PROCESSING>FAILED", "SETTLED>FAILED",
		}},
		{invoices.Machine, invoices.Statuses, []string{
			"draft>pending", "draft>canceled",
			"pending>draft", "pending>canceled", "pending>overdue", "pending>paid",
			"overdue>paid",
		}},
		{customers.TierMachine, []string{customers.Tier0, customers.Tier1, customers.Tier2}, []string{
			"TIER_0>TIER_1", "TIER_1>TIER_2",
		}},
	} {
		t.Run(c.machine.Name, func(t *testing.T) {
			for _, s := range c.machine.Statuses() {
				if !slices.Contains(c.statuses, s) {
					t.Errorf("the machine names %s, which is no stored status", s)
				}
			}
			for _, from := range c.statuses {
				for _, to := range c.statuses {
					want := slices.Contains(c.allowed, from+">"+to)
					err := c.machine.Check(from, to)
					if want != (err == nil) {
						t.Errorf("%s -> %s: allowed %v, want %v", from, to, err == nil, want)
					}
					if err != nil && !errors.Is(err, payments.ErrIllegalMove) {
						t.Errorf("%s -> %s: %v is not an illegal move", from, to, err)
					}
				}
			}
		})
	}
}
