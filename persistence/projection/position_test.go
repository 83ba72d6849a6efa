package projection

import (
	"context"
	"errors"
	"testing"
	"time"

	"svc/persistence/postgres/pgtest"
)

func TestPositionFollowsTheProjectorThroughPostgreSQL(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	p := NewPosition(pool, "sandbox")
	if got, err := p.Applied(ctx); err != nil || got != 0 {
		t.Fatalf("before any projection: %d, %v", got, err)
	}
	set := func(off int64) {
		t.Helper()
		if _, err := pool.Exec(ctx, `insert into projection_positions (name, "offset") values ('trading:sandbox', $1)
			on conflict (name) do update set "offset" = excluded."offset"`, off); err != nil {
			t.Error(err) // also called from a goroutine
		}
	}
	set(5)
	if err := p.WaitFor(ctx, 5); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := p.WaitFor(short, 6)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the projection: %v", err)
	}
	if got, _ := NewPosition(pool, "live").Applied(ctx); got != 0 {
		t.Fatalf("live reads sandbox's position: %d", got)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		set(9)
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.WaitFor(wctx, 9); err != nil {
		t.Fatal(err)
	}
}
