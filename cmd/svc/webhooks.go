package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/jobs"
	"svc/persistence/postgres"
)

// runWebhooks is `svc webhooks replay EVENT_ID`: enqueue an event's deliveries again.
func runWebhooks(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "replay" {
		fmt.Fprintln(stderr, "usage: svc webhooks replay [--reason TEXT] EVENT_ID")
		return errors.New("unknown webhooks subcommand")
	}
	fs := flag.NewFlagSet("svc webhooks replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	reason := fs.String("reason", "", "why (kept in the audit log)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc webhooks replay [--reason TEXT] EVENT_ID\n\n"+
			"Enqueues the event again to every endpoint of its merchant and environment that is active and\n"+
			"subscribed to it now; svcd's workers deliver it (same event id, fresh signature and timestamp).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("one EVENT_ID is required")
	}
	eventID, err := uuid.Parse(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("EVENT_ID %q is not a UUID", fs.Arg(0))
	}
	if err := needDB(*db); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	client, err := jobs.New(pool, jobs.Config{}) // insert-only: svcd works the jobs
	if err != nil {
		return err
	}
	rec := events.NewRecorder(client)
	actor := env("USER")
	if actor == "" {
		actor = "operator"
	}
	var n int
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		if n, err = rec.Redeliver(ctx, tx, eventID); err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]int{"deliveries": n})
		_, err = tx.Exec(ctx, `insert into audit_log (id, actor, action, subject, reason, detail)
			values ($1, $2, 'webhooks.replay', $3, $4, $5)`,
			uuid.Must(uuid.NewV7()), actor, "event:"+eventID.String(), *reason, detail)
		return err
	})
	if errors.Is(err, events.ErrNotFound) {
		return fmt.Errorf("no event %s", eventID)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "event %s: %d deliveries enqueued\n", eventID, n)
	return nil
}
