package deposits

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/persistence/postgres"
)

// Operator actions on deposits (issue 11): reversal of a settled deposit and the compliance
// review of a flagged one. Each runs in one transaction that first locks the deposit row
// (FOR UPDATE), so repeated and concurrent calls serialise: the first one acts, the others
// find the result and change nothing (Outcome.Changed false). Ledger references are fixed
// per deposit and step as well ("deposit:<id>:reverse", ":return", ":unwind"), so money can
// never move twice. They need only the service's Events and Jobs (the CLI builds a service
// without onramps, rates or providers).
//
//	reverse: SETTLED -> REVERSED. The settled amount is debited back from the balance that
//	         was credited (the customer's or merchant's available balance; the merchant's for
//	         an ONCHAIN settlement, whose crypto has left); what that balance no longer covers
//	         is recorded on the merchant's receivable account (ledger.Receivable, allowed
//	         negative: what the merchant owes). The NGN goes back to the sender. Events:
//	         deposit.failed with status REVERSED (the catalogue has no deposit.reversed), and
//	         customer.balance.refunded when a customer's balance was debited.
//	clear:   FLAGGED -> PENDING_FX with the hold lifted, and the conversion job: the lifecycle
//	         resumes to SETTLED. A PENDING_FX deposit still marked for a hold just loses
//	         the mark. A deposit already past the hold is left alone.
//	reject:  FLAGGED, PENDING_FX or PENDING_WITHDRAWAL -> FAILED with the NGN returned to the
//	         sender (converted funds unwound), deposit.failed; SETTLED -> reversed as above
//	         (REVERSED); FAILED or REVERSED: nothing to do.

// ErrNotReversible: only an NGN deposit can be reversed or rejected here (an offramp's crypto
// deposit is settled by its offramp) (422).
var ErrNotReversible error = &payments.Error{Code: "INVALID_STATE", Message: "only NGN deposits can be reversed, cleared or rejected"}

// stateError is ErrInvalidState with a sentence naming the deposit's status (the API's
// detail).
type stateError struct{ msg string }

func (e *stateError) Error() string   { return e.msg }
func (e *stateError) APICode() string { return "INVALID_STATE" }
func (e *stateError) Unwrap() error   { return ErrInvalidState }

func invalidState(format string, args ...any) error {
	return &stateError{msg: fmt.Sprintf(format, args...)}
}

// Outcome is the result of an operator action.
type Outcome struct {
	Deposit Deposit
	// Changed is false when the deposit was already in the action's end state (a repeat).
	Changed bool
	// Debited is what was taken back from the credited balance, Shortfall what that balance
	// did not cover and was recorded on the merchant's receivable account (reversal only).
	Debited, Shortfall *money.Amount
	// From is the status before the action.
	From string
}

// Reverse reverses a SETTLED deposit (see the comment above). t scopes the lookup (a
// merchant's sandbox request; another tenant's deposit is ErrNotFound); nil is the operator.
//
// Errors: ErrNotFound, ErrInvalidState (not SETTLED or REVERSED), ErrNotReversible, the
// database's.
func (s *Service) Reverse(ctx context.Context, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	return postgres.InTxValue(ctx, s.pool, postgres.InTx, func(tx pgx.Tx) (Outcome, error) { return s.ReverseTx(ctx, tx, t, id, reason) })
}

// Clear lifts the compliance hold of a FLAGGED deposit; see Reverse for t and the errors.
func (s *Service) Clear(ctx context.Context, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	return postgres.InTxValue(ctx, s.pool, postgres.InTx, func(tx pgx.Tx) (Outcome, error) { return s.ClearTx(ctx, tx, t, id, reason) })
}

// Reject ends a held (or in-flight) deposit FAILED with the NGN returned, or reverses a
// settled one; see Reverse for t and the errors.
func (s *Service) Reject(ctx context.Context, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	return postgres.InTxValue(ctx, s.pool, postgres.InTx, func(tx pgx.Tx) (Outcome, error) { return s.RejectTx(ctx, tx, t, id, reason) })
}

// lockFor reads the deposit FOR UPDATE, scoped to t when given.
func lockFor(ctx context.Context, tx pgx.Tx, t *payments.Tenant, id uuid.UUID) (Deposit, error) {
	d, err := getByID(ctx, tx, id)
	if err != nil {
		return Deposit{}, err
	}
	if t != nil && d.Tenant != *t {
		return Deposit{}, ErrNotFound
	}
	if d.Type != TypeNGN || d.OnrampID == nil {
		return Deposit{}, ErrNotReversible
	}
	return d, nil
}

func withReason(prefix, reason string) string {
	if reason == "" {
		return prefix
	}
	return prefix + ": " + reason
}

