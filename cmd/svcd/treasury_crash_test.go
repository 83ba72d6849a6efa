package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/gateway/auth/authtest"
	"svc/payments/money"
	"svc/payments/treasury"
)

// TestTreasuryHedgesOnceAcrossSIGKILL (issue 27): sandbox deposits convert NGN to USDT
// without pause (each conversion's ledger posting writes its hedge intent) while the
// treasury hedges every 100 ms; svcd is SIGKILLed three times in that flow, and each time
// the database is read at once: positions posted but not yet hedged, or hedge orders
// written but not settled, are what the kill interrupted. After the last restart every
// position is hedged exactly once: the treasury's orders in the engine (projected) are its
// rows, one for one, none is left placing, nothing is left open beyond a lot, and
// treasury.Verify finds system:fx equal to the treasury's trades plus what is in flight.
func TestTreasuryHedgesOnceAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds svcd, SIGKILLs and restarts it; skipped with -short")
	}
	p, pool := fileJournalSvcd(t, "--treasury-window", "100ms")
	key := authtest.New(t, pool).SandboxKey
	p.start()
	client := &http.Client{Timeout: 5 * time.Second}
	post := func(path string, body any) (map[string]any, error) {
		st, _, data, err := p.call(client, key, "POST", path, body, "X-Idempotency-Key", uuid.NewString())
		if err != nil || st >= 300 {
			return nil, fmt.Errorf("%s: %d %v", path, st, err)
		}
		return data, nil
	}
	// The flow: onramps paid by sandbox deposits, from 4 clients, until stopped; errors
	// while svcd is down are expected and skipped.
	var deposits atomic.Int64
	flow := func(stop <-chan struct{}, wg *sync.WaitGroup) {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					o, err := post("/v1/payments/onramps", map[string]any{"type": "TEMPORARY", "amount": 50000})
					if err != nil {
						time.Sleep(20 * time.Millisecond)
						continue
					}
					if _, err := post("/v1/payments/sandbox/deposits", map[string]any{"onramp_id": o["id"]}); err == nil {
						deposits.Add(1)
					}
				}
			}()
		}
	}
	ctx := context.Background()
	interrupted := 0
	for kill := 0; kill < 3; kill++ {
		stop, wg := make(chan struct{}), &sync.WaitGroup{}
		flow(stop, wg)
		want := deposits.Load() + 20
		for deposits.Load() < want {
			time.Sleep(50 * time.Millisecond)
		}
		p.kill()
		close(stop)
		wg.Wait()
		open, err := treasury.OpenPositions(ctx, pool, "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		var placing int
		if err := pool.QueryRow(ctx, `select count(*) from treasury_orders where status = 'placing'`).Scan(&placing); err != nil {
			t.Fatal(err)
		}
		if open[money.USDT] >= 10_000 || placing > 0 {
			interrupted++
		}
		t.Logf("kill %d after %d deposits: open %v, %d orders placing", kill+1, deposits.Load(), open, placing)
		p.start()
	}
	// Let the treasury hedge what was posted, then reconcile.
	deadline := time.Now().Add(60 * time.Second)
	for {
		open, err := treasury.OpenPositions(ctx, pool, "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		var pending, placing, rows, engineOrders int
		if err := pool.QueryRow(ctx, `select (select count(*) from deposits where status in ('PENDING_FX', 'PENDING_WITHDRAWAL')),
			(select count(*) from treasury_orders where status = 'placing'), (select count(*) from treasury_orders),
			(select count(*) from trading_orders where merchant_id = $1)`, uuid.UUID(treasury.Account)).
			Scan(&pending, &placing, &rows, &engineOrders); err != nil {
			t.Fatal(err)
		}
		bad, recs, err := treasury.Verify(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		// Deposits whose job was running at a kill wait for river's rescue (not for this
		// test): a conversion not yet posted has no intent, one posted has its hedge here.
		settled := placing == 0 && abs(open[money.USDT]) < 10_000 && rows == engineOrders && len(bad) == 0
		for _, r := range recs {
			if r.InFlight != open[r.Asset] {
				settled = false // a hedge recorded but not yet projected
			}
		}
		if settled {
			t.Logf("%d deposits (%d still pending), %d hedge orders (one per row), %d of 3 kills landed between a posting and its hedge; %+v",
				deposits.Load(), pending, rows, interrupted, recs)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reconciled: %d deposits pending, %d orders placing, open %v, %d rows vs %d engine orders, violations %v, %+v",
				pending, placing, open, rows, engineOrders, bad, recs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if interrupted == 0 {
		t.Log("no kill landed between a posting and its hedge this run (the package test covers each stage: payments/treasury TestAHedgeIsPlacedExactlyOnceWhateverTheCrash)")
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
