package treasury

import (
	"context"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/payments/money"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

// A Credit waiting for a slow engine (its journal stalled) holds up no other caller:
// Total answers at once (without the row in flight) and another Credit leaves that row to
// the first and returns. Once the engine answers, the row is counted once; Credits run at
// once over new rows credit each exactly once, in the engine and in Total. Before, the
// first Credit held the funding's mutex across the engine's Submit and every caller
// waited behind it.
func TestFundingCreditDoesNotHoldOthersBehindASlowEngine(t *testing.T) {
	pool, _ := pgtest.New(t)
	eng, sj := journaltest.StartEngine(t, nil)
	f, err := NewFunding(pool, eng, "sandbox", FundMaker)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fund := func(ref, amount string) {
		t.Helper()
		if _, _, err := Fund(ctx, pool, FundRequest{Env: "sandbox", Account: FundMaker, Amount: money.MustParse(money.USDT, amount), Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}
	const unit = 1_000_000 // USDT's engine units
	fund("slow-1", "100.00")

	sj.Hold()
	first := make(chan error, 1)
	go func() { first <- f.Credit(ctx) }()
	select {
	case <-sj.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("the credit never reached the journal")
	}
	others := make(chan error, 1)
	var during int64
	go func() {
		during = f.Total(engine.USDT)
		others <- f.Credit(ctx)
	}()
	select {
	case err := <-others:
		if err != nil || during != 0 {
			t.Fatalf("beside a credit in flight: Credit %v, Total %d (want nil, 0)", err, during)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Total and a second Credit waited behind the credit held in the engine")
	}

	sj.Release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := f.Total(engine.USDT); got != 100*unit {
		t.Fatalf("Total %d after the held credit, want %d", got, 100*unit)
	}

	fund("slow-2", "20.00")
	fund("slow-3", "3.00")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- f.Credit(ctx) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b := eng.Balances(MakerAccount)[engine.USDT]
	if got := f.Total(engine.USDT); got != 123*unit || b.Available+b.Locked != 123*unit {
		t.Fatalf("after concurrent credits: Total %d, engine %d, want %d each (every row once)", got, b.Available+b.Locked, 123*unit)
	}
}
