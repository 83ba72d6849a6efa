package withdrawals

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/providers"
)

// Config is what the service is built with: the money-out Deps (Providers: the chain
// custodian of each environment; Poll: how long a SUBMITTED withdrawal waits before the
// custodian is asked again whether it is confirmed, default 2 s).
type Config struct {
	moneyout.Deps
}

// Service creates, reads and advances withdrawals. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	cfg.Deps = cfg.WithDefaults(2 * time.Second)
	return &Service{pool: pool, cfg: cfg}
}

// Request is a validated withdrawal (CreateInput.Validate).
type Request struct {
	Amount             money.Amount // USDT, > 0
	Chain              providers.Chain
	DestinationAddress string
	Metadata           metadata.Metadata // checked by payments/metadata
}

// funds is what withdrawal w moves out of its merchant's USDT ("withdrawal:<id>:...").
func funds(w Withdrawal) moneyout.Funds {
	return moneyout.Funds{Tenant: w.Tenant, Amount: w.Amount, Ref: "withdrawal:" + w.ID.String(), Kind: "withdrawal"}
}

// Create records a PENDING withdrawal, holds its amount (merchant available -> pending USDT)
// and enqueues its processing, in one transaction (the request's idempotency scope, if any).
//
// Errors: *providers.UnavailableError (no custodian configured for the environment: nothing
// is written), *providers.UnsupportedError (the custodian cannot send on that chain or that
// asset: nothing is written), *ledger.InsufficientBalanceError (the available balance does not cover it:
// nothing is written), the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, r Request) (Withdrawal, error) {
	if err := providers.Can(s.cfg.Providers.For(t.Environment).Custody, "custody", "send",
		providers.Need{Chain: r.Chain, Asset: r.Amount.Asset}); err != nil {
		return Withdrawal{}, err
	}
	now := s.cfg.Stamp()
	w := Withdrawal{ID: uuid.Must(uuid.NewV7()), Tenant: t, Amount: r.Amount, Token: Token, Chain: r.Chain,
		DestinationAddress: r.DestinationAddress, Status: Pending, Metadata: r.Metadata.OrEmpty(), CreatedAt: now, UpdatedAt: now}
	if err := w.Metadata.Validate(); err != nil {
		return Withdrawal{}, err
	}
	// The hold is posted last: it locks the merchant's balance rows until the commit, so the
	// other writes are done before it (a refusal rolls them back with it).
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := insert(ctx, tx, w); err != nil {
			return err
		}
		if err := jobs.InsertTx(ctx, s.cfg.Jobs, tx, ProcessArgs{ID: w.ID}, nil); err != nil {
			return err
		}
		return funds(w).Hold(ctx, tx, "Withdrawal to "+w.DestinationAddress+" on "+string(w.Chain))
	})
	if err != nil {
		return Withdrawal{}, err
	}
	return w, nil
}

// Get returns one withdrawal of the tenant. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Withdrawal, error) {
	return load(ctx, s.pool, &t, id)
}

// List returns a page of the tenant's withdrawals, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Withdrawal, int64, error) {
	moneyout.Page(&f.Page, &f.Limit)
	return list(ctx, s.pool, t, f)
}

// Advance takes one step of a withdrawal's lifecycle (the job's work) and returns how long
// to wait before the next step (0: nothing left to do):
//
//   - PENDING: the custodian is asked to send (reference "withdrawal:<id>"); accepted or
//     confirmed -> SUBMITTED with its tx_hash; refused -> FAILED with the funds returned;
//   - SUBMITTED: the custodian is asked again (the same reference answers the same send's
//     state); confirmed -> SETTLED (pending -> external, withdrawal.completed); still
//     submitted -> wait; refused -> FAILED with the funds returned;
//   - SETTLED, FAILED: nothing.
//
// A Go error (the custodian unreachable, the database) leaves the withdrawal as it was: the
// job retries it.
func (s *Service) Advance(ctx context.Context, id uuid.UUID) (time.Duration, error) {
	w, err := load(ctx, s.pool, nil, id)
	if err != nil {
		return 0, err
	}
	if w.Status != Pending && w.Status != Submitted {
		return 0, nil
	}
	res, err := s.cfg.Providers.For(w.Tenant.Environment).Custody.Send(ctx, providers.SendRequest{
		Reference: "withdrawal:" + w.ID.String(), Chain: w.Chain, Asset: money.USDT, To: w.DestinationAddress, Amount: w.Amount,
	})
	if err != nil {
		return 0, err
	}
	switch {
	case res.Status == providers.SendFailed:
		reason := res.FailureReason
		if reason == "" {
			reason = "the chain refused the transaction"
		}
		return 0, s.fail(ctx, w, reason)
	case w.Status == Pending:
		return s.cfg.Poll, s.submit(ctx, w, res.TxHash)
	case res.Status == providers.SendConfirmed:
		return 0, s.settle(ctx, w, res.TxHash)
	default:
		return s.cfg.Poll, nil
	}
}

func (s *Service) submit(ctx context.Context, w Withdrawal, txHash string) error {
	return moneyout.Step(ctx, s.pool, ErrNotFound, func(tx pgx.Tx) error {
		_, err := move(ctx, tx, w.ID, []string{Pending}, Submitted, s.cfg.Stamp(), txHash, "")
		return err
	})
}

func (s *Service) settle(ctx context.Context, w Withdrawal, txHash string) error {
	return moneyout.Step(ctx, s.pool, ErrNotFound, func(tx pgx.Tx) error {
		w, err := move(ctx, tx, w.ID, []string{Submitted}, Settled, s.cfg.Stamp(), txHash, "")
		if err != nil {
			return err
		}
		if _, err := funds(w).Settle(ctx, tx, "Withdrawal "+w.TxHash+" confirmed"); err != nil {
			return err
		}
		return s.cfg.Record(ctx, tx, w.Tenant, events.WithdrawalCompleted, EventData(w))
	})
}

func (s *Service) fail(ctx context.Context, w Withdrawal, reason string) error {
	return moneyout.Step(ctx, s.pool, ErrNotFound, func(tx pgx.Tx) error {
		w, err := move(ctx, tx, w.ID, []string{Pending, Submitted}, Failed, s.cfg.Stamp(), "", reason)
		if err != nil {
			return err
		}
		if _, err := funds(w).Release(ctx, tx, "Withdrawal failed: "+reason); err != nil {
			return err
		}
		return s.cfg.Record(ctx, tx, w.Tenant, events.WithdrawalFailed, EventData(w)) // issue 11
	})
}

// EventData is the withdrawal.completed payload.
func EventData(w Withdrawal) events.Withdrawal {
	d := events.Withdrawal{ID: w.ID.String(), AmountUSD: w.Amount.String(), Token: w.Token, Chain: string(w.Chain),
		DestinationAddress: w.DestinationAddress, Status: w.Status, TxHash: w.TxHash, Metadata: w.Metadata.OrEmpty()}
	if w.SettledAt != nil {
		d.SettledAt = w.SettledAt.UTC().Format(payments.TimeLayout)
	}
	return d
}
