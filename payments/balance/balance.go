// Package balance is the merchant's own USDT balance on the payments side (spec "Merchant
// balance"), its funding addresses, and transfers between its payments balances (NGN, USDT,
// USDC, USD) and the merchant's trading balance in the exchange engine.
//
// The balance is the ledger's merchant:<id>:available and :pending accounts in USDT (other
// assets are listed beside it). A transfer moves one asset, exactly: the ledger's minor
// units are converted to the engine's unit of the asset by a power of ten (NGN kobo x 100,
// USD cents x 1, USDT and USDC x 1), never rounded. A (POST /payments/merchant/balance/transfer) is PENDING until the engine has
// journaled the movement, then COMPLETED; FAILED (with the funds back where they were) only
// when the engine definitively refuses it:
//
//	to_trading:  create  available -> pending (ledger)         PENDING
//	             job     engine credit, TransferID = transfer id
//	             OK/AlreadyApplied: pending -> system:trading   COMPLETED
//	             refused:           pending -> available        FAILED
//	to_payments: create  (nothing moves yet)                   PENDING
//	             job     engine debit, TransferID = transfer id
//	             OK/AlreadyApplied: system:trading -> available COMPLETED
//	             refused (insufficient trading balance)         FAILED
//
// The job is durable (river, enqueued with the transfer) and re-submits the same TransferID
// until it gets an answer: the engine applies a TransferID once (a repeat is
// AlreadyApplied), and each ledger post has a fixed reference, so a crash between the
// engine's journal and the ledger's commit completes the transfer exactly once when the job
// runs again. An engine that is busy or down is retried, never taken as a refusal: its
// outcome is unknown until it answers.
package balance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/engine"
	"svc/payments"
	"svc/payments/idempotency"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// Exchange is what transfers need of one environment's engine; *engine.Engine is one.
type Exchange interface {
	Submit(cmd *engine.Command) (engine.Result, error)
}

var _ Exchange = (*engine.Engine)(nil)

// Directions and statuses of a transfer.
const (
	ToTrading  = "to_trading"
	ToPayments = "to_payments"

	Pending   = "PENDING"
	Completed = "COMPLETED"
	Failed    = "FAILED"
)

// Balance is the merchant's USDT balance.
type Balance struct {
	Available money.Amount
	Pending   money.Amount
	UpdatedAt *time.Time // nil when never moved
	// Others are the merchant's balances in other assets (USDC settled by onramps).
	Others []ledger.Balance
}

// Transfer is one movement between the payments and trading balances.
type Transfer struct {
	ID            uuid.UUID
	Tenant        payments.Tenant
	Direction     string
	Amount        money.Amount // in the asset moved (NGN, USDT, USDC or USD)
	Status        string
	FailureReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	CompletedAt   *time.Time
}

// TransferInput is POST /payments/merchant/balance/transfer.
type TransferInput struct {
	Amount    money.Amount // the asset and amount moved (amount_usd is USDT at 1:1)
	Direction string       // default to_trading
}

// TransferAssets are the assets that move between the payments and trading balances.
var TransferAssets = []money.Asset{money.NGN, money.USDT, money.USDC, money.USD}

// engineAmount converts a ledger amount to the engine's asset and units, exactly.
func engineAmount(a money.Amount) (engine.Asset, int64, error) {
	ea, ok := engine.ParseAsset(string(a.Asset))
	if !ok {
		return engine.AssetNone, 0, fmt.Errorf("balance: no engine asset %s", a.Asset)
	}
	units, shift := a.Minor, ea.Decimals()-a.Asset.Places()
	if shift < 0 {
		return engine.AssetNone, 0, fmt.Errorf("balance: the engine keeps %s at fewer places than the ledger", a.Asset)
	}
	for range shift {
		if units > math.MaxInt64/10 {
			return engine.AssetNone, 0, fmt.Errorf("balance: %s too large for the engine", a)
		}
		units *= 10
	}
	return ea, units, nil
}

