package offramps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/ledger"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/persistence/postgres"
)

// Rates locks quotes and reads market prices; *rates.Service is one.
type Rates interface {
	Lock(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, asset money.Asset, side, by string) (rates.Quote, error)
	MarketFor(env string, asset money.Asset, side string, size money.Amount) (rates.Price, error)
}

// Config is what the service is built with.
type Config struct {
	// Providers: custody (deposit addresses) and bank (payouts); Poll: how long a payout the
	// bank accepted but has not settled waits before the bank is asked again (default 5 s).
	moneyout.Deps
	Rates     Rates
	Customers Customers     // nil: requests naming a customer answer 503
	Lifetime  time.Duration // of TEMPORARY offramps (default TemporaryLifetime)
}

// Service creates and reads offramps, takes their (simulated) deposits and pays them out.
// Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	cfg.Deps = cfg.WithDefaults(5 * time.Second)
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = TemporaryLifetime
	}
	return &Service{pool: pool, cfg: cfg}
}

// Create makes an ACTIVE offramp from a body validated with CreateInput.Validate: the
// customer (looked up by id, or by email and created when missing), the deposit address from
// the environment's custodian and, for NGN_PAYOUT, the locked sell rate; in the request's
// idempotency scope, if any.
//
// Errors: *providers.UnavailableError (no custodian, or no bank partner for NGN_PAYOUT: nothing
// written), *providers.UnsupportedError (the custodian lacks the chain or asset, or the bank
// partner the NGN rail: nothing written), ErrCustomerNotFound, rates.ErrUnknownRate, *payments.FieldError (a rate of another
// asset or side), rates.ErrRateExpired, rates.ErrRateAlreadyUsed, the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Offramp, error) {
	if err := in.Metadata.Validate(); err != nil {
		return Offramp{}, err
	}
	set := s.cfg.Providers.For(t.Environment)
	if in.Settlement.Mode == ModePayout {
		if err := providers.Can(set.Bank, "bank", "payout", providers.Need{Rail: providers.RailNGN, Asset: money.NGN}); err != nil {
			return Offramp{}, err
		}
	}
	if err := providers.Can(set.Custody, "custody", "deposit address",
		providers.Need{Chain: providers.Chain(in.Chain), Asset: money.Asset(in.Asset)}); err != nil {
		return Offramp{}, err
	}
	if s.cfg.Customers == nil {
		return Offramp{}, ErrCustomersUnavailable
	}
	now := s.cfg.Stamp()
	o := Offramp{ID: uuid.Must(uuid.NewV7()), Tenant: t, Type: in.Type, Status: Active, Chain: providers.Chain(in.Chain),
		Asset: money.Asset(in.Asset), Settlement: Settlement{Mode: in.Settlement.Mode},
		Metadata: in.Metadata.OrEmpty(), CreatedAt: now, UpdatedAt: now}
	addr, err := set.Custody.DepositAddress(ctx, providers.AddressRequest{Reference: "offramp:" + o.ID.String(), Chain: o.Chain, Asset: o.Asset})
	if err != nil {
		return Offramp{}, err
	}
	o.DepositAddress = addr.Address
	if o.Type == Temporary {
		exp := now.Add(s.cfg.Lifetime)
		o.ExpiresAt = &exp
	}
	if in.Customer.ID == nil {
		id, err := s.cfg.Customers.FindOrCreate(ctx, t, in.Customer.Email, in.Customer.FirstName, in.Customer.LastName)
		if err != nil {
			return Offramp{}, err
		}
		o.CustomerID = id
	}
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if in.Customer.ID != nil {
			if err := s.cfg.Customers.Lookup(ctx, tx, t, *in.Customer.ID); err != nil {
				return err
			}
			o.CustomerID = *in.Customer.ID
		}
		if o.Settlement.Mode == ModePayout {
			q, err := s.cfg.Rates.Lock(ctx, tx, t, *in.Settlement.RateID, o.Asset, rates.Sell, "offramp:"+o.ID.String())
			if err != nil {
				return err
			}
			o.Settlement.RateID, o.Settlement.Price = in.Settlement.RateID, q.Price
			b := *in.Settlement.DestinationBank
			o.Settlement.DestinationBank = &b
		}
		return insert(ctx, tx, o)
	})
	if err != nil {
		return Offramp{}, err
	}
	return o, nil
}

