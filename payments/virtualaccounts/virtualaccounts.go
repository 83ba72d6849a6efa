// Package virtualaccounts issues and reads NGN virtual bank accounts. A virtual account IS
// an onramp (spec: "NGN virtual bank accounts (onramps)"): one row of the onramps table
// (migration 007), so one account-number space, unique per bank in the database, and a
// deposit into a customer's account finds its onramp like any other.
//
// IssuePermanent gives a customer of at least TIER_1 (ErrKYCTierRequired otherwise) its one
// PERMANENT account, settling INTERNAL_BALANCE in USDT to the customer; asking again returns
// the same account. The number comes from the environment's bank provider (sandbox: a NUBAN
// at the configured sandbox bank), asked with the account's id as reference BEFORE anything
// is written, so live without a bank partner answers *providers.UnavailableError and changes
// nothing. Creation records virtual_account.created and onramp.completed in the same
// transaction (through idempotency.InTx).
package virtualaccounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// Errors of the service (plus customers.ErrNotFound for an unknown customer).
var (
	ErrNotFound         error = &payments.Error{Code: "NOT_FOUND", Message: "virtual account not found"}
	ErrKYCTierRequired  error = &payments.Error{Code: "KYC_TIER_REQUIRED", Message: "a permanent NGN virtual account requires a customer verified to TIER_1"}
	errNumbersExhausted       = errors.New("virtualaccounts: no free account number after 20 attempts")
)

// Account is a virtual account.
type Account struct {
	ID            uuid.UUID
	CustomerID    *uuid.UUID
	Type          string // PERMANENT or TEMPORARY
	Status        string // ACTIVE, EXPIRED or INACTIVE (EXPIRED from expires_at even before the job runs)
	BankCode      string
	BankName      string
	AccountNumber string
	AccountName   string
	Amount        *money.Amount // NGN, TEMPORARY only
	ExpiresAt     *time.Time
	CreatedAt     time.Time
}

// Filter selects virtual accounts.
type Filter struct {
	Status     string     // ACTIVE, INACTIVE (INACTIVE or EXPIRED), EXPIRED, or "" for all
	CustomerID *uuid.UUID // nil for all
	Limit      int
	Offset     int
}

// Service issues and reads virtual accounts. Safe for concurrent use.
type Service struct {
	pool      *pgxpool.Pool
	recorder  *events.Recorder
	providers providers.Environments
	now       func() time.Time
}

// NewService returns the service; now nil means time.Now.
func NewService(pool *pgxpool.Pool, recorder *events.Recorder, envs providers.Environments, now func() time.Time) *Service {
	return &Service{pool: pool, recorder: recorder, providers: envs, now: payments.OrNow(now)}
}

const cols = `id, customer_id, type, status, bank_code, bank_name, account_number, account_name, amount, expires_at, created_at`

func (s *Service) scan(row pgx.Row) (Account, error) {
	var (
		a      Account
		amount *int64
	)
	err := row.Scan(&a.ID, &a.CustomerID, &a.Type, &a.Status, &a.BankCode, &a.BankName, &a.AccountNumber, &a.AccountName, &amount, &a.ExpiresAt, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, ErrNotFound
	}
	if amount != nil {
		m := money.New(money.NGN, *amount)
		a.Amount = &m
	}
	if a.Status == "ACTIVE" && a.ExpiresAt != nil && !s.now().Before(*a.ExpiresAt) {
		a.Status = "EXPIRED"
	}
	return a, err
}

