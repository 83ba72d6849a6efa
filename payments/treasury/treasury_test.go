package treasury

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"svc/cluster/enginerpc/enginerpctest"
	"svc/engine"
	"svc/payments"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/projection"
)

const refPrice = 160000 // kobo per unit

// rig is one sandbox: a real engine over an in-memory journal projected to a real
// PostgreSQL, the rates over its book, the market maker and the treasury.
type rig struct {
	pool    *pgxpool.Pool
	journal *journal.Memory // the engine's journal (restart: failstop_test.go)
	eng     *engine.Engine
	proj    *projection.Projector
	rates   *rates.Service
	maker   *Maker
	desk    *Desk
	envs    map[string]Env
}

func newRig(t *testing.T, limit int64) *rig {
	t.Helper()
	pool, _ := pgtest.New(t)
	j := journal.NewMemory()
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	r := &rig{pool: pool, journal: j, eng: eng, proj: projection.New(pool, "sandbox", j, nil)}
	r.envs = map[string]Env{"sandbox": {Exchange: eng,
		Limits:    map[money.Asset]int64{money.USDT: limit, money.USDC: limit},
		Inventory: map[engine.Asset]int64{engine.NGN: 2_000_000_000 * 10_000, engine.USDT: 1_000_000 * 1_000_000, engine.USDC: 1_000_000 * 1_000_000}}}
	r.desk = &Desk{} // set below; rates needs the desk and the desk needs the rates
	r.rates, err = rates.New(pool, rates.Config{Exchanges: map[string]rates.Exchange{"sandbox": eng},
		References: map[money.Asset]int64{money.USDT: refPrice, money.USDC: refPrice, money.USD: refPrice}, Treasury: lazyDesk{r}})
	if err != nil {
		t.Fatal(err)
	}
	r.desk, err = New(pool, Config{Envs: r.envs, Prices: r.rates})
	if err != nil {
		t.Fatal(err)
	}
	r.maker, err = NewMaker(MakerConfig{Env: "sandbox", Exchange: eng, Prices: r.rates, Fund: true,
		Inventory: map[engine.Asset]int64{engine.NGN: 10_000_000_000 * 10_000, engine.USDT: 10_000_000 * 1_000_000,
			engine.USDC: 10_000_000 * 1_000_000, engine.USD: 10_000_000 * 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.maker.Fund(); err != nil {
		t.Fatal(err)
	}
	return r
}

// lazyDesk lets the rates ask the rig's desk, built after them.
type lazyDesk struct{ r *rig }

func (l lazyDesk) Covers(env string, a money.Asset, side string, units int64) (bool, bool) {
	return l.r.desk.Covers(env, a, side, units)
}

var merchant = uuid.MustParse("01a2016a-0000-7000-8000-000000000001")

// convert posts one conversion the way deposits and offramps do: through system:fx (the
// ledger records its hedge intent). buy: NGN in, asset out at price (kobo per unit).
func (r *rig) convert(t *testing.T, ref string, asset money.Asset, buy bool, units int64, price int64) {
	t.Helper()
	ctx := context.Background()
	amt := money.New(asset, units)
	ngn, err := rates.ToNGN(amt, price)
	if err != nil {
		t.Fatal(err)
	}
	in, out := ngn, amt
	if !buy {
		in, out = amt, ngn
	}
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		postings := append(ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), in),
			ledger.Move(ledger.System(ledger.FX), ledger.Merchant(merchant, ledger.Available), out)...)
		if !buy {
			postings = append(ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), in),
				ledger.Move(ledger.System(ledger.FX), ledger.System(ledger.External), out)...)
		}
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: merchant, Environment: "sandbox", Reference: ref, Postings: postings})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) verify(t *testing.T) []Reconciliation {
	t.Helper()
	ctx := context.Background()
	if err := r.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	bad, recs, err := Verify(ctx, r.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range bad {
		t.Error(v)
	}
	if lv, err := ledger.Verify(ctx, r.pool); err != nil || len(lv) > 0 {
		t.Fatal(lv, err)
	}
	return recs
}

// treasuryOrders counts the treasury account's orders the engine placed (from the
// projection) and the rows the desk wrote.
func (r *rig) treasuryOrders(t *testing.T) (engineOrders, rows int) {
	t.Helper()
	ctx := context.Background()
	if err := r.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.pool.QueryRow(ctx, `select count(*) from trading_orders where merchant_id = $1`, uuid.UUID(Account)).Scan(&engineOrders); err != nil {
		t.Fatal(err)
	}
	if err := r.pool.QueryRow(ctx, `select count(*) from treasury_orders`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	return engineOrders, rows
}

// hedged checks that the treasury's account has placed orders engine orders, each with its
// row, that USDT's position is closed, and that the books reconcile.
func (r *rig) hedged(t *testing.T, orders int) {
	t.Helper()
	if engineOrders, rows := r.treasuryOrders(t); engineOrders != orders || rows != orders {
		t.Fatalf("%d engine orders, %d rows; want %d of each", engineOrders, rows, orders)
	}
	if open, err := OpenPositions(context.Background(), r.pool, "sandbox"); err != nil || open[money.USDT] != 0 {
		t.Fatalf("open %d, %v", open[money.USDT], err)
	}
	r.verify(t)
}

// TestConversionsAreHedgedNettedAndReconciled: many conversions both ways are netted into a
// few IOC orders against the market maker; afterwards the ledger's system:fx equals the
// treasury's trades plus what is in flight (less than one lot per asset), and the merchant's
// ledger is untouched by the hedging.
func TestConversionsAreHedgedNettedAndReconciled(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(27, 1))
	n := 0
	for round := 0; round < 5; round++ {
		for i := 0; i < 40; i++ {
			asset := []money.Asset{money.USDT, money.USDC}[rng.IntN(2)]
			r.convert(t, fmt.Sprintf("conv:%d", n), asset, rng.IntN(3) > 0, 1+rng.Int64N(300_000_000), refPrice+rng.Int64N(2000)-1000)
			n++
		}
		if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
			t.Fatal(err)
		}
		if err := r.maker.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	open, err := OpenPositions(ctx, r.pool, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	for a, o := range open {
		if abs(o) >= 10_000 { // one lot of 0.01
			t.Errorf("%s still open after hedging against a deep book: %d", a, o)
		}
	}
	recs := r.verify(t)
	if len(recs) != 2 {
		t.Fatalf("reconciliation: %+v", recs)
	}
	for _, rec := range recs {
		if rec.InFlight != open[rec.Asset] || rec.Engine == 0 {
			t.Errorf("%+v: in flight should be the open position %d", rec, open[rec.Asset])
		}
	}
	engineOrders, rows := r.treasuryOrders(t)
	if engineOrders != rows || rows > 10 || rows == 0 {
		t.Fatalf("%d conversions became %d engine orders and %d rows (want one per asset per window at most)", n, engineOrders, rows)
	}
	ps, err := Status(ctx, r.pool)
	if err != nil || len(ps) == 0 {
		t.Fatal(ps, err)
	}
	for _, p := range ps {
		if p.Open != open[p.Asset] || p.Placing != 0 {
			t.Fatalf("%+v", p)
		}
	}
	// The metrics: exposure, limits, alerts, inventory, counts and the result.
	if problems, err := testutil.CollectAndLint(r.desk.Collector()); err != nil || len(problems) > 0 {
		t.Fatal(problems, err)
	}
	if n := testutil.CollectAndCount(r.desk.Collector(), "svc_treasury_hedge_orders_total"); n != len(Assets) {
		t.Fatal(n)
	}
	if n := testutil.CollectAndCount(r.desk.Collector(), "svc_treasury_result_ngn"); n != 1 {
		t.Fatal(n)
	}
}

// TestAHedgeIsPlacedExactlyOnceWhateverTheCrash: a process that dies after the conversion's
// commit, after the hedge's row, or after the engine took the order (before the row was
// settled) leaves exactly one hedge order once a new process runs a round: never none,
// never two. The engine keeps its state across the "crash" (its journal is durable; the
// same instance stands for the recovered engine), the desk's memory is lost.
func TestAHedgeIsPlacedExactlyOnceWhateverTheCrash(t *testing.T) {
	for _, stage := range []string{"", "row", "submitted"} {
		t.Run("crash after "+stage, func(t *testing.T) {
			r := newRig(t, 1_000_000*1_000_000)
			ctx := context.Background()
			if err := r.maker.Refresh(); err != nil {
				t.Fatal(err)
			}
			r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
			if stage != "" {
				r.desk.crash = func(s string) error {
					if s == stage {
						return errCrash
					}
					return nil
				}
				if err := r.desk.Hedge(ctx, "sandbox"); !errors.Is(err, errCrash) {
					t.Fatal(err)
				}
			}
			// The new process.
			desk, err := New(r.pool, Config{Envs: r.envs, Prices: r.rates})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := desk.Hedge(ctx, "sandbox"); err != nil {
					t.Fatal(err)
				}
			}
			r.hedged(t, 1)
		})
	}
}

var errCrash = errors.New("crash")

// TestAThinBookIsQuotedByTheTreasuryUntilItsLimit: with no depth in the band the quotes
// come from the treasury (source treasury); once the open position would pass the limit,
// 503; when the hedge cannot fill (no book), the position waits, and fills once the maker
// quotes again.
func TestAThinBookIsQuotedByTheTreasuryUntilItsLimit(t *testing.T) {
	r := newRig(t, 1_000*1_000_000) // 1,000 units
	ctx := context.Background()
	tn := payments.Tenant{MerchantID: merchant, Environment: "sandbox"}
	if _, err := r.desk.Covers("live", money.USDT, rates.Buy, 1); err {
		t.Fatal("live has no treasury here")
	}
	qs, err := r.rates.Quote(ctx, tn, rates.Request{})
	if err != nil || len(qs) != 4 {
		t.Fatal(qs, err)
	}
	for _, q := range qs {
		if q.Source != rates.SourceTreasury {
			t.Fatalf("%+v", q)
		}
	}
	// 900 units bought by customers: open 900 of 1,000; the book is empty, nothing fills.
	r.convert(t, "c1", money.USDT, true, 900_000_000, refPrice)
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.rates.MarketFor("sandbox", money.USDT, rates.Buy, money.MustParse(money.USDT, "100")); err != nil {
		t.Fatal("the limit is not reached yet:", err)
	}
	if _, err := r.rates.MarketFor("sandbox", money.USDT, rates.Buy, money.MustParse(money.USDT, "100.01")); err != rates.ErrRateUnavailable {
		t.Fatal("past the limit:", err)
	}
	if p, err := r.rates.MarketFor("sandbox", money.USDT, rates.Sell, money.MustParse(money.USDT, "1900")); err != nil || p.Source != rates.SourceTreasury {
		t.Fatal("a sell reduces the position:", p, err)
	}
	if len(r.desk.Alerts("sandbox")) != 1 {
		t.Fatal(r.desk.Alerts("sandbox"))
	}
	// The maker comes back: the next round fills the waiting position.
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := r.desk.Hedge(ctx, "sandbox"); err != nil {
		t.Fatal(err)
	}
	open, _ := OpenPositions(ctx, r.pool, "sandbox")
	if open[money.USDT] != 0 {
		t.Fatal(open)
	}
	r.verify(t)
}

// TestNoOrderBlocksOrMovesAQuote is the property of issue 27: with the sandbox maker's
// ladder in the book, no single order, at any price, of any size up to a share of the
// band's depth (here the whole of one side's depth), makes the quotes lose a pair or move
// a rate by more than the band.
func TestNoOrderBlocksOrMovesAQuote(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	tn := payments.Tenant{MerchantID: merchant, Environment: "sandbox"}
	attacker := engine.AccountID(uuid.MustParse("01a2016a-0000-7000-8000-00000000a77a"))
	for _, a := range []engine.Asset{engine.NGN, engine.USDT, engine.USDC} {
		if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: attacker, Asset: a, Amount: 1 << 60,
			TransferID: engine.TransferID(uuid.Must(uuid.NewV7()))}); err != nil || res.Code != engine.OK {
			t.Fatal(res, err)
		}
	}
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	base, err := r.rates.Quote(ctx, tn, rates.Request{})
	if err != nil || len(base) != 4 {
		t.Fatal(base, err)
	}
	baseline := map[string]int64{}
	for _, q := range base {
		baseline[string(q.Asset)+q.Side] = q.Price
	}
	band := r.rates.Band()
	sideDepth := int64(r.maker.cfg.Levels) * r.maker.cfg.Size * 100 // lots on one side
	rng := rand.New(rand.NewPCG(27, 27))
	for i := 0; i < 150; i++ {
		if _, err := r.eng.Submit(&engine.Command{Kind: engine.CmdCancelAll, Account: attacker, Symbol: "USDT-NGN"}); err != nil {
			t.Fatal(err)
		}
		if err := r.maker.Refresh(); err != nil {
			t.Fatal(err)
		}
		price := engine.Price(1 + rng.Int64N(refPrice*10))
		if rng.IntN(2) == 0 { // near the market half of the time
			price = engine.Price(refPrice*9/10 + rng.Int64N(refPrice/5))
		}
		qty := engine.Qty(100 + rng.Int64N(sideDepth))
		side := []engine.Side{engine.Buy, engine.Sell}[rng.IntN(2)]
		res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: attacker, Symbol: "USDT-NGN",
			OrderID: engine.OrderID(uuid.Must(uuid.NewV7())), Side: side, Type: engine.Limit, Price: price, Qty: qty})
		if err != nil {
			t.Fatal(err)
		}
		qs, err := r.rates.Quote(ctx, tn, rates.Request{})
		if err != nil || len(qs) != 4 {
			t.Fatalf("order %d (%s %d lots at %d: %s): %d quotes, %v", i, side, qty, price, res.Code, len(qs), err)
		}
		for _, q := range qs {
			b := baseline[string(q.Asset)+q.Side]
			if d := new(big.Rat).SetFrac64(abs(q.Price-b), b); d.Cmp(band) > 0 {
				t.Fatalf("order %d (%s %d lots at %d): %s %s moved from %d to %d", i, side, qty, price, q.Asset, q.Side, b, q.Price)
			}
		}
	}
}

