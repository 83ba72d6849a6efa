// Package authtest gives other packages' tests a merchant with API keys in one call, in a
// database from pgtest.New.
package authtest

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/identity"
	"svc/payments/providers/mail"
)

// Password is the password of every merchant made here.
const Password = "correct horse battery staple"

var (
	hashOnce sync.Once
	hash     string
)

func passwordHash(t testing.TB) string {
	hashOnce.Do(func() {
		h, err := identity.NewHasher(1).Hash(context.Background(), Password)
		if err != nil {
			t.Fatalf("authtest: hash: %v", err)
		}
		hash = h
	})
	return hash
}

// Merchant is a test merchant and its keys.
type Merchant struct {
	ID         uuid.UUID
	Email      string
	SandboxKey string // svc_sk_test_...
	LiveKey    string // svc_sk_live_...
}

// NewTestMerchant creates a verified merchant (password Password, KYC approved in sandbox and live, a
// rate limit of one million requests a minute) with one sandbox and one live key.
func NewTestMerchant(t testing.TB, pool *pgxpool.Pool) (merchantID uuid.UUID, sandboxKey, liveKey string) {
	t.Helper()
	m := New(t, pool)
	return m.ID, m.SandboxKey, m.LiveKey
}

// New is NewTestMerchant returning the email too.
func New(t testing.TB, pool *pgxpool.Pool) Merchant {
	t.Helper()
	ctx := context.Background()
	limit := 1_000_000
	email := "m-" + uuid.NewString()[:8] + "@example.test"
	m, err := identity.SeedMerchant(ctx, pool, identity.SeedOptions{
		Email: email, PasswordHash: passwordHash(t), BusinessName: "Test Merchant", RateLimit: &limit, KYCApproved: true,
		LiveKYCApproved: true, // the live key is usable (live needs an approved merchant)
	})
	if err != nil {
		t.Fatalf("authtest: merchant: %v", err)
	}
	_, sk, err := identity.CreateKey(ctx, pool, m.ID, identity.Sandbox, "test sandbox key")
	if err != nil {
		t.Fatalf("authtest: sandbox key: %v", err)
	}
	_, lk, err := identity.CreateKey(ctx, pool, m.ID, identity.Live, "test live key")
	if err != nil {
		t.Fatalf("authtest: live key: %v", err)
	}
	return Merchant{ID: m.ID, Email: email, SandboxKey: sk, LiveKey: lk}
}

// Mailer adapts a payments/providers/mail sender (the outbox, in tests) to what identity
// sends with.
func Mailer(s mail.Sender) identity.Mailer {
	return identity.MailerFunc(func(ctx context.Context, m identity.Message) error { return s.Send(ctx, mail.Message(m)) })
}
