package treasury

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/payments/money"
	"svc/payments/rates"
)

// TestASilentRemoteEngineCostsOneBoundedWaitPerRound freezes the network to a real engine
// served over cluster/enginerpc (the client's own timeouts are 20 s) at each point of a
// round where the desk asks the engine, and checks that:
//
//   - the round returns within its deadline (one Window, at least a second), with the
//     engine's timeout, instead of waiting the client's ReadTimeout for each read in turn;
//   - nothing is written as if the engine had answered: no row is settled, the open
//     position is unchanged, an order's row stays placing;
//   - once the network thaws, the next round completes the hedge exactly once (one engine
//     order, one row, the position closed) and the books reconcile.
//
// "order read" and "submitted" are the two branches where a fill is read from the balances
// after the engine answered about the order (settlePlacing's, for a row a previous process
// left placing, whose order the engine holds or never received; and submit's, right after
// the order ran), so a balance read that fails there loses no hedge and doubles none.
func TestASilentRemoteEngineCostsOneBoundedWaitPerRound(t *testing.T) {
	const window = time.Second // the round's deadline (minRound)
	for _, tc := range []struct {
		name string
		// left is the stage at which a previous (local) process crashed, leaving a row
		// placing; "" for none.
		left string
		// freeze is the stage at which the network stops ("" : before the round).
		freeze string
		// placing is whether the frozen round leaves a row placing.
		placing bool
	}{
		{name: "before the round's balance read", freeze: ""},
		{name: "after the order's row", freeze: "row", placing: true},
		{name: "after the submit, before its balance read", freeze: "submitted", placing: true},
		{name: "restart: the engine holds the order, then freezes", left: "submitted", freeze: "order read", placing: true},
		{name: "restart: the engine never got the order, then freezes", left: "row", freeze: "order read", placing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1_000_000*1_000_000)
			ctx := context.Background()
			if err := r.maker.Refresh(); err != nil {
				t.Fatal(err)
			}
			client, fr := enginerpctest.Remote(t, r.eng)
			if len(client.Pairs()) == 0 {
				t.Fatal("no pairs from the engine")
			}
			envs := map[string]Env{}
			for env, e := range r.envs {
				e.Exchange = client
				envs[env] = e
			}
			desk, err := New(r.pool, Config{Envs: envs, Prices: r.rates, Window: window})
			if err != nil {
				t.Fatal(err)
			}
			if tc.left == "" {
				// A first round with nothing open funds the account and settles nothing.
				if err := desk.Hedge(ctx, "sandbox"); err != nil {
					t.Fatal(err)
				}
				r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
			} else {
				r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
				r.desk.crash = func(s string) error {
					if s == tc.left {
						return errCrash
					}
					return nil
				}
				if err := r.desk.Hedge(ctx, "sandbox"); !errors.Is(err, errCrash) {
					t.Fatal(err)
				}
			}
			openBefore, err := OpenPositions(ctx, r.pool, "sandbox")
			if err != nil || openBefore[money.USDT] != 250_000_000 {
				t.Fatal(openBefore, err)
			}

			frozen := false
			desk.crash = func(s string) error {
				if s == tc.freeze && !frozen {
					fr.Pause()
					frozen = true
				}
				return nil
			}
			if tc.freeze == "" {
				fr.Pause()
				frozen = true
			}
			start := time.Now()
			err = desk.Hedge(ctx, "sandbox")
			took := time.Since(start)
			if tc.freeze == "" { // a scrape leaves the inventory out rather than reporting zeros
				start := time.Now()
				if n := testutil.CollectAndCount(desk.Collector(), "svc_treasury_inventory"); n != 0 {
					t.Errorf("frozen: %d inventory series; want none", n)
				}
				if took := time.Since(start); took > engineScrape+time.Second {
					t.Errorf("frozen: the scrape took %s", took)
				}
				if n := testutil.CollectAndCount(desk.Collector(), "svc_treasury_pending_orders"); n == 0 {
					t.Error("frozen: the database's metrics are gone too")
				}
			}
			fr.Resume()
			if !frozen {
				t.Fatalf("the round never reached %q", tc.freeze)
			}
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, engine.ErrUnavailable) {
				t.Fatalf("the frozen round: %v; want the engine's timeout", err)
			}
			if took > window+time.Second {
				t.Fatalf("the frozen round took %s; its deadline is %s", took, window)
			}
			var placing, done int
			if err := r.pool.QueryRow(ctx, `select count(*) filter (where status = 'placing'), count(*) filter (where status = 'done')
				from treasury_orders`).Scan(&placing, &done); err != nil {
				t.Fatal(err)
			}
			if done != 0 || (placing == 1) != tc.placing || placing > 1 {
				t.Fatalf("after the frozen round: %d rows placing, %d done; want none settled, placing %v", placing, done, tc.placing)
			}
			if open, err := OpenPositions(ctx, r.pool, "sandbox"); err != nil || open[money.USDT] != openBefore[money.USDT] {
				t.Fatalf("the frozen round moved the position: %v, %v", open, err)
			}

			// Thawed: the next round settles or places the one hedge.
			desk.crash = nil
			if err := desk.Hedge(ctx, "sandbox"); err != nil {
				t.Fatal("the round after the thaw:", err)
			}
			if err := desk.Hedge(ctx, "sandbox"); err != nil {
				t.Fatal(err)
			}
			r.hedged(t, 1) // exactly one hedge
		})
	}
}