// ReverseTx is Reverse in the caller's transaction (the operator's audit row commits with it).
func (s *Service) ReverseTx(ctx context.Context, tx pgx.Tx, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	d, err := lockFor(ctx, tx, t, id)
	if err != nil {
		return Outcome{}, err
	}
	switch d.Status {
	case Reversed:
		return Outcome{Deposit: d, From: d.Status}, nil
	case Settled:
		return s.reverse(ctx, tx, d, withReason("REVERSED", reason))
	}
	return Outcome{}, invalidState("a %s deposit cannot be reversed (only a SETTLED one)", d.Status)
}

// reverse is SETTLED -> REVERSED for the locked deposit d.
func (s *Service) reverse(ctx context.Context, tx pgx.Tx, d Deposit, reason string) (Outcome, error) {
	out := Outcome{From: d.Status}
	if d.SettledAmount == nil {
		return Outcome{}, fmt.Errorf("deposits: settled deposit %s has no settled amount", d.ID)
	}
	m, env, got := d.Tenant.MerchantID, d.Tenant.Environment, *d.SettledAmount
	holder := ledger.Merchant(m, ledger.Available) // ONCHAIN: the merchant received the crypto
	if d.Settlement.Mode == onramps.ModeInternal {
		holder = owner(d, ledger.Available)
	}
	// The whole amount is posted first, so the common case takes its ledger locks in one
	// round (ledger.Post: the holder and the FX and External shard accounts in id order), as
	// every other posting does: locking the holder first (it read its balance so) and the rest in
	// the post after could deadlock with a deposit batch crediting the holder through the
	// same FX shard (issue 27). A refused post writes nothing and keeps its row locks, so
	// its error's balance (read under that lock) decides what the holder still covers.
	take, short := got, money.Zero(got.Asset)
	posted, err := s.post(ctx, tx, d, nil, "reverse", reversalDesc(d, take, short), reversalPostings(d, holder, take, short)...)
	var ib *ledger.InsufficientBalanceError
	if errors.As(err, &ib) && ib.Account == holder && ib.Asset == got.Asset {
		// The money was spent: debit what is left, the rest goes on the receivable (same
		// reference: the refused post wrote nothing). This post locks the receivable (and
		// may create it) while holding the others, a second round; acceptable because it
		// is rare (a reversal of a deposit whose money has left the balance) and
		// postgres.InTx retries a deadlock, with nothing written by the victim.
		take = money.New(got.Asset, max(0, min(ib.Balance, got.Minor)))
		if short, err = got.Sub(take); err != nil {
			return Outcome{}, err
		}
		posted, err = s.post(ctx, tx, d, nil, "reverse", reversalDesc(d, take, short), reversalPostings(d, holder, take, short)...)
	}
	if err != nil {
		return Outcome{}, err
	}
	if err := s.end(ctx, tx, &d, Reversed, reason); err != nil {
		return Outcome{}, err
	}
	if holder.Owner == ledger.OwnerCustomer {
		after, ok := posted.Find(holder, got.Asset)
		if !ok { // nothing taken: the holder was not posted to
			if after, err = ledger.GetBalance(ctx, tx, m, env, holder, got.Asset); err != nil {
				return Outcome{}, err
			}
		}
		id, why := d.ID.String(), reason
		if short.IsPositive() {
			why += fmt.Sprintf(" (%s %s not covered by the balance, owed by the merchant)", short, short.Asset)
		}
		if _, err := s.cfg.Events.Record(ctx, tx, m, env, events.CustomerBalanceRefunded, events.CustomerBalance{
			CustomerID: d.CustomerID.String(), Asset: string(got.Asset), Amount: take.String(),
			Balance: after.Amount.String(), DepositID: &id, Reason: &why,
		}); err != nil {
			return Outcome{}, err
		}
	}
	out.Deposit, out.Changed, out.Debited, out.Shortfall = d, true, &take, &short
	return out, nil
}

// reversalPostings is the reversal of d's postings: take debited from holder, short
// booked on the merchant's receivable, the NGN returned to the sender through the FX desk.
func reversalPostings(d Deposit, holder ledger.Account, take, short money.Amount) [][]ledger.Posting {
	var postings [][]ledger.Posting
	if take.IsPositive() {
		postings = append(postings, ledger.Move(holder, ledger.System(ledger.FX), take))
	}
	if short.IsPositive() {
		postings = append(postings, ledger.Move(ledger.Merchant(d.Tenant.MerchantID, ledger.Receivable), ledger.System(ledger.FX), short))
	}
	return append(postings, ledger.Move(ledger.System(ledger.FX), ledger.System(ledger.External), d.Amount))
}

// reversalDesc is the description of the reversal of d's ledger transaction.
func reversalDesc(d Deposit, take, short money.Amount) string {
	desc := fmt.Sprintf("Reversal of deposit %s: %s %s debited back", d.PaymentReference, take, take.Asset)
	if short.IsPositive() {
		desc += fmt.Sprintf(", %s %s owed by the merchant (receivable)", short, short.Asset)
	}
	return desc
}

