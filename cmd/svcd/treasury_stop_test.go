package main

import (
	"context"
	"testing"
	"time"

	"svc/gateway/api"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/payments/treasury"
	"svc/persistence/journal/journaltest"
	"svc/persistence/postgres/pgtest"
)

// The treasury's loops blocked in the engine (its journal stalled: Submit takes no
// context) do not hold svcd's shutdown past its deadline: stop returns by then and logs
// which loops it abandoned. Before, it waited for them without a deadline.
func TestTreasuryStopIsBoundedByTheShutdownDeadline(t *testing.T) {
	pool, _ := pgtest.New(t)
	eng, sj := journaltest.StartEngine(t, nil)
	sj.Hold()
	rs, err := rates.New(pool, rates.Config{Exchanges: map[string]rates.Exchange{"sandbox": eng},
		References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000, money.USD: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	desk, err := treasury.New(pool, treasury.Config{Prices: rs, Envs: map[string]treasury.Env{"sandbox": {Exchange: eng,
		Limits: map[money.Asset]int64{money.USDT: 1_000_000_000}, Inventory: sandboxTreasuryInventory}}})
	if err != nil {
		t.Fatal(err)
	}
	maker, err := treasury.NewMaker(treasury.MakerConfig{Env: "sandbox", Exchange: eng, Prices: rs, Fund: true, Inventory: sandboxTreasuryInventory})
	if err != nil {
		t.Fatal(err)
	}
	p := &treasuryParts{desk: desk, hedge: true, makers: []*treasury.Maker{maker}, envs: []api.Environment{api.Sandbox}}
	p.start(context.Background())
	select { // both credit their inventory first: the engine holds them
	case <-sj.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("the treasury never reached the engine's journal")
	}

	stopBounded(t, p.stop, p.loops, sj.Release, "market maker sandbox")
}
