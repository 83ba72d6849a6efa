package withdrawals

import (
	"github.com/riverqueue/river"

	"svc/payments/moneyout"
)

// process names the withdrawal's job ("withdrawal_process", {"withdrawal_id": ...}).
type process struct{}

func (process) Kind() string    { return "withdrawal_process" }
func (process) IDField() string { return "withdrawal_id" }

// ProcessArgs is the job that drives one withdrawal to SETTLED or FAILED, enqueued in the
// transaction that creates it (a moneyout.Job).
type ProcessArgs = moneyout.Job[process]

// Register adds the withdrawal worker.
func Register(workers *river.Workers, svc *Service) error {
	return moneyout.Register[process](workers, svc.Advance)
}
