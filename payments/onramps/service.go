package onramps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/persistence/postgres"
)

// Customers is what onramps need of the customer records (payments/customers).
type Customers interface {
	// Lookup returns the tenant's customer id, read through q (the caller's transaction).
	// Errors: ErrCustomerNotFound (any error matching it), the database's.
	Lookup(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID) (Customer, error)
}

// Recorder records an event in the caller's transaction; *events.Recorder is one.
type Recorder interface {
	Record(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, environment string, typ events.Type, data any) (uuid.UUID, error)
}

// JobInserter enqueues river jobs in the caller's transaction; *jobs.Client is one. The
// money-in services' configs take it (deposits.Config, balance.Config); the onramps
// service itself enqueues nothing since issue 27 (expiry is the sweep, ExpireDue).
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Config is what the service is built with.
type Config struct {
	Rates     *rates.Service
	Providers providers.Environments // the bank partner issues the account numbers
	Customers Customers              // nil: requests naming a customer answer 503
	Events    Recorder
	// SweepBatch is how many onramps one statement of ExpireDue moves at most (default
	// DefaultSweepBatch).
	SweepBatch int
	// Lifetime of TEMPORARY onramps (default TemporaryLifetime, 25 minutes).
	Lifetime time.Duration
	Now      func() time.Time
}

// Service creates and reads onramps. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = TemporaryLifetime
	}
	if cfg.SweepBatch <= 0 {
		cfg.SweepBatch = DefaultSweepBatch
	}
	cfg.Now = payments.OrNow(cfg.Now)
	return &Service{pool: pool, cfg: cfg}
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.cfg.Now() }

// Customers is the customer directory the service was built with (nil if none).
func (s *Service) Customers() Customers { return s.cfg.Customers }

func (s *Service) stamp() time.Time { return s.cfg.Now().UTC().Truncate(time.Millisecond) }

// Create creates an onramp (POST /payments/onramps) in the request's idempotency scope,
// if any (idempotency.InTx).
//
// Errors: *payments.FieldError (a rule between fields), ErrCustomerNotFound, ErrKYCTierRequired,
// ErrPermanentExists, rates.ErrUnknownRate, rates.ErrRateExpired, rates.ErrRateAlreadyUsed,
// rates.ErrNoPrice, providers.ErrProviderUnavailable, the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Onramp, error) {
	return postgres.InTxValue(ctx, s.pool, idempotency.InTx, func(tx pgx.Tx) (Onramp, error) { return s.CreateTx(ctx, tx, t, in) })
}

// check applies the rules between fields and the defaults.
func check(in *CreateInput) error {
	switch in.Type {
	case Temporary:
		if in.Amount == nil {
			return &payments.FieldError{Field: "amount", Message: "is required for a TEMPORARY onramp"}
		}
	case Permanent:
		if in.CustomerID == nil {
			return &payments.FieldError{Field: "customer_id", Message: "is required for a PERMANENT onramp"}
		}
		if in.Amount != nil {
			return &payments.FieldError{Field: "amount", Message: "does not apply to a PERMANENT onramp (it takes any amount at the market rate)"}
		}
		if in.RateID != nil {
			return &payments.FieldError{Field: "rate_id", Message: "does not apply to a PERMANENT onramp (it converts at the market rate at deposit time)"}
		}
	default:
		return &payments.FieldError{Field: "type", Message: "must be TEMPORARY or PERMANENT"}
	}
	if in.Amount != nil && (in.Amount.Asset != money.NGN || !in.Amount.IsPositive()) {
		return &payments.FieldError{Field: "amount", Message: "must be a positive NGN amount"}
	}
	if in.Settlement == nil {
		in.Settlement = &Settlement{Mode: ModeInternal, Asset: money.USDT}
	}
	st := in.Settlement
	if st.Asset != money.USDT && st.Asset != money.USDC {
		return &payments.FieldError{Field: "settlement.asset", Message: "must be USDC or USDT"}
	}
	switch st.Mode {
	case ModeInternal:
		if st.Chain != "" || st.DestinationAddress != "" {
			return &payments.FieldError{Field: "settlement.chain", Message: "chain and destination_address apply to ONCHAIN settlement only"}
		}
	case ModeOnchain:
		c := providers.Chain(st.Chain)
		if !c.In(providers.WalletChains) {
			return &payments.FieldError{Field: "settlement.chain", Message: "is required for ONCHAIN settlement: one of APTOS, BASE, CELO, ETHEREUM, POLYGON, SOLANA, TRON"}
		}
		if st.DestinationAddress == "" {
			return &payments.FieldError{Field: "settlement.destination_address", Message: "is required for ONCHAIN settlement"}
		}
		if err := providers.ValidateAddress(c, st.DestinationAddress); err != nil {
			return &payments.FieldError{Field: "settlement.destination_address", Message: err.Error()}
		}
	default:
		return &payments.FieldError{Field: "settlement.mode", Message: "must be ONCHAIN or INTERNAL_BALANCE"}
	}
	if len(in.Reference) > 200 {
		return &payments.FieldError{Field: "reference", Message: "must be at most 200 characters"}
	}
	return nil
}

