package authtest_test

import (
	"context"
	"strings"
	"testing"

	"svc/gateway/auth/authtest"
	"svc/persistence/postgres/pgtest"
)

func TestNewTestMerchant(t *testing.T) {
	pool, _ := pgtest.New(t)
	id, sk, lk := authtest.NewTestMerchant(t, pool)
	if !strings.HasPrefix(sk, "svc_sk_test_") || len(sk) != 44 || !strings.HasPrefix(lk, "svc_sk_live_") || len(lk) != 44 {
		t.Fatalf("keys %q %q", sk[:12], lk[:12])
	}
	var n int
	if err := pool.QueryRow(context.Background(), `select count(*) from api_keys where merchant_id = $1 and is_active`, id).Scan(&n); err != nil || n != 2 {
		t.Fatalf("keys stored: %d, %v", n, err)
	}
}
