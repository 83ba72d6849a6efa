package customers

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
	"svc/payments/events"
	"svc/payments/idempotency"
	"svc/payments/ledger"
	"svc/payments/metadata"
	"svc/payments/money"
	"svc/payments/providers"
	"svc/persistence/postgres"
)

// Service holds the customer rules. Safe for concurrent use.
type Service struct {
	pool      *pgxpool.Pool
	recorder  *events.Recorder
	providers providers.Environments
	now       func() time.Time
	bvnKey    []byte // HMAC key of BVN digests (bvn.go); nil: the development key
}

// NewService returns the service; now nil means time.Now.
func NewService(pool *pgxpool.Pool, recorder *events.Recorder, envs providers.Environments, now func() time.Time) *Service {
	return &Service{pool: pool, recorder: recorder, providers: envs, now: payments.OrNow(now)}
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

func eventData(c Customer, reason *string) events.Customer {
	return events.Customer{ID: c.ID.String(), Email: c.Email, FirstName: c.FirstName, LastName: c.LastName, KYCTier: c.KYCTier, Reason: reason,
		Metadata: c.Metadata.OrEmpty()}
}

// NormalizeEmail is how emails are stored and matched: trimmed and lower-cased.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Create adds a customer at TIER_0 and records customer.created.
// Errors: ErrCustomerExists, or the database's.
func (s *Service) Create(ctx context.Context, t payments.Tenant, in CreateInput) (Customer, error) {
	now := s.clock()
	c := Customer{ID: uuid.Must(uuid.NewV7()), Email: NormalizeEmail(in.Email), FirstName: in.FirstName, LastName: in.LastName,
		KYCTier: Tier0, Metadata: in.Metadata.OrEmpty(), CreatedAt: now, UpdatedAt: now}
	if err := c.Metadata.Validate(); err != nil {
		return Customer{}, err
	}
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `insert into customers (id, merchant_id, environment, email, first_name, last_name, kyc_tier, created_at, updated_at, metadata)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)
			on conflict (merchant_id, environment, email) do nothing`,
			c.ID, t.MerchantID, t.Environment, c.Email, c.FirstName, c.LastName, c.KYCTier, now, c.Metadata)
		if err != nil {
			return fmt.Errorf("customers: insert: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrCustomerExists
		}
		_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, events.CustomerCreated, eventData(c, nil))
		return err
	})
	return c, err
}

// Get returns a customer. Errors: ErrNotFound.
func (s *Service) Get(ctx context.Context, t payments.Tenant, id uuid.UUID) (Customer, error) {
	return Load(ctx, s.pool, t, id, false)
}

// Update changes the given names and merges the metadata given (an empty value removes a
// key). Errors: ErrNotFound, *payments.ValidationError (metadata beyond 50 keys).
func (s *Service) Update(ctx context.Context, t payments.Tenant, id uuid.UUID, in UpdateInput) (Customer, error) {
	var c Customer
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var md *metadata.Metadata
		if in.Metadata != nil {
			cur, err := Load(ctx, tx, t, id, true)
			if err != nil {
				return err
			}
			merged, err := metadata.Merge(cur.Metadata, in.Metadata)
			if err != nil {
				return err
			}
			md = &merged
		}
		var err error
		c, err = scanCustomer(tx.QueryRow(ctx, `update customers
			set first_name = coalesce($4, first_name), last_name = coalesce($5, last_name), updated_at = $6,
			    metadata = coalesce($7, metadata)
			where merchant_id = $1 and environment = $2 and id = $3
			returning `+customerCols, t.MerchantID, t.Environment, id, in.FirstName, in.LastName, s.clock(), md))
		return err
	})
	return c, err
}

