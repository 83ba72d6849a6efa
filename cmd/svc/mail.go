package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"svc/payments/providers/mail"
	"svc/persistence/postgres"
)

func runMail(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc mail", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	to := fs.String("to", "", "only mail to this address")
	limit := fs.Int("limit", 5, "newest messages to show")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc mail outbox [--to EMAIL] [--limit N]\n\nShows mail kept in the outbox (svcd without --smtp-addr), e.g. one-time codes.")
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "outbox" {
		fs.Usage()
		return flag.ErrHelp
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
	ms, err := mail.ListOutbox(ctx, pool, *to, *limit)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		fmt.Fprintln(stdout, "(no mail)")
	}
	for _, m := range ms {
		fmt.Fprintf(stdout, "--- %s  to %s\nSubject: %s\n\n%s\n", m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), m.To, m.Subject, m.Body)
	}
	return nil
}