// IssuePermanent returns the customer's PERMANENT account, issuing it first if it has none
// (created reports which). Errors: customers.ErrNotFound, ErrKYCTierRequired,
// *providers.UnavailableError, the database's.
func (s *Service) IssuePermanent(ctx context.Context, t payments.Tenant, customerID uuid.UUID) (Account, bool, error) {
	c, err := customers.Load(ctx, s.pool, t, customerID, false)
	if err != nil {
		return Account{}, false, err
	}
	if a, err := s.permanent(ctx, s.pool, t, customerID); err == nil {
		return a, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Account{}, false, err
	}
	if customers.TierRank(c.KYCTier) < 1 {
		return Account{}, false, ErrKYCTierRequired
	}
	id := uuid.Must(uuid.NewV7())
	bank := s.providers.For(t.Environment).Bank
	va, err := bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: id.String(), AccountName: c.Name(), Type: "PERMANENT"})
	if err != nil {
		return Account{}, false, err
	}
	var (
		a       Account
		created bool
	)
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The customer row lock serialises concurrent issues for one customer.
		c, err := customers.Load(ctx, tx, t, customerID, true)
		if err != nil {
			return err
		}
		if customers.TierRank(c.KYCTier) < 1 {
			return ErrKYCTierRequired
		}
		if a, err = s.permanent(ctx, tx, t, customerID); err == nil {
			return nil
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := s.now().UTC().Truncate(time.Millisecond)
		for attempt := 1; ; attempt++ {
			o := onramps.Onramp{ID: id, Tenant: t, Type: onramps.Permanent, Status: onramps.Active, CustomerID: &customerID,
				BankCode: va.BankCode, AccountNumber: va.AccountNumber, BankName: va.BankName, AccountName: va.AccountName,
				Settlement: onramps.Settlement{Mode: onramps.ModeInternal, Asset: money.USDT}, CreatedAt: now, UpdatedAt: now}
			inserted, err := onramps.InsertTx(ctx, tx, o)
			if err != nil {
				return fmt.Errorf("virtualaccounts: insert: %w", err)
			}
			if inserted {
				a = Account{ID: o.ID, CustomerID: o.CustomerID, Type: o.Type, Status: o.Status, BankCode: o.BankCode,
					BankName: o.BankName, AccountNumber: o.AccountNumber, AccountName: o.AccountName, CreatedAt: o.CreatedAt}
				break
			}
			if attempt == 20 {
				return errNumbersExhausted
			}
			// The number is taken at this bank: ask for another one.
			if va, err = bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{Reference: id.String(), Attempt: attempt,
				AccountName: c.Name(), Type: "PERMANENT"}); err != nil {
				return err
			}
		}
		created = true
		cid := customerID.String()
		if _, err := s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, events.VirtualAccountCreated, events.VirtualAccount{
			ID: a.ID.String(), Type: a.Type, CustomerID: &cid, AccountNumber: a.AccountNumber, AccountName: a.AccountName, BankName: a.BankName,
		}); err != nil {
			return err
		}
		_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, events.OnrampCompleted, events.Onramp{
			ID: a.ID.String(), Type: a.Type, Status: a.Status, CustomerID: &cid, AccountNumber: a.AccountNumber, BankName: a.BankName, Currency: "NGN",
			Metadata: map[string]string{}, // a virtual account takes no metadata (issue 30): {} as on every onramp
		})
		return err
	})
	return a, created, err
}

func (s *Service) permanent(ctx context.Context, q postgres.Querier, t payments.Tenant, customerID uuid.UUID) (Account, error) {
	return s.scan(q.QueryRow(ctx, `select `+cols+` from onramps
		where merchant_id = $1 and environment = $2 and customer_id = $3 and type = 'PERMANENT'
		order by (status = 'ACTIVE') desc, created_at limit 1`, t.MerchantID, t.Environment, customerID))
}

// CustomerAccount returns the customer's PERMANENT account. Errors: customers.ErrNotFound,
// ErrNotFound (none issued yet).
func (s *Service) CustomerAccount(ctx context.Context, t payments.Tenant, customerID uuid.UUID) (Account, error) {
	if _, err := customers.Load(ctx, s.pool, t, customerID, false); err != nil {
		return Account{}, err
	}
	return s.permanent(ctx, s.pool, t, customerID)
}

// Get returns one account. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Account, error) {
	return s.scan(s.pool.QueryRow(ctx, `select `+cols+` from onramps where merchant_id = $1 and environment = $2 and id = $3`,
		t.MerchantID, t.Environment, id))
}

// List returns a page of accounts, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Account, int64, error) {
	now := s.now()
	status := strings.ToUpper(f.Status)
	const where = ` from onramps where merchant_id = $1 and environment = $2
		and ($3::uuid is null or customer_id = $3)
		and ($4 = '' or ($4 = 'ACTIVE' and status = 'ACTIVE' and (expires_at is null or expires_at > $5))
		            or ($4 = 'EXPIRED' and (status = 'EXPIRED' or (status = 'ACTIVE' and expires_at <= $5)))
		            or ($4 = 'INACTIVE' and (status <> 'ACTIVE' or expires_at <= $5)))`
	args := []any{t.MerchantID, t.Environment, f.CustomerID, status, now}
	var total int64
	if err := s.pool.QueryRow(ctx, `select count(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("virtualaccounts: count: %w", err)
	}
	rows, err := s.pool.Query(ctx, `select `+cols+where+` order by created_at desc, id desc limit $6 offset $7`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("virtualaccounts: list: %w", err)
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		a, err := s.scan(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, rows.Err()
}
