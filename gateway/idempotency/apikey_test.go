package idempotency_test

import (
	"context"
	"testing"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/identity"
	"svc/payments/idempotency"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

// An API key's create and its idempotency record are one transaction (issue 30): identity
// writes the key in the keyed request's scope (postgres.InScope), so a retry with the same
// key answers the same key id and makes no second key, and a create whose transaction does
// not commit (a 5xx, a crash before the commit: Abort) leaves neither the key nor the record.
func TestAPIKeyCreateIsAtomicWithItsIdempotencyRecord(t *testing.T) {
	pool, _ := pgtest.New(t)
	srv := gatewaytest.New(t, pool)
	m := authtest.New(t, pool)
	ctx := context.Background()
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	keysNamed := func(name string) int {
		return count(`select count(*) from api_keys where merchant_id = $1 and name = $2`, m.ID, name)
	}
	records := func(key string) int {
		return count(`select count(*) from idempotency_keys where merchant_id = $1 and key = $2`, m.ID, key)
	}

	// Over HTTP: the retry is the same key.
	var first, again struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	srv.Must(t, 201, "POST", "/v1/api-keys", m.SandboxKey, `{"name":"deploy"}`, "X-Idempotency-Key", "k-deploy").Decode(t, &first)
	r := srv.Must(t, 201, "POST", "/v1/api-keys", m.SandboxKey, `{"name":"deploy"}`, "X-Idempotency-Key", "k-deploy")
	r.Decode(t, &again)
	if r.Header["Idempotent-Replayed"] != "true" || again.ID != first.ID || again.Key != first.Key || first.ID == "" {
		t.Fatalf("retry: %s (first %s)", r.Body, first.ID)
	}
	if n := keysNamed("deploy"); n != 1 {
		t.Fatalf("%d keys named deploy, want 1", n)
	}

	// In the scope: a create whose transaction is rolled back leaves nothing; one that
	// completes leaves both rows.
	id, err := identity.New(pool, identity.Config{JWTSecret: []byte("apikey-atomic-test-secret-0123456789")},
		authtest.Mailer(&mail.Outbox{DB: pool}), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := idempotency.New(pool, idempotency.Config{})
	caller := identity.Caller{MerchantID: m.ID}
	for _, commit := range []bool{false, true} {
		req := idempotency.Request{MerchantID: m.ID, Environment: "sandbox", Key: "k-scope", Method: "POST", Path: "/v1/api-keys", Body: []byte(`{"name":"scoped"}`)}
		scope, stored, err := keys.Begin(ctx, req)
		if err != nil || stored != nil {
			t.Fatalf("begin: %v %v", stored, err)
		}
		k, err := id.CreateAPIKey(idempotency.WithScope(ctx, scope), caller, "scoped", identity.Sandbox, 0)
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := scope.Complete(ctx, idempotency.Response{Status: 201, Body: []byte(`{"id":"` + k.ID.String() + `"}`)}); err != nil {
				t.Fatal(err)
			}
		} else {
			scope.Abort(ctx)
		}
		want := 0
		if commit {
			want = 1
		}
		if n, r := keysNamed("scoped"), records("k-scope"); n != want || r != want {
			t.Fatalf("commit %v: %d keys and %d records, want %d of each", commit, n, r, want)
		}
		if commit {
			if _, stored, err := keys.Begin(ctx, req); err != nil || stored == nil || string(stored.Body) != `{"id":"`+k.ID.String()+`"}` {
				t.Fatalf("retry after the commit: %+v %v", stored, err)
			}
		}
	}
}
