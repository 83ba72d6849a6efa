package transfers

import (
	"github.com/riverqueue/river"

	"svc/payments/moneyout"
)

// payout names the transfer's job ("transfer_payout", {"transfer_id": ...}).
type payout struct{}

func (payout) Kind() string    { return "transfer_payout" }
func (payout) IDField() string { return "transfer_id" }

// PayoutArgs is the job that pays one transfer out, enqueued in the transaction that creates
// it (a moneyout.Job); a payout the bank has not settled yet is snoozed.
type PayoutArgs = moneyout.Job[payout]

// Register adds the transfer worker.
func Register(workers *river.Workers, svc *Service) error {
	return moneyout.Register[payout](workers, svc.Advance)
}
