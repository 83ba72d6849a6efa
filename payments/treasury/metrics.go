package treasury

import (
	"context"
	"math"
	"math/big"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"svc/engine"
	"svc/payments/money"
)

// Collector exports the desk's exposure, limits, alerts, inventory, hedge counts and
// result, read at scrape time (labels env and asset: the configured environments and the
// hedged assets). Values are in units of the asset (NGN for the result): for dashboards,
// never for accounting.
func (d *Desk) Collector() prometheus.Collector { return &collector{d: d} }

type collector struct{ d *Desk }

var (
	envAsset    = []string{"env", "asset"}
	descOpen    = prometheus.NewDesc("svc_treasury_open_position", "The treasury's open (unhedged) position: to buy (+) or sell (-) on the book, units of the asset.", envAsset, nil)
	descLimit   = prometheus.NewDesc("svc_treasury_open_limit", "The open position's limit, units of the asset: past it, quotes the book's band cannot price answer 503.", envAsset, nil)
	descAlert   = prometheus.NewDesc("svc_treasury_limit_alert", "1 when the open position is past the alert share (80 %) of its limit.", envAsset, nil)
	descInv     = prometheus.NewDesc("svc_treasury_inventory", "The treasury's available balance in its engine account, units of the asset (NGN included); absent while the engine does not answer.", envAsset, nil)
	descOrders  = prometheus.NewDesc("svc_treasury_hedge_orders_total", "Hedge orders settled by this process.", envAsset, nil)
	descNoFill  = prometheus.NewDesc("svc_treasury_hedges_unfilled_total", "Hedge orders that filled nothing (no depth in the band, or no inventory): the position waits.", envAsset, nil)
	descResult  = prometheus.NewDesc("svc_treasury_result_ngn", "The treasury's NGN result: what conversions took in plus what hedges paid or received, the open position marked at the reference.", []string{"env"}, nil)
	descPending = prometheus.NewDesc("svc_treasury_pending_orders", "Hedge orders written but not settled: a round settles them by id and places nothing in the environment while any is left (one whose book is gone stays until its pair is back).", envAsset, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOpen, descLimit, descAlert, descInv, descOrders, descNoFill, descResult, descPending} {
		ch <- d
	}
}

// engineScrape bounds a scrape's engine read per environment; its database reads have
// their own 2 s (Prometheus waits 10 s by default).
const engineScrape = time.Second

func units(a money.Asset, minor int64) float64 {
	return float64(minor) / math.Pow10(a.Places())
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	d.mu.Lock()
	open := map[string]map[money.Asset]int64{}
	for env, m := range d.open {
		open[env] = map[money.Asset]int64{}
		for a, v := range m {
			open[env][a] = v
		}
	}
	type count struct{ orders, unfilled uint64 }
	counts := map[string]map[money.Asset]count{}
	for env, m := range d.stats {
		counts[env] = map[money.Asset]count{}
		for a, s := range m {
			counts[env][a] = count{s.orders, s.rejected}
		}
	}
	d.mu.Unlock()
	// A remote engine that does not answer costs the scrape at most engineScrape, and its
	// inventory is left out rather than exported as zeros (which would read as a treasury
	// to fund). Each environment has its own: one silent engine does not hide the other's.
	for env, e := range d.cfg.Envs {
		ectx, ecancel := context.WithTimeout(context.Background(), engineScrape)
		bal, err := balancesOf(ectx, e.Exchange)
		ecancel()
		if err == nil {
			for _, ea := range []engine.Asset{engine.NGN, engine.USDT, engine.USDC, engine.USD} {
				ch <- prometheus.MustNewConstMetric(descInv, prometheus.GaugeValue,
					float64(bal[ea].Available)/math.Pow10(ea.Decimals()), env, ea.String())
			}
		}
		for _, a := range Assets {
			o, l := open[env][a], e.Limits[a]
			ch <- prometheus.MustNewConstMetric(descOpen, prometheus.GaugeValue, units(a, o), env, string(a))
			ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, units(a, l), env, string(a))
			alert := 0.0
			if l > 0 && big.NewRat(abs(o), l).Cmp(d.cfg.AlertAt) >= 0 {
				alert = 1
			}
			ch <- prometheus.MustNewConstMetric(descAlert, prometheus.GaugeValue, alert, env, string(a))
			n := counts[env][a]
			ch <- prometheus.MustNewConstMetric(descOrders, prometheus.CounterValue, float64(n.orders), env, string(a))
			ch <- prometheus.MustNewConstMetric(descNoFill, prometheus.CounterValue, float64(n.unfilled), env, string(a))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ps, err := Status(ctx, d.pool)
	if err != nil {
		return
	}
	result := map[string]int64{}
	for _, p := range ps {
		if _, ok := d.cfg.Envs[p.Env]; !ok {
			continue
		}
		if p.Asset == money.NGN {
			result[p.Env] += p.NGNIn * 100
			continue
		}
		mark := int64(0)
		if ref, ok := d.cfg.Prices.Reference(p.Env, p.Asset); ok {
			mark = ref.Price
		}
		result[p.Env] += p.Result(mark)
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(p.Placing), p.Env, string(p.Asset))
	}
	for env, r := range result {
		ch <- prometheus.MustNewConstMetric(descResult, prometheus.GaugeValue, float64(r)/1e4, env)
	}
}