// Filter selects transfers of a list.
type Filter struct {
	Status string
	Page   int
	Limit  int
}

// Config is what the service is built with.
type Config struct {
	Exchanges map[string]Exchange // sandbox, live
	Providers providers.Environments
	Jobs      onramps.JobInserter
	Now       func() time.Time
}

// Service is the merchant balance. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	cfg.Now = payments.OrNow(cfg.Now)
	return &Service{pool: pool, cfg: cfg}
}

func (s *Service) stamp() time.Time { return s.cfg.Now().UTC().Truncate(time.Millisecond) }

// ErrNotFound: no such transfer for this merchant and environment (404).
var ErrNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "transfer not found"}

// Balance returns the merchant's USDT balance (and its other assets).
func (s *Service) Balance(ctx context.Context, t payments.Tenant) (Balance, error) {
	all, err := ledger.OwnerBalances(ctx, s.pool, t.MerchantID, t.Environment, ledger.OwnerMerchant, t.MerchantID)
	if err != nil {
		return Balance{}, err
	}
	b := Balance{Available: money.Zero(money.USDT), Pending: money.Zero(money.USDT)}
	for _, x := range all {
		if x.UpdatedAt.IsZero() {
			continue
		}
		if x.Amount.Asset != money.USDT || (x.Account.Purpose != ledger.Available && x.Account.Purpose != ledger.Pending) {
			b.Others = append(b.Others, x)
			continue
		}
		if x.Account.Purpose == ledger.Available {
			b.Available = x.Amount
		} else {
			b.Pending = x.Amount
		}
		if b.UpdatedAt == nil || x.UpdatedAt.After(*b.UpdatedAt) {
			at := x.UpdatedAt
			b.UpdatedAt = &at
		}
	}
	return b, nil
}

// FundingAssets are the assets a merchant can fund its balance with.
var FundingAssets = []money.Asset{money.USDT, money.USDC}

// Funding returns the merchant's deposit address for every chain and asset the environment's
// custodian serves (stable: the custodian derives them from the merchant's id); in live, the
// chains with a custodian configured only.
//
// Errors: providers.ErrProviderUnavailable (live without a custodian).
func (s *Service) Funding(ctx context.Context, t payments.Tenant) ([]providers.Address, error) {
	custody := s.cfg.Providers.For(t.Environment).Custody
	var out []providers.Address
	for _, c := range providers.WalletChains {
		for _, a := range FundingAssets {
			need := providers.Need{Chain: c, Asset: a}
			if err := providers.Can(custody, "custody", "deposit address", need); err != nil && providers.Configured(custody) {
				continue // no custodian for this chain or asset (live): not offered
			}
			addr, err := custody.DepositAddress(ctx, providers.AddressRequest{Reference: "merchant:" + t.MerchantID.String(), Chain: c, Asset: a})
			if err != nil {
				return nil, err
			}
			out = append(out, addr)
		}
	}
	if len(out) == 0 {
		return nil, &providers.UnavailableError{Provider: "custody", Operation: "deposit address"}
	}
	return out, nil
}

