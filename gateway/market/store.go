package market

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/engine/marketdata"
	"svc/gateway/api"
)

// Store builds candles from the projected trades (trading_trades, one taker row per
// trade): the persisted klines. Buckets are computed by the same alignment as
// marketdata.Interval.Open.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Candles returns candles of symbol for Intervals[iv] with the semantics of
// marketdata.Series.Range (start, end in unix ms, -1 for none).
func (s *Store) Candles(ctx context.Context, env api.Environment, symbol string, iv int, start, end int64, limit int) ([]marketdata.Candle, error) {
	in := marketdata.Intervals[iv]
	args := []any{string(env), symbol, in.Ms, in.Open(0)}
	where := ""
	if start >= 0 {
		first := in.Open(start)
		if first < start {
			first += in.Ms
		}
		args = append(args, time.UnixMilli(first))
		where += fmt.Sprintf(" and created_at >= $%d", len(args))
	}
	if end >= 0 {
		args = append(args, time.UnixMilli(in.Open(end)+in.Ms))
		where += fmt.Sprintf(" and created_at < $%d", len(args))
	}
	order := "desc"
	if start >= 0 {
		order = "asc"
	}
	args = append(args, limit)
	q := `select b, (array_agg(price order by seq))[1], max(price), min(price), (array_agg(price order by seq desc))[1],
			sum(quantity)::bigint, count(*), max(seq)
		from (select floor((extract(epoch from created_at) * 1000 - $4) / $3)::bigint as b, price, quantity, seq
			from trading_trades
			where environment = $1 and symbol = $2 and liquidity = 'taker'` + where + `) t
		group by b order by b ` + order + fmt.Sprintf(" limit $%d", len(args))
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("candles: %w", err)
	}
	defer rows.Close()
	var out []marketdata.Candle
	for rows.Next() {
		var c marketdata.Candle
		var b, o, h, l, cl, v, seq int64
		if err := rows.Scan(&b, &o, &h, &l, &cl, &v, &c.Trades, &seq); err != nil {
			return nil, fmt.Errorf("candles: %w", err)
		}
		c.OpenTime = b*in.Ms + in.Open(0)
		c.Open, c.High, c.Low, c.Close = engine.Price(o), engine.Price(h), engine.Price(l), engine.Price(cl)
		c.Volume, c.LastSeq = engine.Qty(v), uint64(seq)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("candles: %w", err)
	}
	if order == "desc" {
		slices.Reverse(out)
	}
	return out, nil
}

// LastCandles returns the newest limit candles (the hub's seed).
func (s *Store) LastCandles(ctx context.Context, env api.Environment, symbol string, iv, limit int) ([]marketdata.Candle, error) {
	return s.Candles(ctx, env, symbol, iv, -1, -1, limit)
}
