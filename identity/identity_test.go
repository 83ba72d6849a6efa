package identity_test

import (
	"context"
	"strings"
	"testing"

	"svc/identity"
)

func TestArgon2idEncoding(t *testing.T) {
	h := identity.NewHasher(1)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "hunter2hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Count(enc, "$") != 5 {
		t.Fatalf("encoding %q", enc)
	}
	if ok, err := h.Verify(ctx, enc, "hunter2hunter2"); !ok || err != nil {
		t.Fatal("right password refused")
	}
	if ok, _ := h.Verify(ctx, enc, "hunter2hunter3"); ok {
		t.Fatal("wrong password accepted")
	}
	enc2, _ := h.Hash(ctx, "hunter2hunter2")
	if enc2 == enc {
		t.Fatal("no salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=19456,t=2,p=1$AAAA$AAAA", "$argon2id$v=19$m=0,t=2,p=1$AAAA$AAAA", "plain"} {
		if ok, err := h.Verify(ctx, bad, "x"); ok || err == nil {
			t.Fatalf("malformed %q accepted", bad)
		}
	}
}

func TestAPIKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		k, hash, prefix := identity.NewAPIKey(identity.Live)
		if len(k) != 44 || !strings.HasPrefix(k, "svc_sk_live_") || prefix != k[:20] || len(hash) != 32 || seen[k] {
			t.Fatalf("key %q", k[:12])
		}
		seen[k] = true
		if env, ok := identity.KeyEnvironment(k); !ok || env != identity.Live {
			t.Fatal("environment not read back")
		}
	}
	k, _, _ := identity.NewAPIKey(identity.Sandbox)
	if env, ok := identity.KeyEnvironment(k); !ok || env != identity.Sandbox {
		t.Fatal("sandbox key")
	}
	for _, bad := range []string{"svc_sk_test_short", "svc_sk_prod_" + strings.Repeat("a", 32), "svc_sk_test_" + strings.Repeat("-", 32)} {
		if _, ok := identity.KeyEnvironment(bad); ok {
			t.Fatalf("%q accepted", bad)
		}
	}
}
