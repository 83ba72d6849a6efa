package treasury

import (
	"context"
	"sync"
	"testing"
	"time"

	"svc/engine"
	"svc/payments/money"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
)

// stallJournal holds every append while shut (a journal whose disk stopped answering)
// and says when one is held.
type stallJournal struct {
	inner engine.Journal
	mu    sync.Mutex
	shut  chan struct{} // nil: open
	held  chan struct{}
}

func (s *stallJournal) Append(b []engine.Event) (uint64, error) {
	s.mu.Lock()
	h := s.shut
	s.mu.Unlock()
	if h != nil {
		select {
		case s.held <- struct{}{}:
		default:
		}
		<-h
	}
	return s.inner.Append(b)
}

func (s *stallJournal) close() { s.mu.Lock(); s.shut = make(chan struct{}); s.mu.Unlock() }
func (s *stallJournal) open() {
	s.mu.Lock()
	if s.shut != nil {
		close(s.shut)
		s.shut = nil
	}
	s.mu.Unlock()
}

// A Credit waiting for a slow engine (its journal stalled) holds up no other caller:
// Total answers at once (without the row in flight) and another Credit leaves that row to
// the first and returns. Once the engine answers, the row is counted once; Credits run at
// once over new rows credit each exactly once, in the engine and in Total. Before, the
// first Credit held the funding's mutex across the engine's Submit and every caller
// waited behind it.
func TestFundingCreditDoesNotHoldOthersBehindASlowEngine(t *testing.T) {
	pool, _ := pgtest.New(t)
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	sj := &stallJournal{inner: eventlog.New(j, nil), held: make(chan struct{}, 1)}
	eng, err := engine.New(engine.Config{Journal: sj})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sj.open(); eng.Stop() })
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

	sj.close()
	first := make(chan error, 1)
	go func() { first <- f.Credit(ctx) }()
	select {
	case <-sj.held:
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

	sj.open()
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
