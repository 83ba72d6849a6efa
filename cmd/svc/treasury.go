package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/big"
	"text/tabwriter"

	"svc/payments/money"
	"svc/payments/treasury"
	"svc/persistence/postgres"
)

// runTreasury is `svc treasury`: each environment's treasury positions (issue 27).
func runTreasury(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc treasury", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	price := fs.String("price", "1600", "NGN per unit the open positions are marked at for the result")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc treasury [--database-url URL] [--price NGN]\n\n"+
			"Prints per environment and asset: what the conversions asked the treasury to buy (+) or sell (-),\n"+
			"what its hedges filled, the open position still in flight and its limit (ALERT at 80 %), the hedge\n"+
			"orders pending (written, not yet settled), the inventory credited, and the result in NGN (what the\n"+
			"conversions took in, plus what the hedges paid or received, minus the open position at --price).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := needDB(*db); err != nil {
		return err
	}
	mark, err := money.ParsePositive(money.NGN, *price)
	if err != nil {
		return fmt.Errorf("--price: %w", err)
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	ps, err := treasury.Status(ctx, pool)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintln(stdout, "no treasury activity yet")
		return nil
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "env\tasset\tintents\tfilled\topen\tlimit\tpending\torders\tresult NGN\t")
	for _, p := range ps {
		if p.Asset == money.NGN {
			continue
		}
		alert := ""
		if p.Limit > 0 && big.NewRat(abs64(p.Open), p.Limit).Cmp(big.NewRat(8, 10)) >= 0 {
			alert = "  ALERT"
		}
		res := p.Result(mark.Minor)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", p.Env, p.Asset, money.Format(p.Asset, p.Intents),
			money.Format(p.Asset, p.Filled), money.Format(p.Asset, p.Open), money.Format(p.Asset, p.Limit), p.Placing, p.Orders,
			money.Format(money.NGN, res/100), alert)
	}
	return w.Flush()
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