// CreateTx creates an onramp inside tx (the caller's transaction): the rules of Create,
// the account from the environment's bank partner and onramp.completed. It enqueues nothing:
// a TEMPORARY onramp expires by reads (StatusAt) and by the periodic sweep (ExpireDue).
// Errors: as Create.
func (s *Service) CreateTx(ctx context.Context, tx pgx.Tx, t payments.Tenant, in CreateInput) (Onramp, error) {
	if err := check(&in); err != nil {
		return Onramp{}, err
	}
	if err := in.Metadata.Validate(); err != nil {
		return Onramp{}, err
	}
	// An ONCHAIN settlement is sent by the custodian of its chain: one the environment does
	// not have (live TRON without a custodian) is refused now, not stalled after the payer paid.
	if in.Settlement.Mode == ModeOnchain {
		if err := providers.Can(s.cfg.Providers.For(t.Environment).Custody, "custody", "send",
			providers.Need{Chain: providers.Chain(in.Settlement.Chain), Asset: in.Settlement.Asset}); err != nil {
			return Onramp{}, err
		}
	}
	now := s.stamp()
	o := Onramp{ID: uuid.Must(uuid.NewV7()), Tenant: t, Type: in.Type, Status: Active, CustomerID: in.CustomerID,
		Amount: in.Amount, Settlement: *in.Settlement, Reference: in.Reference,
		Metadata: in.Metadata.OrEmpty(), CreatedAt: now, UpdatedAt: now}

	var accountName string
	if err := tx.QueryRow(ctx, `select business_name from merchants where id = $1`, t.MerchantID).Scan(&accountName); err != nil {
		return Onramp{}, fmt.Errorf("read merchant: %w", err)
	}
	if in.CustomerID != nil {
		if s.cfg.Customers == nil {
			return Onramp{}, ErrCustomersUnavailable
		}
		c, err := s.cfg.Customers.Lookup(ctx, tx, t, *in.CustomerID)
		if err != nil {
			return Onramp{}, err
		}
		if in.Type == Permanent && !c.AtLeastTier1() {
			return Onramp{}, ErrKYCTierRequired
		}
		accountName += " / " + c.Name()
	}
	if in.Type == Temporary {
		exp := now.Add(s.cfg.Lifetime)
		o.ExpiresAt = &exp
		if in.RateID != nil {
			q, err := s.cfg.Rates.Lock(ctx, tx, t, *in.RateID, o.Settlement.Asset, rates.Buy, "onramp:"+o.ID.String())
			if err != nil {
				return Onramp{}, err
			}
			o.Price, o.RateID = q.Price, in.RateID
		} else {
			size := money.Amount{} // a quote's default size, or the onramp's own amount
			if o.Amount != nil {
				size = *o.Amount
			}
			p, err := s.cfg.Rates.MarketFor(t.Environment, o.Settlement.Asset, rates.Buy, size)
			if err != nil {
				return Onramp{}, err
			}
			o.Price = p.Price
		}
	}
	bank := s.cfg.Providers.For(t.Environment).Bank
	for attempt := 0; ; attempt++ {
		va, err := bank.CreateVirtualAccount(ctx, providers.VirtualAccountRequest{
			Reference: "onramp:" + o.ID.String(), Attempt: attempt, AccountName: accountName,
			Type: o.Type, Amount: o.Amount, ExpiresAt: o.ExpiresAt,
		})
		if err != nil {
			return Onramp{}, err
		}
		o.BankCode, o.BankName, o.AccountNumber, o.AccountName = va.BankCode, va.BankName, va.AccountNumber, va.AccountName
		ok, err := insert(ctx, tx, o)
		if err != nil {
			if postgres.IsUniqueViolation(err, "onramps_permanent_customer") {
				return Onramp{}, ErrPermanentExists
			}
			return Onramp{}, err
		}
		if ok {
			break
		}
		if attempt >= 8 {
			return Onramp{}, errors.New("onramps: the bank keeps issuing account numbers already in use")
		}
	}
	if _, err := s.cfg.Events.Record(ctx, tx, t.MerchantID, t.Environment, events.OnrampCompleted, EventData(o)); err != nil {
		return Onramp{}, err
	}
	return o, nil
}

