package offramps

import (
	"github.com/riverqueue/river"

	"svc/payments/moneyout"
)

// payout names the offramp payout's job ("offramp_payout", {"payout_id": ...}).
type payout struct{}

func (payout) Kind() string    { return "offramp_payout" }
func (payout) IDField() string { return "payout_id" }

// PayoutArgs is the job that pays out one offramp deposit in NGN, enqueued in the
// transaction that converts the deposit (a moneyout.Job); a payout the bank has not settled
// yet is snoozed.
type PayoutArgs = moneyout.Job[payout]

// Register adds the payout worker.
func Register(workers *river.Workers, svc *Service) error {
	return moneyout.Register[payout](workers, svc.AdvancePayout)
}
