package market

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/engine/marketdata"
	"svc/gateway/api"
	"svc/persistence/postgres/pgtest"
)

// TestStoreCandlesMatchMemory: candles aggregated from trading_trades equal the ones the
// in-memory series builds from the same trades (the hand-computed sequence of
// engine/marketdata's tests: Monday 2026-01-05).
func TestStoreCandlesMatchMemory(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	trades := []struct {
		at         time.Duration
		price, qty int64
	}{
		{10 * time.Second, 150000, 100}, {50 * time.Second, 151000, 200}, {70 * time.Second, 149000, 50},
		{3*time.Minute + 5*time.Second, 152000, 150}, {time.Hour + time.Second, 148000, 300}, {25 * time.Hour, 153000, 100},
	}
	for i, tr := range trades {
		for _, liq := range []string{"taker", "maker"} {
			if _, err := pool.Exec(ctx, `insert into trading_trades (environment, id, liquidity, merchant_id, order_id, symbol, side,
				price, quantity, notional, seq, created_at) values ('sandbox', $1, $2, $3, $4, 'USDT-NGN', 'buy', $5, $6, 0, $7, $8)`,
				uuid.NewSHA1(uuid.Nil, []byte{byte(i)}), liq, uuid.New(), uuid.New(), tr.price, tr.qty, i+1, t0.Add(tr.at)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a sell on another symbol and a live trade must not count
	if _, err := pool.Exec(ctx, `insert into trading_trades (environment, id, liquidity, merchant_id, order_id, symbol, side,
		price, quantity, notional, seq, created_at) values ('live', $1, 'taker', $2, $3, 'USDT-NGN', 'buy', 1, 1, 0, 1, $4)`,
		uuid.New(), uuid.New(), uuid.New(), t0); err != nil {
		t.Fatal(err)
	}
	s := NewStore(pool)
	for iv := range marketdata.Intervals {
		got, err := s.Candles(ctx, api.Sandbox, "USDT-NGN", iv, -1, -1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// the in-memory series of the same trades
		m := marketdata.NewMarket(engineUSDT())
		for i, tr := range trades {
			e := tradeEvent(uint64(i+1), t0.Add(tr.at), tr.price, tr.qty)
			m.Apply(&e)
		}
		want := m.Series(iv).Range(-1, -1, 1000, nil)
		if len(got) != len(want) {
			t.Fatalf("%s: %d candles from the database, %d in memory", marketdata.Intervals[iv].Name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s[%d]: database %+v, memory %+v", marketdata.Intervals[iv].Name, i, got[i], want[i])
			}
		}
	}
	// start/end/limit: the 1m candles opening from T0+1m, two of them; the last two before T0+2h
	got, err := s.Candles(ctx, api.Sandbox, "USDT-NGN", 0, t0.Add(30*time.Second).UnixMilli(), -1, 2)
	if err != nil || len(got) != 2 || got[0].OpenTime != t0.Add(time.Minute).UnixMilli() || got[1].OpenTime != t0.Add(3*time.Minute).UnixMilli() {
		t.Fatalf("from start: %+v %v", got, err)
	}
	got, err = s.Candles(ctx, api.Sandbox, "USDT-NGN", 0, -1, t0.Add(2*time.Hour).UnixMilli(), 2)
	if err != nil || len(got) != 2 || got[0].OpenTime != t0.Add(3*time.Minute).UnixMilli() || got[1].OpenTime != t0.Add(time.Hour).UnixMilli() {
		t.Fatalf("until end: %+v %v", got, err)
	}
}

func engineUSDT() engine.PairConfig { return engine.DefaultPairs()[0] }

func tradeEvent(seq uint64, at time.Time, price, qty int64) engine.Event {
	return engine.Event{Seq: seq, Kind: engine.EventTrade, Time: at.UnixNano(), Side: engine.Buy, Price: engine.Price(price), Qty: engine.Qty(qty)}
}