// TestTheMakerKeepsATwoSidedLadderAndRefreshesAfterFills: the ladder is two-sided within the
// band, never crossed, and a fill (a taker lifting a level) is replaced on the next refresh.
func TestTheMakerKeepsATwoSidedLadderAndRefreshesAfterFills(t *testing.T) {
	r := newRig(t, 1)
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for _, sym := range []string{"USDT-NGN", "USDC-NGN", "USD-NGN"} {
			d, err := r.eng.Depth(sym, 50)
			if err != nil || len(d.Bids) != 5 || len(d.Asks) != 5 {
				t.Fatalf("%s: %+v %v", sym, d, err)
			}
			if d.Bids[0].Price >= d.Asks[0].Price {
				t.Fatalf("%s crossed: %+v", sym, d)
			}
			lo, hi := engine.Price(refPrice*98/100), engine.Price(refPrice*102/100)
			if d.Bids[len(d.Bids)-1].Price < lo || d.Asks[len(d.Asks)-1].Price > hi {
				t.Fatalf("%s outside the band: %+v", sym, d)
			}
		}
	}
	check()
	ids := func() map[engine.OrderID]bool {
		out := map[engine.OrderID]bool{}
		for _, o := range r.eng.OpenOrders(MakerAccount, "USDT-NGN", nil) {
			out[o.ID] = true
		}
		return out
	}
	before := ids()
	taker := engine.AccountID(uuid.MustParse("01a2016a-0000-7000-8000-0000000000aa"))
	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: taker, Asset: engine.NGN, Amount: 1 << 50,
		TransferID: engine.TransferID(uuid.Must(uuid.NewV7()))}); err != nil || res.Code != engine.OK {
		t.Fatal(res, err)
	}
	if res, err := r.eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: taker, Symbol: "USDT-NGN",
		OrderID: engine.OrderID(uuid.Must(uuid.NewV7())), Side: engine.Buy, Type: engine.Limit, TIF: engine.IOC,
		Price: refPrice * 2, Qty: 700 * 100}); err != nil || res.Filled != 700*100 {
		t.Fatal(res, err)
	}
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	check()
	// Only the two levels the fill touched were replaced (issue 27 item 6: a fill costs a
	// cancel and a place per level, not the whole ladder).
	after, kept := ids(), 0
	for id := range after {
		if before[id] {
			kept++
		}
	}
	if len(after) != 10 || kept != 8 {
		t.Fatalf("after a fill of two levels: %d orders, %d of them kept (want 10 and 8)", len(after), kept)
	}
	time.Sleep(0)
}

