package transfers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/payments"
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/moneyout"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/payments/recipients"
)

// Prices is the market price of USDT in NGN; *rates.Service is one.
type Prices interface {
	MarketFor(env string, asset money.Asset, side string, size money.Amount) (rates.Price, error)
}

// Config is what the service is built with: the money-out Deps (Providers: the bank partner
// of each environment; Poll: how long a payout the bank has accepted but not settled waits
// before the bank is asked again, default 5 s) and the prices.
type Config struct {
	moneyout.Deps
	Prices Prices
}

// Service creates, reads and advances transfers. Safe for concurrent use.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns the service.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	cfg.Deps = cfg.WithDefaults(5 * time.Second)
	return &Service{pool: pool, cfg: cfg}
}

// Source returns the USDT that pays amount (NGN or USD) at price (minor units of amount's
// currency per USDT), rounded up to the micro-USDT.
func Source(amount money.Amount, price int64) (money.Amount, error) {
	rate, err := money.RateOfMinor(price, amount.Asset.Places()) // amount's currency per USDT
	if err != nil {
		return money.Amount{}, err
	}
	return money.ConvertAtPrice(amount, money.USDT, rate, money.Up)
}

// rail is the payout rail of a destination.
func rail(d Destination) string {
	switch d.Type {
	case recipients.USBankAccount:
		if d.Details.USBankAccount != nil && d.Details.USBankAccount.PayoutScheme == "wire" {
			return providers.RailUSWire
		}
		return providers.RailUSACH
	case recipients.SWIFTBankAccount:
		return providers.RailSWIFT
	}
	return providers.RailNGN
}

// Create makes a PROCESSING transfer: it prices the amount in USDT, holds that USDT
// (merchant available -> pending) and enqueues the payout, in one transaction (the request's
// idempotency scope, if any).
//
// Errors: *providers.UnavailableError (no bank partner for the environment) and ErrNoPrice,
// both before anything is written; *providers.UnsupportedError (the bank partner does not pay
// the destination's rail or currency: nothing written); recipients.ErrNotFound (recipient_id),
// recipients.ErrCustomerNotFound (on_behalf_of.customer_id), *payments.FieldError (a crypto recipient,
// or a currency the destination does not take), ErrReferenceInUse,
// *ledger.InsufficientBalanceError; the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, r Request) (Transfer, error) {
	if err := r.Metadata.Validate(); err != nil {
		return Transfer{}, err
	}
	if !providers.Configured(s.cfg.Providers.For(t.Environment).Bank) {
		return Transfer{}, &providers.UnavailableError{Provider: "bank", Operation: "payout"}
	}
	var price int64 = 100 // USD cents per USDT: 1:1
	if r.Amount.Asset == money.NGN {
		if s.cfg.Prices == nil {
			return Transfer{}, ErrNoPrice
		}
		p, err := s.cfg.Prices.MarketFor(t.Environment, money.USDT, rates.Sell, r.Amount)
		if err != nil {
			return Transfer{}, ErrNoPrice
		}
		price = p.Price
	}
	src, err := Source(r.Amount, price)
	if err != nil {
		return Transfer{}, &payments.FieldError{Field: "amount", Message: "is too large"}
	}
	now := s.cfg.Stamp()
	tr := Transfer{ID: uuid.Must(uuid.NewV7()), Tenant: t, Amount: r.Amount, Reference: r.Reference, RecipientID: r.RecipientID,
		CustomerID: r.CustomerID, SourceAmount: src, Price: price, Status: Processing, Metadata: r.Metadata.OrEmpty(),
		CreatedAt: now, UpdatedAt: now}
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if r.RecipientID != nil {
			rc, err := recipients.Load(ctx, tx, t, *r.RecipientID)
			if err != nil {
				return err
			}
			if rc.Type == recipients.CryptoAddress {
				return &payments.FieldError{Field: "recipient_id", Message: "is a CRYPTO_ADDRESS recipient; transfers pay bank accounts"}
			}
			tr.Destination = Destination{Type: rc.Type, Details: rc.Details}
		} else {
			tr.Destination = *r.Destination
		}
		switch {
		case tr.Destination.Type == recipients.BankAccount && r.Amount.Asset != money.NGN:
			return &payments.FieldError{Field: "currency", Message: "must be NGN for a BANK_ACCOUNT (domestic) destination"}
		case tr.Destination.Type != recipients.BankAccount && r.Amount.Asset != money.USD:
			return &payments.FieldError{Field: "currency", Message: "must be USD for a " + tr.Destination.Type + " destination"}
		}
		tr.Rail = rail(tr.Destination)
		if err := providers.Can(s.cfg.Providers.For(t.Environment).Bank, "bank", "payout",
			providers.Need{Rail: tr.Rail, Asset: r.Amount.Asset}); err != nil {
			return err // before any write: nothing is debited
		}
		if r.CustomerID != nil {
			if err := recipients.CheckCustomer(ctx, tx, t, *r.CustomerID); err != nil {
				return err
			}
		}
		if err := insert(ctx, tx, tr); err != nil {
			return err
		}
		if err := jobs.InsertTx(ctx, s.cfg.Jobs, tx, PayoutArgs{ID: tr.ID}, nil); err != nil {
			return err
		}
		// Posted last: the hold locks the merchant's balance rows until the commit.
		return funds(tr).Hold(ctx, tx, "Transfer "+tr.Reference+": "+tr.Amount.String()+" "+string(tr.Amount.Asset))
	})
	if err != nil {
		return Transfer{}, err
	}
	return tr, nil
}

