package identity_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/netip"
	"testing"
	"time"

	"svc/identity"
	"svc/persistence/postgres/pgtest"
)

type discardMail struct{}

func (discardMail) Send(context.Context, identity.Message) error { return nil }

// Identity answers the authenticator without HTTP: who a key stands for, whether its
// merchant may be served from an address, and which limit applies.
func TestIdentifyAndAdmit(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	id, err := identity.New(pool, identity.Config{JWTSecret: []byte("identity-test-secret-0123456789-abcdef"), DefaultRateLimit: 77}, discardMail{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id.Start()
	t.Cleanup(id.Stop)
	select {
	case <-id.Cache().Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("cache listener not ready")
	}
	hash, err := identity.NewHasher(1).Hash(ctx, "a long password")
	if err != nil {
		t.Fatal(err)
	}
	m, err := identity.SeedMerchant(ctx, pool, identity.SeedOptions{Email: "authn@example.test", PasswordHash: hash, LiveKYCApproved: true})
	if err != nil {
		t.Fatal(err)
	}
	k, key, err := identity.CreateScopedKey(ctx, pool, m.ID, identity.Live, "k", identity.ScopeRead|identity.ScopeTrade)
	if err != nil {
		t.Fatal(err)
	}
	never := func() bool { return false }
	always := func() bool { return true }

	// A key not yet in memory needs a query, which a throttled caller does not get.
	if _, err := id.IdentifyKey(ctx, []byte(key), never); !errors.Is(err, identity.ErrThrottled) {
		t.Fatalf("throttled: %v", err)
	}
	a, err := id.IdentifyKey(ctx, []byte(key), always)
	if err != nil || a.MerchantID != m.ID || a.Environment != identity.Live || a.APIKeyID != k.ID || a.Scopes != identity.ScopeRead|identity.ScopeTrade {
		t.Fatalf("%+v %v", a, err)
	}
	// Now it is in memory: no query, so the throttle is not asked.
	if _, err := id.IdentifyKey(ctx, []byte(key), never); err != nil {
		t.Fatalf("cached key: %v", err)
	}
	for _, bad := range []string{"svc_sk_live_short", "svc_sk_test_" + key[12:]} {
		if _, err := id.IdentifyKey(ctx, []byte(bad), always); !errors.Is(err, identity.ErrUnauthorized) {
			t.Fatalf("%q: %v", bad[:12], err)
		}
	}
	if _, err := id.IdentifyToken("not-a-jwt"); !errors.Is(err, identity.ErrUnauthorized) {
		t.Fatalf("token: %v", err)
	}

	client := netip.MustParseAddr("198.51.100.4")
	if limit, err := id.Admit(ctx, m.ID, client, false); err != nil || limit != 77 {
		t.Fatalf("admit: %d %v", limit, err)
	}
	if _, err := id.SetWhitelist(ctx, m.ID, identity.Whitelist{Enabled: true, IPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := id.Admit(ctx, m.ID, client, false); !errors.Is(err, identity.ErrIPNotWhitelisted) {
		t.Fatalf("outside the whitelist: %v", err)
	}
	if err := id.Recheck(ctx, sha256.Sum256([]byte(key)), m.ID, identity.Live, netip.MustParseAddr("10.1.1.1"), false); err != nil {
		t.Fatalf("recheck inside: %v", err)
	}
	if err := identity.NewStore(pool).SetSuspended(ctx, m.ID, true, "test", "test"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // the notification reaches the cache
	for {
		_, err := id.Admit(ctx, m.ID, netip.MustParseAddr("10.1.1.1"), false)
		if errors.Is(err, identity.ErrSuspended) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("suspension not seen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := id.Admit(ctx, [16]byte{1}, client, false); !errors.Is(err, identity.ErrUnauthorized) {
		t.Fatalf("unknown merchant: %v", err)
	}
	if _, err := id.RevokeAPIKey(ctx, identity.Caller{MerchantID: m.ID}, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := id.IdentifyKey(ctx, []byte(key), always); !errors.Is(err, identity.ErrUnauthorized) {
		t.Fatalf("revoked key: %v", err)
	}
}
