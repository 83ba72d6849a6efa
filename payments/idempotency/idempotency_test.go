package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/gateway/auth/authtest"
	"svc/payments/idempotency"
	"svc/persistence/postgres/pgtest"
)

// TestScopeSavepoints: in one scope, a step that succeeds keeps its writes and a later step
// that fails loses only its own (the savepoints are nested, not released); Complete commits
// the kept writes with the response, and the key then replays.
func TestScopeSavepoints(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	if _, err := pool.Exec(ctx, `create table idem_steps (step text primary key)`); err != nil {
		t.Fatal(err)
	}
	merchant := uuid.New() // idempotency_keys has no foreign key to merchants
	keys := idempotency.New(pool, idempotency.Config{})
	req := idempotency.Request{MerchantID: merchant, Environment: "sandbox", Key: "k1", Method: "POST", Path: "/x", Body: []byte(`{}`)}
	scope, stored, err := keys.Begin(ctx, req)
	if err != nil || stored != nil {
		t.Fatalf("Begin: %v %v", stored, err)
	}
	sctx := idempotency.WithScope(ctx, scope)
	insert := func(step string, fail bool) error {
		return idempotency.InTx(sctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `insert into idem_steps values ($1)`, step); err != nil {
				return err
			}
			if fail {
				return errors.New("step fails")
			}
			return nil
		})
	}
	steps := []struct {
		name string
		fail bool
	}{{"one", false}, {"two", true}, {"three", false}, {"four", true}}
	for _, s := range steps {
		if err := insert(s.name, s.fail); (err != nil) != s.fail {
			t.Fatalf("step %s: %v", s.name, err)
		}
	}
	// The key is held: a second Begin while the scope runs is refused.
	if _, _, err := keys.Begin(ctx, req); !errors.Is(err, idempotency.ErrKeyInUse) {
		t.Fatalf("Begin while running: %v, want ErrKeyInUse", err)
	}
	if err := scope.Complete(ctx, idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	rows, _ := pool.Query(ctx, `select step from idem_steps order by step`)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "one" || got[1] != "three" {
		t.Fatalf("committed steps %v, want [one three]", got)
	}
	_, stored, err = keys.Begin(ctx, req)
	if err != nil || stored == nil || stored.Status != 201 || string(stored.Body) != `{"ok":true}` {
		t.Fatalf("replay: %+v %v", stored, err)
	}
	req.Body = []byte(`{"other":1}`)
	if _, _, err := keys.Begin(ctx, req); !errors.Is(err, idempotency.ErrKeyReused) {
		t.Fatalf("other body: %v, want ErrKeyReused", err)
	}
}

// TestBeginReadsOnlyItsKey: a keyed request reads its key and nothing of the merchant
// (issue 32 item 8: Begin read the merchant's name for every keyed request, for the one
// route that needs it). With the merchants table locked by another transaction, Begin still
// answers at once.
func TestBeginReadsOnlyItsKey(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	m := authtest.New(t, pool)
	blocker, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback(ctx) }()
	if _, err := blocker.Exec(ctx, `lock table merchants in access exclusive mode`); err != nil {
		t.Fatal(err)
	}
	keys := idempotency.New(pool, idempotency.Config{})
	bctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	scope, _, err := keys.Begin(bctx, idempotency.Request{MerchantID: m.ID, Environment: "sandbox", Key: "n1", Method: "POST", Path: "/x"})
	if err != nil {
		t.Fatalf("Begin waited on the merchants table: %v", err)
	}
	scope.Abort(ctx)
}
