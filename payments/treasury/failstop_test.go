package treasury

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"svc/engine"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/persistence/journal"
	"svc/persistence/journal/journaltest"
	"svc/persistence/projection"
)

// restart is svcd's restart of the sandbox's engine from its durable state: a new engine
// restored from snap (taken at offset snapOff) and the journal's records after it, over
// the same records reopened (a new journal holding what the failed one made durable: its
// failure is the disk's, and the restarted process opens it again), then the rates, desk
// and maker of the new process over it.
func (r *rig) restart(t *testing.T, snap []byte, snapOff uint64) {
	t.Helper()
	ctx := context.Background()
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.journal.ReadFrom(ctx, 0, func(_ uint64, p []byte) error {
		_, err := j.Append(ctx, [][]byte{p})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eng, off := journaltest.Recover(t, j, snap, snapOff)
	if off != snapOff {
		t.Fatalf("restore: offset %d; want %d", off, snapOff)
	}
	var err error
	r.journal, r.eng, r.proj = j, eng, projection.New(r.pool, "sandbox", j, nil)
	e := r.envs["sandbox"]
	e.Exchange = eng
	r.envs["sandbox"] = e
	if r.rates, err = rates.New(r.pool, rates.Config{Exchanges: map[string]rates.Exchange{"sandbox": eng},
		References: map[money.Asset]int64{money.USDT: refPrice, money.USDC: refPrice, money.USD: refPrice}, Treasury: lazyDesk{r}}); err != nil {
		t.Fatal(err)
	}
	if r.desk, err = New(r.pool, Config{Envs: r.envs, Prices: r.rates}); err != nil {
		t.Fatal(err)
	}
	if r.maker, err = NewMaker(MakerConfig{Env: "sandbox", Exchange: eng, Prices: r.rates}); err != nil {
		t.Fatal(err)
	}
}

// TestAFailStoppedEngineSettlesNoHedge: the journal fails while a hedge is submitted, so the
// local engine fail-stops with the hedge's fill in its memory and never in its journal.
// The round answers engine.ErrUnavailable, and so does every round after it: the row stays
// placing with nothing filled, the open position stays whole, the engine placed no order
// the projection knows, and the metrics leave the inventory out. Settling the row from the
// failed engine's memory (done, 250 USDT filled) would lose the hedge: a restart removes
// the fill. After a restart from snapshot + journal the next round places the row's order
// again on the recovered book, settles it, and the books reconcile.
func TestAFailStoppedEngineSettlesNoHedge(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	snap, snapOff, err := r.eng.Snapshot(nil) // the maker funded; its ladder and the treasury's credits are the journal's tail
	if err != nil {
		t.Fatal(err)
	}
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil { // credits the treasury's inventory
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(r.desk.Collector(), "svc_treasury_inventory"); n != 4 {
		t.Fatalf("%d inventory metrics before the failure; want 4", n)
	}
	r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)

	r.journal.Fail(errors.New("disk gone"))
	if err := r.desk.Hedge(ctx, "sandbox"); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("the round with the journal failing: %v; want %v", err, engine.ErrUnavailable)
	}
	if !r.eng.Failed() {
		t.Fatal("the engine did not fail-stop")
	}
	if bal := r.eng.Balances(Account); bal[engine.USDT].Available == 1_000_000*1_000_000 {
		t.Fatal("the failed engine's memory has no fill: the test proves nothing")
	}
	for i := range 3 {
		if err := r.desk.Hedge(ctx, "sandbox"); !errors.Is(err, engine.ErrUnavailable) {
			t.Fatalf("round %d after the fail-stop: %v; want %v", i, err, engine.ErrUnavailable)
		}
	}
	var status string
	var filled int64
	if err := r.pool.QueryRow(ctx, `select status, filled from treasury_orders`).Scan(&status, &filled); err != nil {
		t.Fatal(err)
	}
	if status != "placing" || filled != 0 {
		t.Fatalf("the hedge's row is %s, filled %d, from the failed engine's memory; want placing, 0", status, filled)
	}
	if open, err := OpenPositions(ctx, r.pool, "sandbox"); err != nil || open[money.USDT] != 250_000_000 {
		t.Fatalf("open %d, %v; want 250000000", open[money.USDT], err)
	}
	if engineOrders, rows := r.treasuryOrders(t); engineOrders != 0 || rows != 1 {
		t.Fatalf("%d orders journaled, %d rows; want 0 and 1", engineOrders, rows)
	}
	if n := testutil.CollectAndCount(r.desk.Collector(), "svc_treasury_inventory"); n != 0 {
		t.Fatalf("%d inventory metrics from the failed engine's memory; want none", n)
	}

	r.restart(t, snap, snapOff)
	for range 2 {
		if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.pool.QueryRow(ctx, `select status, filled from treasury_orders`).Scan(&status, &filled); err != nil {
		t.Fatal(err)
	}
	if status != "done" || filled != 250_000_000 {
		t.Fatalf("after the restart the row is %s, filled %d; want done, 250000000", status, filled)
	}
	r.hedged(t, 1)
}
