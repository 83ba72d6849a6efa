package treasury

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/payments/ledger"
	"svc/payments/money"
)

// Position is one asset of one environment's treasury, read from the database.
type Position struct {
	Env   string
	Asset money.Asset
	// Intents is what the conversions asked the treasury to buy (+) or sell (-), minor
	// units of Asset; Filled what its settled orders did; Open = Intents - Filled, the
	// position in flight (waiting for depth, inventory or the next window).
	Intents, Filled, Open int64
	// NGNIn is what system:fx took in NGN for these conversions (kobo), NGNTrades what the
	// hedges paid (-) or received (+) on the book, in the engine's 1e-4 NGN.
	NGNIn, NGNTrades int64
	Placing          int   // orders written but not yet settled
	Orders           int   // settled orders
	Limit            int64 // open limit (minor units), 0 if none recorded
	Funded           int64 // engine units funded as the treasury's inventory (not the market maker's)
}

// Result is the position's NGN result if the open position were closed at price (kobo per
// unit): what the conversions took in NGN plus what the hedges did, minus the open position
// at price; in the engine's 1e-4 NGN.
func (p Position) Result(price int64) int64 {
	openNGN := p.Open * price * 100 / pow10(p.Asset.Places())
	return p.NGNIn*100 + p.NGNTrades - openNGN
}

