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
	if len(args) > 0 && args[0] == "fund" {
		return runTreasuryFund(ctx, args[1:], env, stdout, stderr)
	}
	fs := flag.NewFlagSet("svc treasury", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	price := fs.String("price", "1600", "NGN per unit the open positions are marked at for the result")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc treasury [--database-url URL] [--price NGN]\n"+
			"       svc treasury fund --env live --account treasury|market-maker --amount AMOUNT --asset ASSET --reference REF\n\n"+
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

// runTreasuryFund is `svc treasury fund`: the operator funds the treasury's or the market
// maker's engine account (issue 27; live money is the operator's, never a merchant's).
func runTreasuryFund(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc treasury fund", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	envName := fs.String("env", "live", "environment: live or sandbox")
	account := fs.String("account", treasury.FundTreasury, "whose engine account: treasury or market-maker")
	asset := fs.String("asset", "", "NGN, USDT, USDC or USD")
	amount := fs.String("amount", "", "how much, in units of the asset (e.g. 250000.00)")
	ref := fs.String("reference", "", "the funding's reference (your bank transfer or ticket id): the same reference funds once")
	note := fs.String("note", "", "a note for the ledger transaction's description")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc treasury fund --env live --account treasury|market-maker --asset ASSET --amount AMOUNT --reference REF\n\n"+
			"Records that the operator moved AMOUNT of its own money onto the exchange for the treasury (hedges\n"+
			"and thin-band quotes) or the market maker: one balanced ledger transaction in the treasury's own\n"+
			"books (system:external -> system:trading, reference treasury-funding:REF) and a funding row that\n"+
			"the process running the engine credits to the account within a window. Move the real money first.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := needDB(*db); err != nil {
		return err
	}
	a := money.Asset(*asset)
	if !a.Valid() {
		return fmt.Errorf("--asset %q: want NGN, USDT, USDC or USD", *asset)
	}
	amt, err := money.ParsePositive(a, *amount)
	if err != nil {
		return fmt.Errorf("--amount: %w", err)
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	id, replayed, err := treasury.Fund(ctx, pool, treasury.FundRequest{Env: *envName, Account: *account, Amount: amt,
		Reference: *ref, Note: *note})
	if err != nil {
		return err
	}
	if replayed {
		fmt.Fprintf(stdout, "funding %s was already recorded (reference %s): nothing changed\n", id, *ref)
		return nil
	}
	fmt.Fprintf(stdout, "funding %s recorded: %s %s to the %s %s account; credited to the engine within a window\n",
		id, money.Format(a, amt.Minor), a, *envName, *account)
	return nil
}