// CreateTransfer records a transfer PENDING (in the request's idempotency scope) and
// enqueues its job; to_trading holds the amount (available -> pending) at once.
//
// Errors: *payments.FieldError, ledger.ErrInsufficientBalance (to_trading), the database's.
func (s *Service) CreateTransfer(ctx context.Context, t payments.Tenant, in TransferInput) (Transfer, error) {
	if in.Direction == "" {
		in.Direction = ToTrading
	}
	if in.Direction != ToTrading && in.Direction != ToPayments {
		return Transfer{}, &payments.FieldError{Field: "direction", Message: "must be to_trading or to_payments"}
	}
	if !slices.Contains(TransferAssets, in.Amount.Asset) {
		return Transfer{}, &payments.FieldError{Field: "asset", Message: "must be one of NGN, USDT, USDC, USD"}
	}
	if !in.Amount.IsPositive() {
		return Transfer{}, &payments.FieldError{Field: "amount", Message: "must be a positive amount"}
	}
	if _, _, err := engineAmount(in.Amount); err != nil {
		return Transfer{}, &payments.FieldError{Field: "amount", Message: "is too large"}
	}
	if s.cfg.Exchanges[t.Environment] == nil {
		return Transfer{}, &providers.UnavailableError{Provider: "exchange", Operation: "balance transfer"}
	}
	now := s.stamp()
	tr := Transfer{ID: uuid.Must(uuid.NewV7()), Tenant: t, Direction: in.Direction, Amount: in.Amount, Status: Pending,
		CreatedAt: now, UpdatedAt: now}
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into merchant_balance_transfers (id, merchant_id, environment, direction, asset,
			amount, status, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
			tr.ID, t.MerchantID, t.Environment, tr.Direction, string(tr.Amount.Asset), tr.Amount.Minor, tr.Status, now); err != nil {
			return fmt.Errorf("insert transfer: %w", err)
		}
		if tr.Direction == ToTrading {
			if err := s.post(ctx, tx, tr, "hold", "Transfer to the trading balance",
				ledger.Move(ledger.Merchant(t.MerchantID, ledger.Available), ledger.Merchant(t.MerchantID, ledger.Pending), tr.Amount)); err != nil {
				return err
			}
		}
		if _, err := s.cfg.Jobs.InsertTx(ctx, tx, TransferArgs{TransferID: tr.ID}, nil); err != nil {
			return fmt.Errorf("enqueue transfer: %w", err)
		}
		return nil
	})
	return tr, err
}

func (s *Service) post(ctx context.Context, tx pgx.Tx, tr Transfer, step, desc string, postings []ledger.Posting) error {
	_, err := ledger.Post(ctx, tx, ledger.Transaction{
		MerchantID: tr.Tenant.MerchantID, Environment: tr.Tenant.Environment,
		Reference: "balance_transfer:" + tr.ID.String() + ":" + step, Kind: "balance_transfer." + step,
		Description: desc, Postings: postings, Metadata: map[string]string{"transfer_id": tr.ID.String()},
	})
	return err
}

// GetTransfer returns the tenant's transfer. Errors: ErrNotFound.
func (s *Service) GetTransfer(ctx context.Context, t payments.Tenant, id uuid.UUID) (Transfer, error) {
	return scanTransfer(s.pool.QueryRow(ctx, `select `+transferColumns+` from merchant_balance_transfers
		where id = $1 and merchant_id = $2 and environment = $3`, id, t.MerchantID, t.Environment))
}

// ListTransfers returns a page of the tenant's transfers, newest first, and the total.
func (s *Service) ListTransfers(ctx context.Context, t payments.Tenant, f Filter) ([]Transfer, int64, error) {
	args := []any{t.MerchantID, t.Environment}
	where := ` where merchant_id = $1 and environment = $2`
	if f.Status != "" {
		args = append(args, f.Status)
		where += ` and status = $3`
	}
	return postgres.Page(ctx, s.pool, "transfers", `select count(*) from merchant_balance_transfers`+where,
		`select `+transferColumns+` from merchant_balance_transfers`+where+` order by created_at desc, id desc`,
		args, f.Limit, (f.Page-1)*f.Limit, scanTransfer)
}

const transferColumns = `id, merchant_id, environment, direction, asset, amount, status, coalesce(failure_reason, ''),
	created_at, updated_at, completed_at`

func scanTransfer(row pgx.Row) (Transfer, error) {
	var tr Transfer
	var asset string
	var amount int64
	err := row.Scan(&tr.ID, &tr.Tenant.MerchantID, &tr.Tenant.Environment, &tr.Direction, &asset, &amount, &tr.Status,
		&tr.FailureReason, &tr.CreatedAt, &tr.UpdatedAt, &tr.CompletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Transfer{}, ErrNotFound
	}
	if err != nil {
		return Transfer{}, fmt.Errorf("read transfer: %w", err)
	}
	tr.Amount = money.New(money.Asset(asset), amount)
	return tr, nil
}