// List returns a page of customers, newest first, and the id to continue after (uuid.Nil
// when this is the last page).
func (s *Service) List(ctx context.Context, t payments.Tenant, f ListFilter) ([]Customer, uuid.UUID, error) {
	if f.Limit <= 0 {
		f.Limit = 20
	}
	f.Email = NormalizeEmail(f.Email)
	want := f.Limit
	f.Limit++
	cs, err := listCustomers(ctx, s.pool, t, f)
	if err != nil {
		return nil, uuid.Nil, err
	}
	if len(cs) > want {
		return cs[:want], cs[want-1].ID, nil
	}
	return cs, uuid.Nil, nil
}

// VerifyTier1 submits a BVN and selfie to the KYC provider. Passed: the customer moves to
// TIER_1 (a TIER_2 customer stays) and customer.tier1_verified is recorded. Failed: the
// verification is REJECTED with the reason, the tier is unchanged, no event (the catalogue
// has none). A customer already at TIER_1 or above is answered VERIFIED without asking the
// provider again.
// Errors: ErrNotFound, *providers.UnavailableError (live without KYC), the database's.
func (s *Service) VerifyTier1(ctx context.Context, t payments.Tenant, id uuid.UUID, in Tier1Input) (Verification, Customer, error) {
	c, err := s.Get(ctx, t, id)
	if err != nil {
		return Verification{}, c, err
	}
	if TierRank(c.KYCTier) >= 1 {
		return Verification{CustomerID: id, Tier: 1, Status: Verified, Reason: "already verified", CreatedAt: c.UpdatedAt}, c, nil
	}
	vid := uuid.Must(uuid.NewV7())
	d, err := s.providers.For(t.Environment).KYC.VerifyTier1(ctx, providers.Tier1Request{
		Reference: vid.String(), FirstName: c.FirstName, LastName: c.LastName, BVN: in.BVN, ImageURL: in.ImageURL})
	if err != nil {
		return Verification{}, c, err
	}
	last4 := in.BVN[len(in.BVN)-4:]
	v := verificationRow{Verification: Verification{ID: vid, CustomerID: id, Tier: 1, Status: Verified, Reason: d.Reason,
		ProviderReference: d.ProviderReference, CreatedAt: s.clock(), Kind: KindSubmission}, bvnLast4: &last4, bvnHash: s.bvnDigest(in.BVN)}
	c, err = s.submitted(ctx, t, c, &v, d, Tier1, events.CustomerTier1Verified, "")
	return v.Verification, c, err
}

// VerifyTier2 submits the tier 2 profile. The customer must be TIER_1 (ErrTier1Required).
// Passed: TIER_2 and customer.tier2_verified. Rejected: the tier is unchanged and
// customer.tier2_rejected carries the reason.
// Errors: ErrNotFound, ErrTier1Required, *providers.UnavailableError, the database's.
func (s *Service) VerifyTier2(ctx context.Context, t payments.Tenant, id uuid.UUID, in Tier2Input) (Verification, Customer, error) {
	c, err := s.Get(ctx, t, id)
	if err != nil {
		return Verification{}, c, err
	}
	switch TierRank(c.KYCTier) {
	case 0:
		return Verification{}, c, ErrTier1Required
	case 2:
		return Verification{CustomerID: id, Tier: 2, Status: Verified, Reason: "already verified", CreatedAt: c.UpdatedAt}, c, nil
	}
	vid := uuid.Must(uuid.NewV7())
	d, err := s.providers.For(t.Environment).KYC.VerifyTier2(ctx, providers.Tier2Request{
		Reference: vid.String(), FirstName: c.FirstName, LastName: c.LastName,
		MostRecentOccupation: in.MostRecentOccupation, ActingAsIntermediary: in.ActingAsIntermediary, Profile: in.Profile})
	if err != nil {
		return Verification{}, c, err
	}
	v := verificationRow{Verification: Verification{ID: vid, CustomerID: id, Tier: 2, Status: Verified, Reason: d.Reason,
		ProviderReference: d.ProviderReference, CreatedAt: s.clock(), Kind: KindSubmission}, profile: in.Profile}
	c, err = s.submitted(ctx, t, c, &v, d, Tier2, events.CustomerTier2Verified, events.CustomerTier2Rejected)
	return v.Verification, c, err
}