// Get returns one offramp of the tenant. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Offramp, error) {
	return load(ctx, s.pool, t, id, s.cfg.Now().UTC(), false)
}

// List returns a page of the tenant's offramps, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Offramp, int64, error) {
	moneyout.Page(&f.Page, &f.Limit)
	return list(ctx, s.pool, t, f, s.cfg.Now().UTC())
}

// ngnDown is amount of the asset at price (kobo per unit), rounded down to the kobo: a payout
// never exceeds what the crypto is worth.
func ngnDown(a money.Amount, price int64) (money.Amount, error) {
	rate, err := money.RateOfMinor(price, money.NGN.Places()) // NGN per unit of the asset
	if err != nil {
		return money.Amount{}, err
	}
	return money.Convert(a, money.NGN, rate, money.Down)
}

// ErrCryptoDepositNotFound: no crypto deposit of that id at the tenant's offramps (404).
var ErrCryptoDepositNotFound error = &payments.Error{Code: "NOT_FOUND", Message: "crypto deposit not found"}

// CryptoDeposit reads one crypto deposit at the tenant's offramps, with its payout
// (NGN_PAYOUT). The sandbox simulation (payments/partners SandboxOfframps) answers with it
// once the sandbox custodian's notification was processed.
//
// Errors: ErrCryptoDepositNotFound, the database's.
func (s *Service) CryptoDeposit(ctx context.Context, t payments.Tenant, id uuid.UUID) (CryptoDeposit, error) {
	d := CryptoDeposit{Type: "CRYPTO_DEPOSIT"}
	var (
		amount   int64
		currency string
		chain    string
		price    *int64
	)
	err := s.pool.QueryRow(ctx, `select id, offramp_id, customer_id, status, amount, currency, chain, settlement_mode, price, created_at
		from deposits where id = $1 and merchant_id = $2 and environment = $3 and type = 'CRYPTO_DEPOSIT'`,
		id, t.MerchantID, t.Environment).Scan(&d.ID, &d.OfframpID, &d.CustomerID, &d.Status, &amount, &currency, &chain, &d.Mode,
		&price, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return CryptoDeposit{}, ErrCryptoDepositNotFound
	}
	if err != nil {
		return CryptoDeposit{}, fmt.Errorf("offramps: crypto deposit: %w", err)
	}
	d.Amount, d.Chain = money.New(money.Asset(currency), amount), providers.Chain(chain)
	if price != nil {
		d.Price = *price
	}
	if d.Mode != ModePayout {
		return d, nil
	}
	p, err := scanPayout(s.pool.QueryRow(ctx, `select `+payoutCols+` from payouts
		where deposit_id = $1 and merchant_id = $2 and environment = $3 and source_type = 'offramp'`, id, t.MerchantID, t.Environment))
	if errors.Is(err, ErrNotFound) {
		return d, nil
	}
	if err != nil {
		return CryptoDeposit{}, fmt.Errorf("offramps: crypto deposit payout: %w", err)
	}
	ngn := p.Amount
	d.Payout, d.AmountNGN = &p, &ngn
	return d, nil
}

// ErrDepositMismatch: crypto reported at an offramp on another chain, in another asset or
// at another address than the offramp's (nothing is credited).
var ErrDepositMismatch error = &payments.Error{Code: "INVALID_STATE", Message: "the crypto does not match the offramp's chain, asset and address"}

// ReceiveCrypto records amount confirmed on chain at the offramp's deposit address (txHash
// the chain's transaction), in tx, and settles it as the offramp says (see the package doc):
// what a custodian's notification does in any environment (payments/partners).
//
// Errors: ErrNotFound, ErrNotActive, ErrDepositMismatch, ErrNoPrice, a field error on
// amount, *providers.UnavailableError, the database's.
func (s *Service) ReceiveCrypto(ctx context.Context, tx pgx.Tx, t payments.Tenant, offrampID uuid.UUID, chain providers.Chain,
	address string, amt money.Amount, txHash string) (CryptoDeposit, error) {
	now := s.cfg.Stamp()
	o, err := load(ctx, tx, t, offrampID, now, true)
	if err != nil {
		return CryptoDeposit{}, err
	}
	if chain != o.Chain || amt.Asset != o.Asset || address != o.DepositAddress {
		return CryptoDeposit{}, ErrDepositMismatch
	}
	return s.receive(ctx, tx, t, o, amt, txHash, now)
}