// Get returns one transfer of the tenant. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Transfer, error) {
	return load(ctx, s.pool, &t, id)
}

// List returns a page of the tenant's transfers, newest first, and the total.
func (s *Service) List(ctx context.Context, t payments.Tenant, f Filter) ([]Transfer, int64, error) {
	moneyout.Page(&f.Page, &f.Limit)
	return list(ctx, s.pool, t, f)
}

// funds is what transfer tr moves out of its merchant's USDT ("transfer:<id>:...").
func funds(tr Transfer) moneyout.Funds {
	return moneyout.Funds{Tenant: tr.Tenant, Amount: tr.SourceAmount, Ref: "transfer:" + tr.ID.String(), Kind: "transfer"}
}

// payoutRequest is what the bank is asked.
func payoutRequest(tr Transfer) providers.PayoutRequest {
	req := providers.PayoutRequest{Reference: "transfer:" + tr.ID.String(), Rail: tr.Rail, Amount: tr.Amount, Details: map[string]string{}}
	d := tr.Destination.Details
	switch {
	case d.BankAccount != nil:
		req.BankCode, req.AccountNumber = d.BankAccount.BankCode, d.BankAccount.AccountNumber
		if d.BankAccount.AccountName != nil {
			req.AccountName = *d.BankAccount.AccountName
		}
	case d.USBankAccount != nil:
		u := d.USBankAccount
		req.AccountNumber, req.AccountName = u.AccountNumber, u.AccountOwnerName
		req.Details["routing_number"], req.Details["bank_name"] = u.RoutingNumber, u.BankName
		req.Details["account_type"], req.Details["payout_scheme"] = u.AccountType, u.PayoutScheme
		if u.Address != nil {
			req.Details["country"] = u.Address.Country
		}
	case d.SWIFTBankAccount != nil:
		w := d.SWIFTBankAccount
		req.AccountNumber, req.AccountName = w.IBAN, w.AccountOwnerName
		req.Details["iban"], req.Details["account_country"] = w.IBAN, w.AccountCountry
		req.Details["account_owner_type"], req.Details["category"] = w.AccountOwnerType, w.Category
		if w.BIC != nil {
			req.Details["bic"] = *w.BIC
		}
	}
	return req
}

// Advance takes one step of a transfer (the job's work) and returns how long to wait before
// asking the bank again (0: nothing left to do). PROCESSING: the bank is asked for the
// payout (reference "transfer:<id>"; asking again answers the same payout's state):
// settled -> SETTLED (pending -> external, transfer.completed, and payout.completed for NGN);
// refused -> FAILED with the funds returned (pending -> available); accepted -> wait.
// A Go error leaves the transfer as it was: the job retries it.
func (s *Service) Advance(ctx context.Context, id uuid.UUID) (time.Duration, error) {
	tr, err := load(ctx, s.pool, nil, id)
	if err != nil || tr.Status != Processing {
		return 0, err
	}
	return moneyout.AdvancePayout(ctx, s.cfg.Providers.For(tr.Tenant.Environment).Bank, payoutRequest(tr), s.cfg.Poll,
		func(to, providerRef, reason string) error { return s.finish(ctx, tr, to, providerRef, reason) })
}