// submitted writes the submission v (Rejected when the provider did not approve it) with the
// customer locked and, when it passed and the customer is below tier, moves them there and
// records verified; a rejection records rejected with the reason (when not ""). All in one
// transaction. It returns the customer as locked and moved (or as it was when a step failed).
func (s *Service) submitted(ctx context.Context, t payments.Tenant, c Customer, v *verificationRow, d providers.Decision,
	tier string, verified, rejected events.Type) (Customer, error) {
	if !d.Approved {
		v.Status = Rejected
	}
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if c, err = Load(ctx, tx, t, v.CustomerID, true); err != nil {
			return err
		}
		if err := insertVerification(ctx, tx, t, *v); err != nil {
			return err
		}
		if !d.Approved {
			if rejected == "" {
				return nil
			}
			reason := d.Reason
			_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, rejected, eventData(c, &reason))
			return err
		}
		if TierRank(c.KYCTier) >= TierRank(tier) {
			return nil
		}
		if c, err = s.setTier(ctx, tx, t, v.CustomerID, c.KYCTier, tier); err != nil {
			return err
		}
		_, err = s.recorder.Record(ctx, tx, t.MerchantID, t.Environment, verified, eventData(c, nil))
		return err
	})
	return c, err
}

// setTier moves the customer (locked in tx) from tier `from` to `tier` through TierMachine:
// a move it forbids is a *payments.IllegalMoveError and nothing is written.
func (s *Service) setTier(ctx context.Context, tx pgx.Tx, t payments.Tenant, id uuid.UUID, from, tier string) (Customer, error) {
	if err := TierMachine.Check(from, tier); err != nil {
		return Customer{}, err
	}
	return scanCustomer(tx.QueryRow(ctx, `update customers set kyc_tier = $4, updated_at = $5
		where merchant_id = $1 and environment = $2 and id = $3 and kyc_tier = $6 returning `+customerCols,
		t.MerchantID, t.Environment, id, tier, s.clock(), from))
}

// Initiate starts a hosted verification flow of tier (1 or 2) at the KYC provider and
// returns it PENDING with its verification URL (none when the provider has no page: Paystack
// customer identification). Tier 2 needs TIER_1 (ErrTier1Required). A provider that needs
// identity evidence (providers.EvidenceRequirer) gets the customer's names and the evidence
// in clear; its absence is refused first (*payments.ValidationError naming bvn,
// bank_account.bank_code, bank_account.account_number) and a provider refusing the evidence
// itself is a *payments.FieldError; the verification keeps the BVN's and the account
// number's last 4 digits (and the BVN's keyed digest) only.
// Errors: ErrNotFound, ErrTier1Required, *payments.ValidationError, *payments.FieldError,
// *providers.UnavailableError, the database's.
func (s *Service) Initiate(ctx context.Context, t payments.Tenant, id uuid.UUID, tier int, in InitiateInput) (Verification, error) {
	c, err := s.Get(ctx, t, id)
	if err != nil {
		return Verification{}, err
	}
	if tier == 2 && TierRank(c.KYCTier) < 1 {
		return Verification{}, ErrTier1Required
	}
	kyc := s.providers.For(t.Environment).KYC
	if err := missingEvidence(kyc, tier, in); err != nil {
		return Verification{}, err
	}
	vid := uuid.Must(uuid.NewV7())
	sess, err := kyc.Initiate(ctx, providers.InitiateRequest{
		Reference: vid.String(), Tier: tier, Email: c.Email, BVN: in.BVN, RedirectURL: in.RedirectURL,
		FirstName: c.FirstName, MiddleName: in.MiddleName, LastName: c.LastName, BankCode: in.BankCode, AccountNumber: in.AccountNumber})
	var ee *providers.EvidenceError
	if errors.As(err, &ee) {
		return Verification{}, &payments.FieldError{Field: ee.Field, Message: "was refused by the KYC provider: " + ee.Reason}
	}
	if err != nil {
		return Verification{}, err
	}
	exp := sess.ExpiresAt.UTC().Truncate(time.Millisecond)
	v := verificationRow{Verification: Verification{ID: vid, CustomerID: id, Tier: tier, Status: Pending,
		ProviderReference: sess.Reference, VerificationURL: sess.VerificationURL, RedirectURL: in.RedirectURL, ExpiresAt: &exp,
		CreatedAt: s.clock(), Kind: KindHosted, BankCode: in.BankCode}}
	if in.BVN != "" {
		last4 := in.BVN[len(in.BVN)-4:]
		v.bvnLast4, v.bvnHash = &last4, s.bvnDigest(in.BVN)
	}
	if len(in.AccountNumber) >= 4 {
		v.AccountLast4 = in.AccountNumber[len(in.AccountNumber)-4:]
	}
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := Load(ctx, tx, t, id, true); err != nil {
			return err
		}
		return insertVerification(ctx, tx, t, v)
	})
	return v.Verification, err
}