// receive settles amt arriving at offramp o (read FOR UPDATE in tx); txHash "" derives one.
func (s *Service) receive(ctx context.Context, tx pgx.Tx, t payments.Tenant, o Offramp, amt money.Amount, txHash string, now time.Time) (CryptoDeposit, error) {
	var out CryptoDeposit
	err := func() error {
		if o.Status != Active {
			return ErrNotActive
		}
		d := CryptoDeposit{ID: uuid.Must(uuid.NewV7()), OfframpID: o.ID, CustomerID: o.CustomerID, Type: "CRYPTO_DEPOSIT",
			Amount: amt, Chain: o.Chain, Mode: o.Settlement.Mode, CreatedAt: now}
		if txHash == "" {
			sum := sha256.Sum256([]byte("offramp-deposit:" + d.ID.String()))
			txHash = "0x" + hex.EncodeToString(sum[:])
		}
		if o.Type == Temporary {
			if _, err := tx.Exec(ctx, `update offramps set status = 'INACTIVE', updated_at = $2 where id = $1`, o.ID, now); err != nil {
				return fmt.Errorf("offramps: deactivate: %w", err)
			}
		}
		if o.Settlement.Mode == ModeInternal {
			d.Status = deposits.Settled
			if err := insertDeposit(ctx, tx, t, o, d, txHash, nil); err != nil {
				return err
			}
			posted, err := ledger.Post(ctx, tx, ledger.Transaction{
				MerchantID: t.MerchantID, Environment: t.Environment, Reference: "deposit:" + d.ID.String() + ":credit",
				Kind: "offramp.credit", Description: "Crypto received at offramp " + o.ID.String(),
				Postings: ledger.Move(ledger.System(ledger.External), ledger.Customer(o.CustomerID, ledger.Available), amt),
			})
			if err != nil {
				return err
			}
			bal, _ := posted.Find(ledger.Customer(o.CustomerID, ledger.Available), amt.Asset)
			depID := d.ID.String()
			if err := s.cfg.Record(ctx, tx, t, events.CustomerBalanceCredited, events.CustomerBalance{
				CustomerID: o.CustomerID.String(), Asset: string(amt.Asset), Amount: amt.String(), Balance: bal.Amount.String(), DepositID: &depID,
			}); err != nil {
				return err
			}
			err = s.cfg.Record(ctx, tx, t, events.OfframpCompleted, events.Offramp{
				ID: o.ID.String(), Status: d.Status, Asset: string(o.Asset), Chain: string(o.Chain), AmountCrypto: amt.String(),
				SettlementMode: o.Settlement.Mode, TxHash: txHash, Metadata: o.Metadata.OrEmpty(),
			})
			out = d
			return err
		}

		// NGN_PAYOUT
		if !providers.Configured(s.cfg.Providers.For(t.Environment).Bank) {
			return &providers.UnavailableError{Provider: "bank", Operation: "payout"}
		}
		price := o.Settlement.Price
		if o.Type == Permanent {
			p, err := s.cfg.Rates.MarketFor(t.Environment, o.Asset, rates.Sell, amt)
			if err != nil {
				return ErrNoPrice
			}
			price = p.Price
		}
		ngn, err := ngnDown(amt, price)
		if err != nil || !ngn.IsPositive() {
			return &payments.FieldError{Field: "amount", Message: "is too small or too large to pay out in NGN"}
		}
		d.Status, d.Price, d.AmountNGN = deposits.PendingWithdrawal, price, &ngn
		if err := insertDeposit(ctx, tx, t, o, d, txHash, &price); err != nil {
			return err
		}
		postings := append(ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), amt),
			ledger.Move(ledger.System(ledger.FX), ledger.Customer(o.CustomerID, ledger.Pending), ngn)...)
		if _, err := ledger.Post(ctx, tx, ledger.Transaction{
			MerchantID: t.MerchantID, Environment: t.Environment, Reference: "deposit:" + d.ID.String() + ":convert",
			Kind: "offramp.convert", Description: "Crypto received at offramp " + o.ID.String() + ", converted to NGN",
			Postings: postings,
		}); err != nil {
			return err
		}
		p := Payout{ID: uuid.Must(uuid.NewV7()), Tenant: t, OfframpID: o.ID, DepositID: d.ID, CustomerID: o.CustomerID, Amount: ngn,
			Status: PayoutProcessing, Bank: *o.Settlement.DestinationBank, CreatedAt: now}
		if _, err := tx.Exec(ctx, `insert into payouts (id, merchant_id, environment, source_type, source_id, deposit_id, customer_id,
			amount, currency, status, bank_code, account_number, account_name, created_at, updated_at)
			values ($1, $2, $3, 'offramp', $4, $5, $6, $7, 'NGN', $8, $9, $10, $11, $12, $12)`,
			p.ID, t.MerchantID, t.Environment, o.ID, d.ID, o.CustomerID, ngn.Minor, p.Status, p.Bank.BankCode, p.Bank.AccountNumber,
			p.Bank.AccountName, now); err != nil {
			return fmt.Errorf("offramps: insert payout: %w", err)
		}
		if _, err := s.cfg.Jobs.InsertTx(ctx, tx, PayoutArgs{ID: p.ID}, nil); err != nil {
			return err
		}
		d.Payout = &p
		out = d
		return nil
	}()
	return out, err
}

