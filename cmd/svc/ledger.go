package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/treasury"
	"svc/persistence/postgres"
)

// errLedgerBroken is returned (exit status 1) when verify finds a violation.
var errLedgerBroken = errors.New("ledger verification failed")

// runLedger is `svc ledger verify`: check every invariant of the payments ledger.
func runLedger(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stderr, "usage: svc ledger verify [--database-url URL] [--max N]   (svc ledger verify -h for details)")
		return flag.ErrHelp
	}
	if args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: svc ledger verify [--database-url URL] [--max N]")
		return errors.New("unknown ledger subcommand")
	}
	fs := flag.NewFlagSet("svc ledger verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	max := fs.Int("max", 100, "print at most N violations (all are counted)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc ledger verify [--database-url URL] [--max N]\n\n"+
			"Checks, in one consistent snapshot, that every ledger transaction sums to zero per asset, every\n"+
			"balance equals the sum of its entries (and each entry's running balance is right), and no\n"+
			"merchant or customer account is negative unless it is a receivable; and that the ledger's system:fx\n"+
			"equals the treasury's trades on the book plus what is in flight (every conversion recorded its hedge\n"+
			"intent, every hedge's fill matches its projected trades, no trade of the treasury without its order).\n"+
			"Exits 1 on any violation.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := needDB(*db); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	stats, err := ledger.Count(ctx, pool)
	if err != nil {
		return err
	}
	vs, err := ledger.Verify(ctx, pool)
	if err != nil {
		return err
	}
	// The treasury (issue 27): system:fx = the treasury's trades on the book + in flight.
	tvs, recs, err := treasury.Verify(ctx, pool)
	if err != nil {
		return err
	}
	vs = append(vs, tvs...)
	fmt.Fprintf(stdout, "checked %d accounts, %d transactions, %d entries\n", stats.Accounts, stats.Transactions, stats.Entries)
	for _, r := range recs {
		fmt.Fprintf(stdout, "treasury %s %s: system:fx %s = -(traded %s + in flight %s)\n", r.Env, r.Asset,
			money.Format(r.Asset, r.LedgerFX), money.Format(r.Asset, r.Engine), money.Format(r.Asset, r.InFlight))
	}
	if len(vs) == 0 {
		fmt.Fprintln(stdout, "ledger OK: every invariant holds")
		return nil
	}
	for i, v := range vs {
		if i == *max {
			fmt.Fprintf(stdout, "... and %d more\n", len(vs)-i)
			break
		}
		fmt.Fprintln(stdout, "VIOLATION", v)
	}
	fmt.Fprintf(stdout, "%d violations\n", len(vs))
	return errLedgerBroken
}
