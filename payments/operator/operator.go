// Package operator is what the service's operators (the svc CLI) and the sandbox's
// equivalents do to payments records that no merchant route changes (issue 11), each with
// its row in the audit log (migration 001: who, when, what, why) committed in the same
// transaction as the change:
//
//   - deposits: reverse (SETTLED -> REVERSED, the credited amount debited back, any shortfall
//     on the merchant's receivable account), compliance review (list FLAGGED; clear, which
//     resumes the lifecycle to SETTLED; reject, which ends FAILED with the NGN returned, or
//     REVERSED when already credited). The state changes themselves are
//     payments/deposits' (ReverseTx, ClearTx, RejectTx); this package adds the audit row.
//
// Every action is idempotent under repetition and concurrency (the deposit row is locked
// first); a repeat that changes nothing is still audited, with "changed": false.
package operator

import (
	"context"
	"os"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/deposits"
	"svc/persistence/audit"
	"svc/persistence/postgres"
)

// Entry is one audit_log row (persistence/audit owns the table).
type Entry = audit.Entry

// Audit writes e in tx (so it commits or rolls back with the change it records).
func Audit(ctx context.Context, tx postgres.Querier, e Entry) error { return audit.Write(ctx, tx, e) }

// DefaultActor is $USER@hostname (the CLI's --actor default); "operator" parts stand in for
// what is unknown.
func DefaultActor(env func(string) string) string {
	user := env("USER")
	if user == "" {
		user = env("LOGNAME")
	}
	if user == "" {
		user = "operator"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return user + "@" + host
}

// Deposit actions.
const (
	ActionDepositReverse = "deposit.reverse"
	ActionDepositClear   = "deposit.clear"
	ActionDepositReject  = "deposit.reject"
)

// Deposits performs the operator's deposit actions.
type Deposits struct {
	svc *deposits.Service
}

// NewDeposits returns the deposit actions over svc (which needs only its Events and Jobs).
func NewDeposits(svc *deposits.Service) *Deposits {
	return &Deposits{svc: svc}
}

// Reverse is deposits.ReverseTx with its audit row. t scopes the deposit (nil: any).
func (o *Deposits) Reverse(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error) {
	return o.do(ctx, ActionDepositReverse, actor, t, id, reason, o.svc.ReverseTx)
}

// Clear is deposits.ClearTx with its audit row.
func (o *Deposits) Clear(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error) {
	return o.do(ctx, ActionDepositClear, actor, t, id, reason, o.svc.ClearTx)
}

// Reject is deposits.RejectTx with its audit row.
func (o *Deposits) Reject(ctx context.Context, actor string, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error) {
	return o.do(ctx, ActionDepositReject, actor, t, id, reason, o.svc.RejectTx)
}

// Review lists deposits awaiting compliance review (FLAGGED), oldest first.
func (o *Deposits) Review(ctx context.Context, f deposits.ReviewFilter) ([]deposits.Deposit, error) {
	return o.svc.ListForReview(ctx, f)
}

type action func(ctx context.Context, tx pgx.Tx, t *payments.Tenant, id uuid.UUID, reason string) (deposits.Outcome, error)

func (o *Deposits) do(ctx context.Context, name, actor string, t *payments.Tenant, id uuid.UUID, reason string, fn action) (deposits.Outcome, error) {
	var out deposits.Outcome
	err := o.svc.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		if out, err = fn(ctx, tx, t, id, reason); err != nil {
			return err
		}
		d := out.Deposit
		detail := map[string]any{
			"merchant_id": d.Tenant.MerchantID, "environment": d.Tenant.Environment,
			"from": out.From, "to": d.Status, "changed": out.Changed,
		}
		if out.Debited != nil {
			detail["debited"] = out.Debited.String() + " " + string(out.Debited.Asset)
		}
		if out.Shortfall != nil {
			detail["receivable"] = out.Shortfall.String() + " " + string(out.Shortfall.Asset)
		}
		return Audit(ctx, tx, Entry{Actor: actor, Action: name, Subject: "deposit:" + id.String(), Reason: reason, Detail: detail})
	})
	return out, err
}