// missingEvidence is the evidence kyc needs for tier that in lacks, as a
// *payments.ValidationError (nil when nothing is missing).
func missingEvidence(kyc providers.KYC, tier int, in InitiateInput) error {
	er, ok := kyc.(providers.EvidenceRequirer)
	if !ok {
		return nil
	}
	need := er.InitiateEvidence(tier)
	const why = "is required in this environment: the KYC provider checks the BVN against a bank account in the customer's name"
	var p payments.Problems
	if need.BVN {
		p.Check(in.BVN != "", "bvn", why)
	}
	if need.BankAccount {
		p.Check(in.BankCode != "", "bank_account.bank_code", why)
		p.Check(in.AccountNumber != "", "bank_account.account_number", why)
	}
	return p.Err()
}

// Verifications lists a customer's verifications, newest first (a hosted one past its
// session's expiry without an outcome shows EXPIRED).
func (s *Service) Verifications(ctx context.Context, t payments.Tenant, id uuid.UUID) ([]Verification, error) {
	rows, err := s.pool.Query(ctx, `select `+verificationCols+` from kyc_verifications
		where merchant_id = $1 and environment = $2 and customer_id = $3 order by created_at desc, id desc`, t.MerchantID, t.Environment, id)
	if err != nil {
		return nil, err
	}
	out, err := postgres.Collect(rows, scanVerification)
	for i := range out {
		out[i] = shown(out[i], s.clock())
	}
	return out, err
}

// AddWallet registers a crypto wallet. Errors: ErrNotFound, ErrWalletExists.
func (s *Service) AddWallet(ctx context.Context, t payments.Tenant, id uuid.UUID, in WalletInput) (Wallet, error) {
	var w Wallet
	err := idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := Load(ctx, tx, t, id, false); err != nil {
			return err
		}
		var err error
		w, err = scanWallet(tx.QueryRow(ctx, `insert into customer_wallets (id, merchant_id, environment, customer_id, chain, asset, address, label, created_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			on conflict (customer_id, chain, asset, address) do nothing
			returning `+walletCols, uuid.Must(uuid.NewV7()), t.MerchantID, t.Environment, id, in.Chain, in.Asset, in.Address, in.Label, s.clock()))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrWalletExists
		}
		return err
	})
	return w, err
}

// Wallets lists a customer's wallets, oldest first, with the total.
func (s *Service) Wallets(ctx context.Context, t payments.Tenant, id uuid.UUID, limit, offset int) ([]Wallet, int64, error) {
	if _, err := s.Get(ctx, t, id); err != nil {
		return nil, 0, err
	}
	const where = ` from customer_wallets where merchant_id = $1 and environment = $2 and customer_id = $3`
	return postgres.Page(ctx, s.pool, "wallets", `select count(*)`+where, `select `+walletCols+where+` order by created_at, id`,
		[]any{t.MerchantID, t.Environment, id}, limit, offset, scanWallet)
}

