package customers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments"
	"svc/persistence/postgres"
)

const customerCols = `id, email, first_name, last_name, kyc_tier, created_at, updated_at, metadata`

func scanCustomer(row pgx.Row) (Customer, error) {
	var c Customer
	err := row.Scan(&c.ID, &c.Email, &c.FirstName, &c.LastName, &c.KYCTier, &c.CreatedAt, &c.UpdatedAt, &c.Metadata)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, ErrNotFound
	}
	return c, err
}

// Load reads one customer of the tenant (ErrNotFound); with lock, FOR UPDATE (q must be a
// transaction). Other payments domains (virtual accounts, onramps) use it to check a customer
// and its tier inside their own transaction.
func Load(ctx context.Context, q postgres.Querier, t payments.Tenant, id uuid.UUID, lock bool) (Customer, error) {
	sql := `select ` + customerCols + ` from customers where merchant_id = $1 and environment = $2 and id = $3`
	if lock {
		sql += ` for update`
	}
	c, err := scanCustomer(q.QueryRow(ctx, sql, t.MerchantID, t.Environment, id))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return c, fmt.Errorf("customers: load: %w", err)
	}
	return c, err
}

func listCustomers(ctx context.Context, q postgres.Querier, t payments.Tenant, f ListFilter) ([]Customer, error) {
	args := []any{t.MerchantID, t.Environment, f.Email, f.KYCTier, f.After, f.Limit}
	cond := ""
	if f.Metadata != nil { // containment, served by the GIN index customers_metadata
		args = append(args, f.Metadata.JSON())
		cond = ` and metadata @> $7::jsonb`
	}
	rows, err := q.Query(ctx, `select `+customerCols+` from customers
		where merchant_id = $1 and environment = $2
		  and ($3 = '' or email = $3) and ($4 = '' or kyc_tier = $4)
		  and ($5 = '00000000-0000-0000-0000-000000000000'::uuid or id < $5)`+cond+`
		order by id desc limit $6`, args...)
	if err != nil {
		return nil, fmt.Errorf("customers: list: %w", err)
	}
	out, err := postgres.Collect(rows, scanCustomer)
	if err != nil {
		return nil, fmt.Errorf("customers: list: %w", err)
	}
	return out, nil
}

const verificationCols = `id, customer_id, tier, status, coalesce(reason, ''), coalesce(provider_reference, ''),
	coalesce(verification_url, ''), coalesce(redirect_url, ''), expires_at, created_at, kind, coalesce(bank_code, ''),
	coalesce(account_last4, '')`

// verificationDest is where verificationCols scan into.
func verificationDest(v *Verification) []any {
	return []any{&v.ID, &v.CustomerID, &v.Tier, &v.Status, &v.Reason, &v.ProviderReference, &v.VerificationURL, &v.RedirectURL,
		&v.ExpiresAt, &v.CreatedAt, &v.Kind, &v.BankCode, &v.AccountLast4}
}

func scanVerification(row pgx.Row) (Verification, error) {
	var v Verification
	err := row.Scan(verificationDest(&v)...)
	return v, err
}

type verificationRow struct {
	Verification
	bvnLast4 *string
	bvnHash  []byte
	profile  []byte
}

func insertVerification(ctx context.Context, tx pgx.Tx, t payments.Tenant, v verificationRow) error {
	_, err := tx.Exec(ctx, `insert into kyc_verifications (id, merchant_id, environment, customer_id, tier, kind, status, reason,
			bvn_last4, bvn_hash, profile, provider_reference, verification_url, redirect_url, expires_at, created_at,
			bank_code, account_last4)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		v.ID, t.MerchantID, t.Environment, v.CustomerID, v.Tier, v.Kind, v.Status, postgres.NullIfEmpty(v.Reason),
		v.bvnLast4, v.bvnHash, v.profile, postgres.NullIfEmpty(v.ProviderReference), postgres.NullIfEmpty(v.VerificationURL), postgres.NullIfEmpty(v.RedirectURL),
		v.ExpiresAt, v.CreatedAt, postgres.NullIfEmpty(v.BankCode), postgres.NullIfEmpty(v.AccountLast4))
	if err != nil {
		return fmt.Errorf("customers: insert verification: %w", err)
	}
	return nil
}

const walletCols = `id, customer_id, chain, asset, address, label, created_at`

func scanWallet(row pgx.Row) (Wallet, error) {
	var w Wallet
	err := row.Scan(&w.ID, &w.CustomerID, &w.Chain, &w.Asset, &w.Address, &w.Label, &w.CreatedAt)
	return w, err
}
