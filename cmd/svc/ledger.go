package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"svc/payments/ledger"
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
			"merchant or customer account is negative unless it is a receivable. Exits 1 on any violation.")
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
	fmt.Fprintf(stdout, "checked %d accounts, %d transactions, %d entries\n", stats.Accounts, stats.Transactions, stats.Entries)
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