// TestARowLeftPlacingStopsTheRound: while a hedge order's row cannot be settled (here its
// order still rests in the book, as an order the engine has not closed would), a round
// places no new hedge: the new order's fill would move the balances the row's fill is
// measured by, and the position, still counting the row's order as unfilled, would be
// hedged twice. Once the order closes, the next round settles its row and hedges once.
func TestARowLeftPlacingStopsTheRound(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil { // funds the account
		t.Fatal(err)
	}
	// A resting order of the treasury's account with its row placing, written as the desk
	// writes one (balances before it), far below the market so it stays open.
	bal := r.eng.Balances(Account)
	id := uuid.Must(uuid.NewV7())
	const price, lots = refPrice / 2, 100 * 100
	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: Account, Symbol: "USDT-NGN", OrderID: engine.OrderID(id),
		ClientOrderID: ClientOrderID(id), Side: engine.Buy, Type: engine.Limit, Price: price, Qty: lots}); err != nil || res.Code != engine.OK {
		t.Fatal(res, err)
	}
	r.placingRow(t, id, "USDT", int64(lots)*10_000, price, bal[engine.USDT].Available, bal[engine.NGN].Available)
	r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
	desk := r.leftPlacing(t, 2, "a round with a row it cannot settle")
	if engineOrders, rows := r.treasuryOrders(t); engineOrders != 1 || rows != 1 {
		t.Fatalf("%d engine orders, %d rows while a row is left placing; want no new hedge", engineOrders, rows)
	}
	// The quotes still see the position: 250 of the limit's 1,000,000 units are taken.
	if ok, _ := desk.Covers("sandbox", money.USDT, rates.Buy, 1_000_000*1_000_000-250_000_000+1); ok {
		t.Fatal("Covers does not count the open position while a row is left placing")
	}

	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdCancel, Account: Account, Symbol: "USDT-NGN",
		OrderID: engine.OrderID(id)}); err != nil || res.Code != engine.OK {
		t.Fatal(res, err)
	}
	if err := desk.Hedge(ctx, "sandbox"); err != nil {
		t.Fatal(err)
	}
	var status string
	var filled int64
	if err := r.pool.QueryRow(ctx, `select status, filled from treasury_orders where id = $1`, id).Scan(&status, &filled); err != nil ||
		status != "done" || filled != 0 {
		t.Fatalf("the canceled order's row: %s filled %d, %v; want done, 0", status, filled, err)
	}
	r.hedged(t, 2) // the left one and one hedge
}

