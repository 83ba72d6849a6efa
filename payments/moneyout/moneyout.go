// Package moneyout is the skeleton the three money-out domains share: withdrawals (USDT to
// a wallet), transfers (a bank payout debited from the merchant's USDT) and offramp payouts
// (NGN to a customer's bank). Each owns its table and its state machine; this package holds
// what their lifecycles have in common, so the three read as one shape:
//
//   - create: the record, its job (queue money_out, a jobs.StepWorker) and the hold of its
//     funds (Funds.Hold: available -> pending) commit together;
//   - the job's step asks the partner (custodian or bank) under the record's reference and
//     finishes the record in a transaction of its own (Step): settled (Funds.Settle:
//     pending -> external) or failed (Funds.Release: pending -> available), each with its
//     event; a partner still working is asked again later (the job snoozes);
//   - the bank's reversal of a settled payout credits the funds back (Funds.Reverse:
//     external -> available) in the caller's transaction.
//
// Ledger references are "<ref>:hold|settle|release|reversal" and kinds "<kind>.hold" ...,
// so a retried step never moves money twice.
package moneyout

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// Queue is the river queue of the money-out jobs (withdrawals, transfers, payouts).
const Queue = "money_out"

// Recorder records an event in the caller's transaction; *events.Recorder is one.
type Recorder = events.Writer

// JobInserter enqueues river jobs in the caller's transaction; *jobs.Client is one.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Funds is the money one record moves out: whose it is (a merchant's, or a customer's for
// offramp payouts), how much, and the record's ledger reference and kind.
type Funds struct {
	Tenant   payments.Tenant
	Customer *uuid.UUID // nil: the merchant's funds
	Amount   money.Amount
	Ref      string // "withdrawal:<id>", "transfer:<id>", "payout:<id>"
	Kind     string // "withdrawal", "transfer", "payout"
	Metadata map[string]string
}

// Account is the owner's account of purpose p.
func (f Funds) Account(p ledger.Purpose) ledger.Account {
	if f.Customer != nil {
		return ledger.Customer(*f.Customer, p)
	}
	return ledger.Merchant(f.Tenant.MerchantID, p)
}

func (f Funds) post(ctx context.Context, tx pgx.Tx, leg, desc string, from, to ledger.Account) (ledger.Posted, error) {
	return ledger.Post(ctx, tx, ledger.Transaction{MerchantID: f.Tenant.MerchantID, Environment: f.Tenant.Environment,
		Reference: f.Ref + ":" + leg, Kind: f.Kind + "." + leg, Description: desc,
		Postings: ledger.Move(from, to, f.Amount), Metadata: f.Metadata})
}

// Hold moves the amount from the owner's available balance to its pending one (at
// creation; posted last in its transaction, as it locks the owner's balance rows until the
// commit). Errors: *ledger.InsufficientBalanceError, the database's.
func (f Funds) Hold(ctx context.Context, tx pgx.Tx, desc string) error {
	_, err := f.post(ctx, tx, "hold", desc, f.Account(ledger.Available), f.Account(ledger.Pending))
	return err
}

// Settle moves the held amount out (owner pending -> system:external): the partner paid it.
func (f Funds) Settle(ctx context.Context, tx pgx.Tx, desc string) (ledger.Posted, error) {
	return f.post(ctx, tx, "settle", desc, f.Account(ledger.Pending), ledger.System(ledger.External))
}

// Release gives the held amount back (owner pending -> available): the partner refused it.
func (f Funds) Release(ctx context.Context, tx pgx.Tx, desc string) (ledger.Posted, error) {
	return f.post(ctx, tx, "release", desc, f.Account(ledger.Pending), f.Account(ledger.Available))
}

// Reverse credits a settled amount back (system:external -> owner available): the bank
// reversed the payout after it settled.
func (f Funds) Reverse(ctx context.Context, tx pgx.Tx, desc string) (ledger.Posted, error) {
	return f.post(ctx, tx, "reversal", desc, ledger.System(ledger.External), f.Account(ledger.Available))
}

// Step runs one step of a record in a transaction of its own. moved is the owner's
// ErrNotFound, which its compare-and-set answers when the record is no longer where the
// step starts: another worker finished it first, so the step is done.
func Step(ctx context.Context, pool *pgxpool.Pool, moved error, fn func(tx pgx.Tx) error) error {
	err := postgres.InTx(ctx, pool, fn)
	if errors.Is(err, moved) {
		return nil
	}
	return err
}

// Deps is what each money-out service is built with beside its own settings: each domain's
// Config embeds it, and svcd builds one for the three.
type Deps struct {
	Providers providers.Environments // the custodian and the bank partner of each environment
	Events    Recorder
	Jobs      JobInserter
	// Poll is how long a record whose partner is still working (a send not yet confirmed, a
	// payout accepted but not settled) waits before the partner is asked again; zero: the
	// domain's default (WithDefaults).
	Poll time.Duration
	Now  func() time.Time // default time.Now
}

// WithDefaults is d with what it left zero filled: the clock (time.Now) and Poll (poll, the
// domain's default).
func (d Deps) WithDefaults(poll time.Duration) Deps {
	d.Now = payments.OrNow(d.Now)
	if d.Poll <= 0 {
		d.Poll = poll
	}
	return d
}

// Stamp is Now() in UTC at the tables' precision (microseconds).
func (d Deps) Stamp() time.Time { return payments.Stamp(d.Now()) }

// Record records event typ of tenant t with data in the caller's transaction.
func (d Deps) Record(ctx context.Context, tx pgx.Tx, t payments.Tenant, typ events.Type, data any) error {
	_, err := d.Events.Record(ctx, tx, t.MerchantID, t.Environment, typ, data)
	return err
}

// Page applies the lists' paging defaults: page 1, 20 a page.
func Page(page, limit *int) {
	if *page < 1 {
		*page = 1
	}
	if *limit < 1 {
		*limit = 20
	}
}

// Bank statuses of a payout record (transfers and offramp payouts share them).
const (
	Processing = "PROCESSING"
	Settled    = "SETTLED"
	Failed     = "FAILED"
)

// AdvancePayout is the job's step of a bank payout record (transfers, offramp payouts):
// the bank is asked under the record's reference (asking again answers the same payout's
// state); settled -> finish(Settled), refused -> finish(Failed) with the bank's reason,
// accepted -> wait `poll` and ask again. A Go error leaves the record as it was: the job
// retries it.
func AdvancePayout(ctx context.Context, bank providers.Bank, req providers.PayoutRequest, poll time.Duration,
	finish func(to, providerRef, reason string) error) (time.Duration, error) {
	res, err := bank.Payout(ctx, req)
	if err != nil {
		return 0, err
	}
	switch res.Status {
	case providers.PayoutSettled:
		return 0, finish(Settled, res.ProviderReference, "")
	case providers.PayoutFailed:
		reason := res.FailureReason
		if reason == "" {
			reason = "the bank refused the payout"
		}
		return 0, finish(Failed, res.ProviderReference, reason)
	}
	return poll, nil
}