// CreateForAmount creates, in tx, a TEMPORARY onramp settling to the merchant's internal
// USDT balance for exactly amount: NGN as is, USD converted to NGN at the current buy price
// of USD (returned; 0 for NGN). Checkout payments use it; reference is the payment's id.
func (s *Service) CreateForAmount(ctx context.Context, tx pgx.Tx, t payments.Tenant, amount money.Amount, reference string) (Onramp, int64, error) {
	ngn, price := amount, int64(0)
	switch amount.Asset {
	case money.NGN:
	case money.USD:
		p, err := s.cfg.Rates.MarketFor(t.Environment, money.USD, rates.Buy, amount)
		if err != nil {
			return Onramp{}, 0, err
		}
		price = p.Price
		if ngn, err = rates.ToNGN(amount, price); err != nil {
			return Onramp{}, 0, err
		}
	default:
		return Onramp{}, 0, &payments.FieldError{Field: "currency", Message: "must be NGN or USD"}
	}
	o, err := s.CreateTx(ctx, tx, t, CreateInput{Type: Temporary, Amount: &ngn, Reference: reference,
		Settlement: &Settlement{Mode: ModeInternal, Asset: money.USDT}})
	return o, price, err
}

// EventData is the data of onramp.completed.
func EventData(o Onramp) events.Onramp {
	d := events.Onramp{ID: o.ID.String(), Type: o.Type, Status: o.Status, AccountNumber: o.AccountNumber,
		BankName: o.BankName, Currency: "NGN", Metadata: o.Metadata.OrEmpty()}
	if o.CustomerID != nil {
		c := o.CustomerID.String()
		d.CustomerID = &c
	}
	if o.Amount != nil {
		a := o.Amount.String()
		d.Amount = &a
	}
	return d
}

// Get returns the tenant's onramp. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Onramp, error) {
	return get(ctx, s.pool, t, id, false)
}

// GetTx reads the tenant's onramp through q, locking it FOR UPDATE when lock (q must then
// be a transaction). Errors: ErrNotFound.
func (s *Service) GetTx(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Onramp, error) {
	return get(ctx, q, t, id, lock)
}

// ByAccountTx reads, locking it FOR UPDATE in tx, the onramp behind a virtual account
// (bank code and account number) of environment env, whichever merchant's: money arriving
// names the account, not the merchant (payments/partners). Errors: ErrNotFound.
func (s *Service) ByAccountTx(ctx context.Context, tx pgx.Tx, bankCode, account, env string) (Onramp, error) {
	return ByAccountTx(ctx, tx, bankCode, account, env)
}