// ErrEngineRetry wraps an engine that did not answer (busy, down, stopping): the job
// retries the same TransferID later.
var ErrEngineRetry = errors.New("balance: the engine did not answer; retrying")

// Process moves a PENDING transfer through the engine and completes or fails it; a
// transfer that is no longer PENDING is left alone. The TransferArgs job calls it.
func (s *Service) Process(ctx context.Context, id uuid.UUID) error {
	tr, err := scanTransfer(s.pool.QueryRow(ctx, `select `+transferColumns+` from merchant_balance_transfers where id = $1`, id))
	if due, err := payments.Due(err, ErrNotFound, tr.Status, Pending); !due {
		return err
	}
	x := s.cfg.Exchanges[tr.Tenant.Environment]
	if x == nil {
		return fmt.Errorf("%w: no %s exchange", ErrEngineRetry, tr.Tenant.Environment)
	}
	kind := engine.CmdCredit
	if tr.Direction == ToPayments {
		kind = engine.CmdDebit
	}
	asset, units, err := engineAmount(tr.Amount)
	if err != nil {
		return err // checked at creation; a row that fails here stays PENDING for an operator
	}
	res, err := x.Submit(&engine.Command{Kind: kind, Account: engine.AccountID(tr.Tenant.MerchantID), Asset: asset,
		Amount: units, TransferID: engine.TransferID(tr.ID), Time: s.cfg.Now().UnixNano()})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrEngineRetry, err)
	}
	applied := res.Code == engine.OK || res.Code == engine.AlreadyApplied
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, `select status from merchant_balance_transfers where id = $1 for update`, id).Scan(&status); err != nil {
			return fmt.Errorf("lock transfer: %w", err)
		}
		if status != Pending {
			return nil
		}
		m := tr.Tenant.MerchantID
		reason := ""
		switch {
		case applied && tr.Direction == ToTrading:
			err = s.post(ctx, tx, tr, "complete", "Transferred to the trading balance",
				ledger.Move(ledger.Merchant(m, ledger.Pending), ledger.System(ledger.Trading), tr.Amount))
		case applied:
			err = s.post(ctx, tx, tr, "complete", "Transferred from the trading balance",
				ledger.Move(ledger.System(ledger.Trading), ledger.Merchant(m, ledger.Available), tr.Amount))
		case tr.Direction == ToTrading:
			reason = "ENGINE_REFUSED: " + res.Code.String()
			err = s.post(ctx, tx, tr, "return", "Transfer to the trading balance refused; funds returned",
				ledger.Move(ledger.Merchant(m, ledger.Pending), ledger.Merchant(m, ledger.Available), tr.Amount))
		default:
			reason = "ENGINE_REFUSED: " + res.Code.String()
			if res.Code == engine.RejectInsufficientFunds {
				reason = "INSUFFICIENT_BALANCE: the trading balance does not cover the amount"
			}
		}
		if err != nil {
			return err
		}
		now := s.stamp()
		status = Completed
		if !applied {
			status = Failed
		}
		_, err = tx.Exec(ctx, `update merchant_balance_transfers set status = $2, failure_reason = $3, updated_at = $4,
			completed_at = $5 where id = $1`, id, status, postgres.NullIfEmpty(reason), now, now)
		return err
	})
}

// TransferArgs is the job that carries a transfer through the engine.
type TransferArgs struct {
	TransferID uuid.UUID `json:"transfer_id"`
}

// Kind is the river job kind.
func (TransferArgs) Kind() string { return "merchant_balance_transfer" }

// InsertOpts: the money-in queue; an engine that is down is retried for days (river's
// backoff), since the outcome is unknown until it answers.
func (TransferArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: onramps.Queue, MaxAttempts: 50}
}

// Register adds the transfer worker: it processes the transfer.
func Register(workers *river.Workers, svc *Service) error {
	return river.AddWorkerSafely(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[TransferArgs]) error {
		return svc.Process(ctx, job.Args.TransferID)
	}))
}