// insertDeposit records crypto deposit d at offramp o through its owner, payments/deposits.
func insertDeposit(ctx context.Context, tx pgx.Tx, t payments.Tenant, o Offramp, d CryptoDeposit, txHash string, price *int64) error {
	dep := deposits.Deposit{ID: d.ID, Tenant: t, Type: deposits.TypeCrypto, Status: d.Status, OfframpID: &o.ID,
		CustomerID: &o.CustomerID, Amount: d.Amount, SettledAmount: &d.Amount, TxHash: txHash,
		Settlement:       onramps.Settlement{Mode: o.Settlement.Mode, Asset: o.Asset, Chain: string(o.Chain), DestinationAddress: o.DepositAddress},
		PaymentReference: "offramp:" + o.ID.String(), CreatedAt: d.CreatedAt, UpdatedAt: d.CreatedAt}
	if price != nil {
		dep.Price = *price
	}
	if err := deposits.CreateTx(ctx, tx, dep); err != nil {
		return fmt.Errorf("offramps: insert deposit: %w", err)
	}
	return nil
}

// AdvancePayout takes one step of an offramp payout (the job's work) and returns how long
// to wait before asking the bank again (0: nothing left to do). See the package doc.
func (s *Service) AdvancePayout(ctx context.Context, id uuid.UUID) (time.Duration, error) {
	p, err := scanPayout(s.pool.QueryRow(ctx, `select `+payoutCols+` from payouts where id = $1`, id))
	if err != nil || p.Status != PayoutProcessing {
		return 0, err
	}
	return moneyout.AdvancePayout(ctx, s.cfg.Providers.For(p.Tenant.Environment).Bank, providers.PayoutRequest{
		Reference: "payout:" + p.ID.String(), Rail: providers.RailNGN, Amount: p.Amount,
		BankCode: p.Bank.BankCode, AccountNumber: p.Bank.AccountNumber, AccountName: p.Bank.AccountName,
	}, s.cfg.Poll, func(to, providerRef, reason string) error { return s.finishPayout(ctx, p, to, providerRef, reason) })
}

// payoutFunds is what payout p moves out of its customer's NGN ("payout:<id>:...").
func payoutFunds(p Payout) moneyout.Funds {
	return moneyout.Funds{Tenant: p.Tenant, Customer: &p.CustomerID, Amount: p.Amount, Ref: "payout:" + p.ID.String(), Kind: "payout"}
}

