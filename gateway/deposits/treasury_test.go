package deposits_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	gwrates "svc/gateway/rates"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/payments/treasury"
)

// lateDesk lets the rig's rates, built first, ask the desk built after them.
type lateDesk struct{ desk *treasury.Desk }

func (l *lateDesk) Covers(env string, a money.Asset, side string, units int64) (bool, bool) {
	if l.desk == nil {
		return false, false
	}
	return l.desk.Covers(env, a, side, units)
}

// newTreasury is the sandbox's desk and market maker as svcd builds them (cmd/svcd
// treasury.go), the maker funded; the test places its ladder (Refresh).
func newTreasury(t testing.TB, pool *pgxpool.Pool, eng *engine.Engine, rs *rates.Service) (*treasury.Desk, *treasury.Maker) {
	t.Helper()
	inv := map[engine.Asset]int64{engine.NGN: 20_000_000_000 * 10_000, engine.USDT: 10_000_000 * 1_000_000,
		engine.USDC: 10_000_000 * 1_000_000, engine.USD: 10_000_000 * 100}
	desk, err := treasury.New(pool, treasury.Config{Prices: rs, Envs: map[string]treasury.Env{"sandbox": {Exchange: eng, Inventory: inv,
		Limits: map[money.Asset]int64{money.USDT: 1_000_000 * 1_000_000, money.USDC: 1_000_000 * 1_000_000}}}})
	if err != nil {
		t.Fatal(err)
	}
	maker, err := treasury.NewMaker(treasury.MakerConfig{Env: "sandbox", Exchange: eng, Prices: rs, Fund: true, Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	if err := maker.Fund(); err != nil {
		t.Fatal(err)
	}
	return desk, maker
}

// TestOneOrderBlocksNoOnramp is issue 27's "done when" through the gateway: after one
// sandbox merchant places a 1-USDT order anywhere (in or out of the band, on either side,
// crossing the maker's ladder or not), the other merchant's GET /payments/rates lists every
// pair and its TEMPORARY onramps answer 201.
func TestOneOrderBlocksNoOnramp(t *testing.T) {
	r := newRig(t, rigOptions{noWorkers: true, treasury: true})
	eng := r.engines["sandbox"]
	trader := engine.AccountID(r.a.ID)
	for _, a := range []engine.Asset{engine.NGN, engine.USDT} {
		if res, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: trader, Asset: a, Amount: 1 << 50,
			TransferID: engine.TransferID(uuid.New())}); err != nil || res.Code != engine.OK {
			t.Fatal(res.Code, err)
		}
	}
	key := r.b.SandboxKey
	rng := rand.New(rand.NewPCG(27, 7))
	prices := []int64{1, 100, 150000, 159000, 160000, 161000, 170000, 1_600_000, 100_000_000}
	// First on a book the maker has not filled yet (issue 27's report: an empty book and one
	// 1-USDT ask at 1,700 stopped every onramp), then on the maker's ladder.
	for _, ladder := range []bool{false, true} {
		if ladder {
			if err := r.maker.Refresh(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 12; i++ {
			if _, err := eng.Submit(&engine.Command{Kind: engine.CmdCancelAll, Account: trader, Symbol: "USDT-NGN"}); err != nil {
				t.Fatal(err)
			}
			if ladder {
				if err := r.maker.Refresh(); err != nil {
					t.Fatal(err)
				}
			}
			side := []engine.Side{engine.Buy, engine.Sell}[i%2]
			price := prices[rng.IntN(len(prices))]
			if i == 0 {
				side, price = engine.Sell, 170000 // the report's order
			}
			res, err := eng.Submit(&engine.Command{Kind: engine.CmdPlace, Account: trader, Symbol: "USDT-NGN",
				OrderID: engine.OrderID(uuid.New()), Side: side, Type: engine.Limit, Price: engine.Price(price), Qty: 100})
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("ladder %v, after a 1-USDT %s at %s (%s)", ladder, side, money.Format(money.NGN, price), res.Code)
			rs := decode[[]gwrates.RateJSON](t, r.srv.Must(t, 200, "GET", "/v1/payments/rates", key, nil))
			if len(rs) != 4 {
				t.Fatalf("%s: %d rates: %+v", what, len(rs), rs)
			}
			for _, q := range rs {
				if want := map[bool]string{false: "treasury", true: "orderbook"}[ladder]; q.Source != want && !(ladder && q.Source == "treasury") {
					t.Fatalf("%s: %+v", what, q)
				}
			}
			o := r.temporary(t, key, 50000)
			if o.Status != "ACTIVE" || o.Rate == nil {
				t.Fatalf("%s: onramp %+v", what, o)
			}
		}
	}
	if err := r.desk.Hedge(context.Background(), "sandbox"); err != nil {
		t.Fatal(err)
	}
}