// Status reads every environment's positions.
func Status(ctx context.Context, pool *pgxpool.Pool) ([]Position, error) {
	rows, err := pool.Query(ctx, `
		with i as (select environment, asset, sum(qty)::bigint q, sum(ngn)::bigint n from treasury_intents group by 1, 2),
		     o as (select environment, asset, sum(filled) filter (where status = 'done')::bigint f,
		                  sum(ngn) filter (where status = 'done')::bigint n,
		                  count(*) filter (where status = 'placing') p, count(*) filter (where status = 'done') d
		           from treasury_orders group by 1, 2),
		     f as (select environment, asset, sum(amount)::bigint a from treasury_funding where account = 'treasury' group by 1, 2),
		     k as (select environment, asset from i union select environment, asset from o
		           union select environment, asset from treasury_limits)
		select k.environment, k.asset, coalesce(i.q, 0), coalesce(i.n, 0), coalesce(o.f, 0), coalesce(o.n, 0),
		       coalesce(o.p, 0), coalesce(o.d, 0), coalesce(l.open_limit, 0), coalesce(f.a, 0)
		from k left join i using (environment, asset) left join o using (environment, asset)
		left join f using (environment, asset) left join treasury_limits l using (environment, asset)
		order by 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("treasury status: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Position, error) {
		var p Position
		var a string
		err := r.Scan(&p.Env, &a, &p.Intents, &p.NGNIn, &p.Filled, &p.NGNTrades, &p.Placing, &p.Orders, &p.Limit, &p.Funded)
		p.Asset = money.Asset(a)
		p.Open = p.Intents - p.Filled
		return p, err
	})
}

// Reconciliation is one line of Verify: per environment and asset, the ledger's system:fx
// against the treasury's engine position plus what is in flight.
type Reconciliation struct {
	Env   string
	Asset money.Asset
	// LedgerFX is the balance of every system:fx account of Asset (minor units).
	LedgerFX int64
	// Engine is the treasury's position on the book: what its orders' trades bought (+)
	// or sold (-), as projected from the journal (minor units). For NGN, what the
	// conversions took in (kobo) is the ledger's side and Engine is the hedges' NGN.
	Engine int64
	// InFlight is what the treasury still has to trade (its open position, plus what
	// orders settled in the treasury's rows but not yet projected account for).
	InFlight int64
}

// ProjectionGrace is how long a settled hedge's trades may be missing from the
// projection before Verify reports it (the projector runs behind the engine).
const ProjectionGrace = time.Minute

// Verify proves, per environment and hedged asset, that
//
//	-(ledger system:fx) = the treasury's trades on the book + its open position
//
// (system:fx gave out what the treasury bought or has still to buy), and that each settled
// order's recorded fill equals its trades in the projection. Violations use ledger's
// shape, so `svc ledger verify` prints them with the ledger's own.
func Verify(ctx context.Context, pool *pgxpool.Pool) ([]ledger.Violation, []Reconciliation, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var out []ledger.Violation
	var recs []Reconciliation
	// Every conversion posted against system:fx recorded its intent.
	rows, err := tx.Query(ctx, `
		with fx as (select environment, asset, sum(balance)::bigint b from ledger_accounts
		            where owner_type = 'system' and purpose = 'fx' group by 1, 2),
		     i as (select environment, asset, sum(qty)::bigint q, sum(ngn)::bigint n from treasury_intents group by 1, 2),
		     k as (select environment, asset from fx union select environment, asset from i)
		select k.environment, k.asset, coalesce(fx.b, 0), coalesce(i.q, 0), coalesce(i.n, 0)
		from k left join fx using (environment, asset) left join i using (environment, asset) order by 1, 2`)
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	type fxRow struct {
		env, asset  string
		fx, qty, ng int64
	}
	fxs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fxRow, error) {
		var x fxRow
		return x, r.Scan(&x.env, &x.asset, &x.fx, &x.qty, &x.ng)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	ngnIn := map[string]int64{}
	for _, x := range fxs {
		ngnIn[x.env] += x.ng
	}
	for _, x := range fxs {
		if x.asset == string(money.NGN) {
			if x.fx != ngnIn[x.env] {
				out = append(out, ledger.Violation{Check: "treasury_fx", Subject: x.env + " NGN",
					Detail: fmt.Sprintf("system:fx holds %s NGN but the treasury's intents took in %s", money.Format(money.NGN, x.fx), money.Format(money.NGN, ngnIn[x.env]))})
			}
			continue
		}
		if -x.fx != x.qty {
			out = append(out, ledger.Violation{Check: "treasury_fx", Subject: x.env + " " + x.asset,
				Detail: fmt.Sprintf("system:fx holds %d but the treasury's intents ask for %d (minor units): a conversion without an intent", x.fx, x.qty)})
		}
	}
	// The engine side: each hedge's trades as projected, and the orders' recorded fills.
	rows, err = tx.Query(ctx, `
		select o.environment, o.asset, o.id, o.filled, o.done_at < now() - $1::interval,
		       coalesce(sum(case when t.side = 'buy' then t.quantity else -t.quantity end), 0)::bigint
		from treasury_orders o left join trading_trades t on t.environment = o.environment and t.order_id = o.id and t.merchant_id = $2
		where o.status = 'done' group by o.environment, o.asset, o.id, o.filled, o.done_at`,
		fmt.Sprintf("%d seconds", int(ProjectionGrace/time.Second)), [16]byte(Account))
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	type ordRow struct {
		env, asset string
		id         [16]byte
		filled     int64
		old        bool
		lots       int64
	}
	ords, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ordRow, error) {
		var o ordRow
		var old *bool
		err := r.Scan(&o.env, &o.asset, &o.id, &o.filled, &old, &o.lots)
		o.old = old != nil && *old
		return o, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	traded := map[[2]string]int64{}
	unprojected := map[[2]string]int64{}
	for _, o := range ords {
		mult := lotUnits(o.asset)
		k := [2]string{o.env, o.asset}
		traded[k] += o.lots * mult
		if o.lots*mult != o.filled {
			if o.old {
				out = append(out, ledger.Violation{Check: "treasury_fills", Subject: fmt.Sprintf("order %x", o.id),
					Detail: fmt.Sprintf("recorded fill %d but the projected trades hold %d (minor units of %s)", o.filled, o.lots*mult, o.asset)})
			}
			unprojected[k] += o.filled - o.lots*mult
		}
	}
	// Every trade of the treasury's account, whichever order it belongs to: a hedge placed
	// twice (or without its row) shows here and not in traded.
	rows, err = tx.Query(ctx, `select environment, symbol, coalesce(sum(case when side = 'buy' then quantity else -quantity end), 0)::bigint
		from trading_trades where merchant_id = $1 group by 1, 2`, [16]byte(Account))
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	all := map[[2]string]int64{}
	type trRow struct {
		env, symbol string
		lots        int64
	}
	trs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (trRow, error) {
		var t trRow
		return t, r.Scan(&t.env, &t.symbol, &t.lots)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("treasury verify: %w", err)
	}
	for _, t := range trs {
		asset, _, _ := strings.Cut(t.symbol, "-")
		all[[2]string{t.env, asset}] += t.lots * lotUnits(asset)
	}
	for k, v := range all {
		if v != traded[k] {
			out = append(out, ledger.Violation{Check: "treasury_orders", Subject: k[0] + " " + k[1],
				Detail: fmt.Sprintf("the treasury's account traded %d but its recorded orders %d (minor units): an order without its row", v, traded[k])})
		}
	}
	for _, x := range fxs {
		if x.asset == string(money.NGN) {
			continue
		}
		k := [2]string{x.env, x.asset}
		rec := Reconciliation{Env: x.env, Asset: money.Asset(x.asset), LedgerFX: x.fx, Engine: all[k]}
		rec.InFlight = -x.fx - rec.Engine
		recs = append(recs, rec)
	}
	// In flight must be the open position (intents - recorded fills) plus what is recorded
	// but not yet projected; the first check made intents = -fx, so this ties the rows to
	// the projected trades.
	opens := map[[2]string]int64{}
	for _, x := range fxs {
		opens[[2]string{x.env, x.asset}] = x.qty
	}
	for _, o := range ords {
		opens[[2]string{o.env, o.asset}] -= o.filled
	}
	for _, r := range recs {
		k := [2]string{r.Env, string(r.Asset)}
		if r.InFlight != opens[k]+unprojected[k] {
			out = append(out, ledger.Violation{Check: "treasury_in_flight", Subject: r.Env + " " + string(r.Asset),
				Detail: fmt.Sprintf("in flight %d but the open position is %d", r.InFlight, opens[k]+unprojected[k])})
		}
	}
	return out, recs, nil
}

// lotUnits is the minor units of asset in one lot of its NGN book (the default pairs).
func lotUnits(asset string) int64 {
	for _, p := range engine.DefaultPairs() {
		if p.Base.String() == asset {
			return pow10(p.Base.Decimals() - p.QtyDecimals)
		}
	}
	return 1
}