// A row left placing is settled only from a remote engine's answers: with the network to
// the engine (cluster/enginerpc, a real server over loopback) frozen, settlePlacing leaves
// the row placing for the next round once its context ends, instead of waiting the
// client's ReadTimeout (here 20 s) and then reading the silence as an order the engine
// forgot and zero balances as its fill. Once the engine answers, the hedge is placed
// exactly once.
func TestASilentRemoteEngineLeavesTheRowPlacing(t *testing.T) {
	r := newRig(t, 1_000_000*1_000_000)
	ctx := context.Background()
	if err := r.maker.Refresh(); err != nil {
		t.Fatal(err)
	}
	r.convert(t, "deposit:1:convert", money.USDT, true, 250_000_000, refPrice)
	r.desk.crash = func(s string) error {
		if s == "row" {
			return errCrash
		}
		return nil
	}
	if err := r.desk.Hedge(ctx, "sandbox"); !errors.Is(err, errCrash) {
		t.Fatal(err)
	}

	client, fr := enginerpctest.Remote(t, r.eng)
	if len(client.Pairs()) == 0 { // the pairs are configuration, read once
		t.Fatal("no pairs from the engine")
	}
	envs := map[string]Env{}
	for env, e := range r.envs {
		e.Exchange = client
		envs[env] = e
	}
	desk, err := New(r.pool, Config{Envs: envs, Prices: r.rates})
	if err != nil {
		t.Fatal(err)
	}

	fr.Pause()
	const within = 300 * time.Millisecond
	short, cancel := context.WithTimeout(ctx, within)
	start := time.Now()
	left, err := desk.settlePlacing(short, "sandbox", client)
	took := time.Since(start)
	cancel()
	fr.Resume()
	if !errors.Is(err, context.DeadlineExceeded) || left != 0 {
		t.Fatalf("settlePlacing with the network frozen: %d left, %v; want the engine's timeout, the row left for the next round", left, err)
	}
	if took > within+250*time.Millisecond {
		t.Fatalf("settlePlacing returned after %s, its context ended after %s", took, within)
	}
	var status string
	if err := r.pool.QueryRow(ctx, `select status from treasury_orders`).Scan(&status); err != nil || status != "placing" {
		t.Fatalf("the row: %q, %v; want it still placing", status, err)
	}

	for range 2 {
		if err := desk.Hedge(ctx, "sandbox"); err != nil {
			t.Fatal(err)
		}
	}
	r.hedged(t, 1)
}