// credited records customer.balance.credited for payout p's NGN back on the customer's
// available balance (posted), with why.
func (s *Service) credited(ctx context.Context, tx pgx.Tx, p Payout, posted ledger.Posted, why string) error {
	bal, _ := posted.Find(ledger.Customer(p.CustomerID, ledger.Available), money.NGN)
	depID := p.DepositID.String()
	return s.cfg.Record(ctx, tx, p.Tenant, events.CustomerBalanceCredited, events.CustomerBalance{
		CustomerID: p.CustomerID.String(), Asset: "NGN", Amount: p.Amount.String(), Balance: bal.Amount.String(),
		DepositID: &depID, Reason: &why,
	})
}

func (s *Service) finishPayout(ctx context.Context, p Payout, to, providerRef, reason string) error {
	t := p.Tenant
	if err := PayoutMachine.Check(PayoutProcessing, to); err != nil {
		return err
	}
	return moneyout.Step(ctx, s.pool, ErrNotFound, func(tx pgx.Tx) error {
		now := s.cfg.Stamp()
		p, err := scanPayout(tx.QueryRow(ctx, `update payouts set status = $2, updated_at = $3,
			provider_reference = nullif($4, ''), failure_reason = nullif($5, ''),
			settled_at = case when $2 = 'SETTLED' then $3::timestamptz else null end
			where id = $1 and status = 'PROCESSING' returning `+payoutCols, p.ID, to, now, providerRef, reason))
		if err != nil {
			return err
		}
		if to == PayoutFailed {
			posted, err := payoutFunds(p).Release(ctx, tx, "NGN payout failed: "+reason)
			if err != nil {
				return err
			}
			if _, err := deposits.MoveTx(ctx, tx, p.DepositID, deposits.Failed, reason, now); err != nil {
				return fmt.Errorf("offramps: deposit: %w", err)
			}
			return s.credited(ctx, tx, p, posted, reason)
		}
		if _, err := payoutFunds(p).Settle(ctx, tx, "NGN payout to "+p.Bank.AccountNumber); err != nil {
			return err
		}
		dep, err := deposits.MoveTx(ctx, tx, p.DepositID, deposits.Settled, "", now)
		if err != nil {
			return fmt.Errorf("offramps: deposit: %w", err)
		}
		if err := s.cfg.Record(ctx, tx, t, events.PayoutCompleted, events.Payout{
			ID: p.ID.String(), SourceType: "offramp", SourceID: p.OfframpID.String(), Amount: p.Amount.String(), Currency: "NGN",
			Status: p.Status, BankCode: p.Bank.BankCode, AccountNumber: p.Bank.AccountNumber, Reference: "payout:" + p.ID.String(),
		}); err != nil {
			return err
		}
		md := metadata.Metadata{} // the offramp's, carried in its event (issue 30)
		if err := tx.QueryRow(ctx, `select metadata from offramps where id = $1`, dep.OfframpID).Scan(&md); err != nil {
			return fmt.Errorf("offramps: metadata: %w", err)
		}
		err = s.cfg.Record(ctx, tx, t, events.OfframpCompleted, events.Offramp{
			ID: dep.OfframpID.String(), Status: dep.Status, Asset: string(dep.Settlement.Asset), Chain: dep.Settlement.Chain,
			AmountCrypto: dep.Amount.String(), AmountNGN: p.Amount.String(),
			SettlementMode: ModePayout, TxHash: dep.TxHash, Metadata: md.OrEmpty(),
		})
		return err
	})
}

// Payouts returns the payouts of one offramp of the tenant, newest first.
func (s *Service) Payouts(ctx context.Context, t payments.Tenant, offrampID uuid.UUID) ([]Payout, error) {
	rows, err := s.pool.Query(ctx, `select `+payoutCols+` from payouts
		where source_id = $1 and merchant_id = $2 and environment = $3 order by created_at desc, id desc`,
		offrampID, t.MerchantID, t.Environment)
	if err != nil {
		return nil, fmt.Errorf("offramps: payouts: %w", err)
	}
	return postgres.Collect(rows, scanPayout)
}
