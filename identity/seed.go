package identity

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"svc/persistence/postgres"
)

// SeedOptions describe a merchant created directly (demo, tests), already verified.
type SeedOptions struct {
	Email        string
	PasswordHash string // from Hasher.Hash; required
	BusinessName string
	RateLimit    *int // nil: the server default
	KYCApproved  bool // sandbox KYC approved
	// LiveKYCApproved: live KYC approved too (live keys and live requests need it).
	LiveKYCApproved bool
}

// SeedMerchant creates a verified merchant without mail or codes.
func SeedMerchant(ctx context.Context, pool *pgxpool.Pool, o SeedOptions) (Merchant, error) {
	now := time.Now().UTC()
	m := Merchant{
		ID: uuid.Must(uuid.NewV7()), Email: o.Email, PasswordHash: o.PasswordHash,
		BusinessName: o.BusinessName, FirstName: "Demo", LastName: "Merchant",
		EmailVerifiedAt: &now, RateLimitPerMinute: o.RateLimit,
	}
	if m.BusinessName == "" {
		m.BusinessName = "Demo Business"
	}
	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := insertMerchant(ctx, tx, m); err != nil {
			return err
		}
		if o.KYCApproved {
			if _, err := tx.Exec(ctx, `insert into merchant_kyc (merchant_id, environment, status, reviewed_at) values ($1, 'sandbox', 'APPROVED', now())`, m.ID); err != nil {
				return err
			}
		}
		if o.LiveKYCApproved {
			if _, err := tx.Exec(ctx, `insert into merchant_kyc (merchant_id, environment, status, reviewed_at) values ($1, 'live', 'APPROVED', now())`, m.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return m, err
}

// CreateKey makes and stores an API key with every scope for a merchant, returning the
// full key once.
func CreateKey(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, env Environment, name string) (APIKey, string, error) {
	return CreateScopedKey(ctx, q, merchantID, env, name, AllScopes)
}

// CreateScopedKey is CreateKey with the given scopes (zero: all).
func CreateScopedKey(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, env Environment, name string, scopes Scope) (APIKey, string, error) {
	if scopes == 0 {
		scopes = AllScopes
	}
	key, hash, prefix := NewAPIKey(env)
	k := APIKey{
		ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Environment: env, Name: name,
		KeyPrefix: prefix, IsActive: true, Scopes: scopes, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
	}
	if err := InsertAPIKey(ctx, q, k, hash); err != nil {
		return APIKey{}, "", err
	}
	return k, key, nil
}
