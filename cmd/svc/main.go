// Command svc is the operator's CLI: it works against the same database (and journal) as
// svcd. A few are the merchant's and need only an API key: watch, listen, trigger. Run
// `svc help` for the commands and `svc COMMAND -h` for each one's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"svc/cmd/internal/cli"
)

// command is one operator command.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error
}

// commands lists every command; each lives in its own file.
func commands() []command {
	return []command{
		{"migrate", "apply database migrations", runMigrate},
		{"webhooks", "webhooks replay EVENT_ID: deliver an event again", runWebhooks},
		{"merchant", "merchants: list, show, set-rate-limit, suspend, unsuspend, whitelist show|clear", runMerchant},
		{"merchants", "the same as merchant", runMerchant},
		{"deposits", "deposits: review (FLAGGED), show, clear, reject, reverse (audited)", runDeposits},
		{"mail", "mail kept when no SMTP server is configured: outbox", runMail},
		{"journal", "exchange journal: inspect, replay --verify (rebuild and compare with the snapshot)", runJournal},
		{"ledger", "payments ledger: verify (every invariant; exits 1 on any break)", runLedger},
		{"treasury", "the treasuries: positions, result, pending hedges, limits, alerts", runTreasury},
		{"custody", "live EVM custody: keystore create|address, alerts (reorganised credits), sends, balances", runCustody},
		{"watch", "watch SYMBOL: follow an order book over the WebSocket stream (top of book)", runWatch},
		{"listen", "listen --forward-to URL: forward your events to a local URL as signed webhooks (API key only)", runListen},
		{"trigger", "trigger EVENT: make a sandbox event happen (customer, deposit, checkout, ...; API key only)", runTrigger},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "svc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	if args[0] == "version" || args[0] == "-version" || args[0] == "--version" {
		fmt.Fprintln(stdout, cli.VersionLine("svc"))
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], env, stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: svc COMMAND [flags]   (svc COMMAND -h for a command's flags; svc --version)")
	fmt.Fprintln(w, "\ncommands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-22s %s\n", c.name, c.summary)
	}
}

// dbFlag adds the --database-url flag every database command takes.
func dbFlag(fs *flag.FlagSet, env func(string) string) *string {
	def := env("SVC_DATABASE_URL")
	if def == "" {
		def = env("DATABASE_URL")
	}
	fs.Var(cli.NewDSN(&def), "database-url", "PostgreSQL URL (SVC_DATABASE_URL or DATABASE_URL); shown with its password redacted")
	return &def
}

func needDB(url string) error {
	if url == "" {
		return errors.New("--database-url (or DATABASE_URL) is required")
	}
	return nil
}