// CreateFunding asks the custodian for the customer's deposit address on the chain (stable
// per customer, chain and asset) and records a PENDING funding request valid for
// FundingLifetime. Errors: ErrNotFound, *providers.UnavailableError, the database's.
func (s *Service) CreateFunding(ctx context.Context, t payments.Tenant, id uuid.UUID, in FundingInput) (FundingRequest, error) {
	if _, err := s.Get(ctx, t, id); err != nil {
		return FundingRequest{}, err
	}
	addr, err := s.providers.For(t.Environment).Custody.DepositAddress(ctx, providers.AddressRequest{
		Reference: "customer:" + id.String() + ":" + in.Asset, Chain: providers.Chain(in.Chain), Asset: money.Asset(in.Asset)})
	if err != nil {
		return FundingRequest{}, err
	}
	now := s.clock()
	f := FundingRequest{ID: uuid.Must(uuid.NewV7()), CustomerID: id, Chain: in.Chain, Asset: in.Asset, Amount: in.Amount,
		DepositAddress: addr.Address, Status: Pending, ExpiresAt: now.Add(FundingLifetime), CreatedAt: now}
	var amount *int64
	if in.Amount != nil {
		amount = &in.Amount.Minor
	}
	err = idempotency.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := Load(ctx, tx, t, id, false); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into crypto_funding_requests (id, merchant_id, environment, customer_id, chain, asset, amount,
				deposit_address, status, expires_at, created_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			f.ID, t.MerchantID, t.Environment, id, f.Chain, f.Asset, amount, f.DepositAddress, f.Status, f.ExpiresAt, f.CreatedAt)
		return err
	})
	return f, err
}

// Balance reads the customer's ledger accounts. Errors: ErrNotFound.
func (s *Service) Balance(ctx context.Context, t payments.Tenant, id uuid.UUID) (Balance, error) {
	c, err := s.Get(ctx, t, id)
	if err != nil {
		return Balance{}, err
	}
	accts, err := ledger.OwnerBalances(ctx, s.pool, t.MerchantID, t.Environment, ledger.OwnerCustomer, id)
	if err != nil {
		return Balance{}, err
	}
	b := Balance{NGN: money.Zero(money.NGN), USD: money.Zero(money.USD), Accounts: accts, UpdatedAt: c.CreatedAt}
	// The USD figure sums USD, USDT and USDC 1:1 in USDT's minor unit (the assets' places
	// come from payments/money), every step checked, and is rounded down to the cent once:
	// it never shows more than is there.
	usd := money.Zero(money.USDT)
	for _, a := range accts {
		if a.UpdatedAt.After(b.UpdatedAt) {
			b.UpdatedAt = a.UpdatedAt
		}
		if a.Account.Purpose != ledger.Available {
			continue
		}
		switch a.Amount.Asset {
		case money.NGN:
			b.NGN = a.Amount
		case money.USD, money.USDT, money.USDC:
			u, err := money.Convert(a.Amount, money.USDT, par, money.Down)
			if err == nil {
				usd, err = usd.Add(u)
			}
			if err != nil {
				return Balance{}, fmt.Errorf("customers: USD balance of %s: %w", id, err)
			}
		}
	}
	if b.USD, err = money.Convert(usd, money.USD, par, money.Down); err != nil {
		return Balance{}, fmt.Errorf("customers: USD balance of %s: %w", id, err)
	}
	return b, nil
}

// par is 1:1, the rate at which USD, USDT and USDC add up in the customer's USD balance.
var par = money.MustRate("1")

// Ledger lists the entries of the customer's accounts, newest first. Errors: ErrNotFound.
func (s *Service) Ledger(ctx context.Context, t payments.Tenant, id uuid.UUID, limit, offset int) ([]ledger.Entry, int64, error) {
	if _, err := s.Get(ctx, t, id); err != nil {
		return nil, 0, err
	}
	return ledger.ListEntries(ctx, s.pool, ledger.EntryFilter{MerchantID: t.MerchantID, Environment: t.Environment,
		Owner: ledger.OwnerCustomer, OwnerID: id}, limit, offset)
}