// ByAccountTx is Service.ByAccountTx, which needs nothing of the service but tx.
func ByAccountTx(ctx context.Context, tx pgx.Tx, bankCode, account, env string) (Onramp, error) {
	return getByAccount(ctx, tx, bankCode, account, env)
}

// List returns a page of the tenant's onramps, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Onramp, int64, error) {
	return list(ctx, s.pool, t, f, s.cfg.Now().UTC())
}

// MarkInactive makes an ACTIVE onramp INACTIVE in tx (a TEMPORARY onramp that received its
// amount). It returns whether it changed.
func (s *Service) MarkInactive(ctx context.Context, tx pgx.Tx, id uuid.UUID) (bool, error) {
	tag, err := tx.Exec(ctx, `update onramps set status = 'INACTIVE', updated_at = $2 where id = $1 and status = 'ACTIVE'`, id, s.stamp())
	if err != nil {
		return false, fmt.Errorf("deactivate onramp: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DefaultSweepBatch is how many onramps one statement of ExpireDue moves at most: at 10
// conversions a second the default ten-minute housekeeping finds about 6,000, six
// statements of a few milliseconds, none holding its rows' locks for long.
const DefaultSweepBatch = 1000

// expireDue moves at most $2 ACTIVE TEMPORARY onramps due at $1 to EXPIRED, oldest expiry
// first, through the partial index onramps_expiring (expires_at where status = 'ACTIVE' and
// type = 'TEMPORARY'). A row locked by a deposit arriving now is skipped (the deposit
// decides from expires_at alone, StatusAt; the next sweep takes the row if still ACTIVE).
// The selection is an array (an InitPlan, run once) the update finds by primary key: as
// `id in (subquery)` or a join, the planner trusting a young table's statistics (one row)
// ran a nested loop over every ACTIVE row, quadratic in the batch.
const expireDue = `update onramps set status = 'EXPIRED', updated_at = $1
	where id = any(array(select id from onramps where status = 'ACTIVE' and type = 'TEMPORARY' and expires_at <= $1
		order by expires_at limit $2 for update skip locked))
	and status = 'ACTIVE'`

// ExpireDue is the sweep (issue 27): it moves every ACTIVE TEMPORARY onramp due at now (the
// caller's clock: svcd runs it as the purger "onramps_expired" of the housekeeping job,
// payments/jobs.Purger) of every merchant and environment to EXPIRED, in statements of at
// most Config.SweepBatch rows each (each its own transaction), and says how many it moved.
// It stores what reads already report (StatusAt), so when it runs changes nothing a reader
// sees; expiry records no event and asks nothing of the bank (the virtual account was
// issued with its expiry), as the per-onramp job it replaces did.
func (s *Service) ExpireDue(ctx context.Context, now time.Time) (int64, error) {
	now = now.UTC().Truncate(time.Millisecond)
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, expireDue, now, s.cfg.SweepBatch)
		if err != nil {
			return total, fmt.Errorf("expire due onramps: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(s.cfg.SweepBatch) {
			return total, nil
		}
	}
}

// Expire moves a TEMPORARY onramp past its expiry from ACTIVE to EXPIRED. It returns the
// time to try again when the onramp is not due yet (a clock behind the job's schedule),
// else zero. Only ExpireArgs jobs enqueued before the sweep (ExpireDue) replaced them call
// it.
func (s *Service) Expire(ctx context.Context, id uuid.UUID) (time.Duration, error) {
	now := s.stamp()
	var (
		status string
		exp    *time.Time
	)
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `select status, expires_at from onramps where id = $1 for update`, id).Scan(&status, &exp)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if status != Active || exp == nil || now.Before(*exp) {
			return nil
		}
		_, err = tx.Exec(ctx, `update onramps set status = 'EXPIRED', updated_at = $2 where id = $1`, id, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire onramp: %w", err)
	}
	if status == Active && exp != nil && now.Before(*exp) {
		return exp.Sub(now), nil
	}
	return 0, nil
}