// TestARowWhoseBookIsGoneHoldsTheEnvironmentsHedges: a row placing for an asset the engine
// has no NGN book for (its pair taken out of the engine's configuration after the row was
// written) cannot be settled by any round, so every round answers ErrLeftPlacing and no
// other asset is hedged or credited in that environment; the operator sees the row pending
// (Status, which `svc treasury` and svc_treasury_pending_orders read) and the quotes still
// see the open positions. docs/live.md's watch table says what to do.
func TestARowWhoseBookIsGoneHoldsTheEnvironmentsHedges(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil { // funds the account
		t.Fatal(err)
	}
	bal := r.eng.Balances(Account)
	r.placingRow(t, uuid.Must(uuid.NewV7()), "EUR", 1000000, 170000, 0, bal[engine.NGN].Available)
	r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
	desk := r.leftPlacing(t, 3, "a round with a row whose book is gone")
	if engineOrders, rows := r.treasuryOrders(t); engineOrders != 0 || rows != 1 {
		t.Fatalf("%d engine orders, %d rows; want no hedge while the row is left placing", engineOrders, rows)
	}
	if after := r.eng.Balances(Account); after != bal {
		t.Fatalf("the account moved while a row was left placing: %v, was %v", after, bal)
	}
	ps, err := Status(ctx, r.pool)
	if err != nil {
		t.Fatal(err)
	}
	pending := map[money.Asset]int{}
	for _, p := range ps {
		if p.Env == "sandbox" {
			pending[p.Asset] = p.Placing
		}
	}
	if pending["EUR"] != 1 || pending[money.USDT] != 0 {
		t.Fatalf("pending per asset: %v; want the EUR row", pending)
	}
	if ok, _ := desk.Covers("sandbox", money.USDT, rates.Buy, 1_000_000*1_000_000-250_000_000+1); ok {
		t.Fatal("Covers does not count the open position while a row is left placing")
	}
}

// placingRow writes a hedge row 'placing' in sandbox as the desk writes one before its
// order: qty and limit price, and the treasury account's balances before the order.
func (r *rig) placingRow(t *testing.T, id uuid.UUID, asset string, qty, price, baseBefore, ngnBefore int64) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `insert into treasury_orders (id, environment, asset, qty, limit_price, status, base_before, ngn_before)
		values ($1, 'sandbox', $2, $3, $4, 'placing', $5, $6)`, id, asset, qty, price, baseBefore, ngnBefore); err != nil {
		t.Fatal(err)
	}
}

// leftPlacing starts a new process's desk and requires each of its first rounds to stop
// at the row left placing (ErrLeftPlacing); what says which row, in the failure.
func (r *rig) leftPlacing(t *testing.T, rounds int, what string) *Desk {
	t.Helper()
	desk, err := New(r.pool, Config{Envs: r.envs, Prices: r.rates})
	if err != nil {
		t.Fatal(err)
	}
	for range rounds {
		if err := desk.Hedge(context.Background(), "sandbox"); !errors.Is(err, ErrLeftPlacing) {
			t.Fatalf("%s: %v; want ErrLeftPlacing", what, err)
		}
	}
	return desk
}

// TestASilentEngineDoesNotHideTheOtherEnvironmentsInventory: a metrics scrape reads each
// environment's inventory within a second of its own, so an environment whose engine does
// not answer is left out (not exported as zeros) while the other's is still exported. With
// one deadline for the whole scrape, the silent engine spent it whenever the map gave it
// first, and the healthy environment's inventory vanished too; three scrapes make that
// order all but certain.
func TestASilentEngineDoesNotHideTheOtherEnvironmentsInventory(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	// Both remote (a local engine's read does not wait for its context): two clients of the
	// one engine, one of them frozen.
	client, fr := enginerpctest.Remote(t, r.eng)
	other, _ := enginerpctest.Remote(t, r.eng)
	if len(client.Pairs()) == 0 || len(other.Pairs()) == 0 {
		t.Fatal("no pairs from the engine")
	}
	silent, healthy := r.envs["sandbox"], r.envs["sandbox"]
	silent.Exchange, healthy.Exchange = client, other
	desk, err := New(r.pool, Config{Envs: map[string]Env{"sandbox": silent, "live": healthy}, Prices: r.rates})
	if err != nil {
		t.Fatal(err)
	}
	fr.Pause()
	defer fr.Resume()
	for range 3 {
		start := time.Now()
		got := map[string]int{}
		metrics, err := scrape(desk, "svc_treasury_inventory")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range metrics {
			got[m]++
		}
		if got["sandbox"] != 0 || got["live"] != 4 {
			t.Fatalf("inventory series by environment %v; want live's 4 and none of the silent sandbox's", got)
		}
		if took := time.Since(start); took > 2*engineScrape+time.Second {
			t.Fatalf("the scrape took %s", took)
		}
	}
}

// scrape collects d's metrics named name and answers each one's env label.
func scrape(d *Desk, name string) ([]string, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(d.Collector()); err != nil {
		return nil, err
	}
	families, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	var envs []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "env" {
					envs = append(envs, l.GetValue())
				}
			}
		}
	}
	return envs, nil
}