func (s *Service) finish(ctx context.Context, tr Transfer, to, providerRef, reason string) error {
	return moneyout.Step(ctx, s.pool, ErrNotFound, func(tx pgx.Tx) error {
		tr, err := move(ctx, tx, tr.ID, to, s.cfg.Stamp(), providerRef, reason)
		if err != nil {
			return err
		}
		if to != Settled {
			if _, err := funds(tr).Release(ctx, tx, "Transfer "+tr.Reference+" failed: "+reason); err != nil {
				return err
			}
			return s.cfg.Record(ctx, tx, tr.Tenant, events.TransferFailed, EventData(tr)) // issue 11
		}
		if err := settleTx(ctx, tx, tr, "Transfer "+tr.Reference+" settled"); err != nil {
			return err
		}
		if err := s.cfg.Record(ctx, tx, tr.Tenant, events.TransferCompleted, EventData(tr)); err != nil {
			return err
		}
		if tr.Amount.Asset == money.NGN && tr.Destination.Details.BankAccount != nil {
			b := tr.Destination.Details.BankAccount
			err = s.cfg.Record(ctx, tx, tr.Tenant, events.PayoutCompleted, events.Payout{
				ID: tr.ID.String(), SourceType: "transfer", SourceID: tr.ID.String(), Amount: tr.Amount.String(),
				Currency: string(tr.Amount.Asset), Status: tr.Status, BankCode: b.BankCode, AccountNumber: b.AccountNumber,
				Reference: tr.Reference,
			})
		}
		return err
	})
}

// ErrNotSettled: the transfer is still PROCESSING, so there is no settlement to reverse (the
// caller advances it first: the bank's answer then fails it with the funds returned).
var ErrNotSettled = errors.New("transfers: the transfer is not settled: nothing to reverse")

// ReverseTx applies the bank's reversal of a SETTLED transfer (the payout reached the bank and
// came back, e.g. Paystack's transfer.reversed after transfer.success), in the caller's
// transaction: the transfer ends FAILED with failure_reason "reversed by the bank after
// settlement: <reason>" (settled_at kept), the USDT it debited is credited back to the
// merchant's available balance in full ("transfer:<id>:reversal", system external ->
// merchant available, the transfer's source_amount: no fee is kept, the rate of the original
// debit is used, not today's), and transfer.failed is recorded. applied is false for a
// transfer already FAILED (nothing to do: a repeat, or a reversal the payout job saw first).
//
// Errors: ErrNotFound, ErrNotSettled (still PROCESSING), the database's.
func (s *Service) ReverseTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (tr Transfer, applied bool, err error) {
	why := "reversed by the bank after settlement"
	if reason != "" {
		why += ": " + reason
	}
	if err := Machine.Check(Settled, Failed); err != nil {
		return Transfer{}, false, err
	}
	tr, err = scan(tx.QueryRow(ctx, `update transfers set status = 'FAILED', updated_at = $2, failure_reason = $3
		where id = $1 and status = 'SETTLED' returning `+cols, id, s.cfg.Stamp(), why))
	if errors.Is(err, ErrNotFound) {
		tr, err = load(ctx, tx, nil, id)
		switch {
		case err != nil:
			return Transfer{}, false, err
		case tr.Status == Failed:
			return tr, false, nil
		}
		return tr, false, ErrNotSettled
	}
	if err != nil {
		return Transfer{}, false, fmt.Errorf("transfers: reverse: %w", err)
	}
	f := funds(tr)
	f.Metadata = map[string]string{"transfer_id": tr.ID.String(), "provider_reference": tr.ProviderReference}
	if err := reverseTx(ctx, tx, tr, f, "Transfer "+tr.Reference+" "+why); err != nil {
		return Transfer{}, false, err
	}
	if err := s.cfg.Record(ctx, tx, tr.Tenant, events.TransferFailed, EventData(tr)); err != nil {
		return Transfer{}, false, err
	}
	return tr, true, nil
}

// EventData is the transfer.completed payload.
func EventData(tr Transfer) events.Transfer {
	d := events.Transfer{ID: tr.ID.String(), Type: tr.Rail, Amount: tr.Amount.String(), Currency: string(tr.Amount.Asset),
		Status: tr.Status, Reference: tr.Reference, Metadata: tr.Metadata.OrEmpty()}
	if tr.RecipientID != nil {
		d.RecipientID = tr.RecipientID.String()
	}
	return d
}

func marshalDestination(d Destination) ([]byte, error) {
	b, err := json.Marshal(d.Details)
	if err != nil {
		return nil, fmt.Errorf("transfers: destination: %w", err)
	}
	return b, nil
}