// ClearTx is Clear in the caller's transaction.
func (s *Service) ClearTx(ctx context.Context, tx pgx.Tx, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	d, err := lockFor(ctx, tx, t, id)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{From: d.Status}
	switch {
	case d.Status == Flagged:
		d.Flag = false
		if err := s.move(ctx, tx, &d, PendingFX); err != nil {
			return Outcome{}, err
		}
		if err := s.next(ctx, tx, d); err != nil {
			return Outcome{}, err
		}
		out.Changed = true
	case d.Status == PendingFX && d.Flag: // marked for a hold, conversion not run yet
		d.Flag = false
		d.UpdatedAt = s.stamp()
		if err := update(ctx, tx, d); err != nil {
			return Outcome{}, err
		}
		out.Changed = true
	case d.Status == PendingFX, d.Status == PendingWithdrawal, d.Status == Settled:
		// not held (any more): nothing to do
	default:
		return Outcome{}, invalidState("a %s deposit cannot be cleared (only a FLAGGED one)", d.Status)
	}
	out.Deposit = d
	return out, nil
}

// RejectTx is Reject in the caller's transaction.
func (s *Service) RejectTx(ctx context.Context, tx pgx.Tx, t *payments.Tenant, id uuid.UUID, reason string) (Outcome, error) {
	d, err := lockFor(ctx, tx, t, id)
	if err != nil {
		return Outcome{}, err
	}
	why := withReason("REJECTED: compliance review", reason) + "; returned to the sender"
	switch d.Status {
	case Failed, Reversed:
		return Outcome{Deposit: d, From: d.Status}, nil
	case Settled:
		return s.reverse(ctx, tx, d, withReason("REVERSED: compliance review", reason))
	case Flagged, PendingFX:
		from := d.Status
		if err := s.fail(ctx, tx, d, nil, why); err != nil {
			return Outcome{}, err
		}
		d, err = getByID(ctx, tx, id)
		return Outcome{Deposit: d, Changed: true, From: from}, err
	case PendingWithdrawal:
		got := *d.SettledAmount
		dest := ledger.System(Outgoing)
		if d.Settlement.Mode == onramps.ModeInternal {
			dest = owner(d, ledger.Pending)
		}
		if _, err := s.post(ctx, tx, d, nil, "unwind", "Deposit rejected in compliance review; converted back and returned to the sender",
			ledger.Move(dest, ledger.System(ledger.FX), got),
			ledger.Move(ledger.System(ledger.FX), ledger.System(ledger.External), d.Amount)); err != nil {
			return Outcome{}, err
		}
		if err := s.end(ctx, tx, &d, Failed, why); err != nil {
			return Outcome{}, err
		}
		return Outcome{Deposit: d, Changed: true, From: PendingWithdrawal}, nil
	}
	return Outcome{}, invalidState("a %s deposit cannot be rejected", d.Status)
}

// ReviewFilter selects the deposits of the operator's review list.
type ReviewFilter struct {
	Environment string     // "sandbox", "live" or "" for both
	MerchantID  *uuid.UUID // nil for every merchant
	Status      string     // default FLAGGED
	Limit       int        // default 100
}

// InTx runs fn in one transaction of the service's database, retried on serialisation
// failures (the operator's actions: the Tx methods above and their audit row commit together).
func (s *Service) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return postgres.InTx(ctx, s.pool, fn)
}

// ListForReview lists deposits of every merchant in a status (FLAGGED by default), oldest
// first: the operator's compliance queue.
func (s *Service) ListForReview(ctx context.Context, f ReviewFilter) ([]Deposit, error) {
	return ListForReview(ctx, s.pool, f)
}

// ListForReview is Service.ListForReview over any querier.
func ListForReview(ctx context.Context, q postgres.Querier, f ReviewFilter) ([]Deposit, error) {
	if f.Status == "" {
		f.Status = Flagged
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	args := []any{f.Status, f.Limit}
	where := ` where d.status = $1`
	if f.Environment != "" {
		args = append(args, f.Environment)
		where += fmt.Sprintf(` and d.environment = $%d`, len(args))
	}
	if f.MerchantID != nil {
		args = append(args, *f.MerchantID)
		where += fmt.Sprintf(` and d.merchant_id = $%d`, len(args))
	}
	rows, err := q.Query(ctx, `select `+columns+from+where+` order by d.created_at, d.id limit $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("list deposits for review: %w", err)
	}
	return postgres.Collect(rows, scan)
}

// Lookup reads any deposit by id (the operator's view; no tenant scope). Errors: ErrNotFound.
func Lookup(ctx context.Context, q postgres.Querier, id uuid.UUID) (Deposit, error) {
	return scan(q.QueryRow(ctx, `select `+columns+from+` where d.id = $1`, id))
}
