package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/operator"
	"svc/persistence/postgres"
)

// runWebhooks is `svc webhooks replay EVENT_ID`: enqueue an event's deliveries again.
func runWebhooks(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stderr, "usage: svc webhooks replay [--reason TEXT] [--actor WHO] EVENT_ID   (svc webhooks replay -h for flags)")
		return flag.ErrHelp
	}
	if args[0] != "replay" {
		fmt.Fprintln(stderr, "usage: svc webhooks replay [--reason TEXT] [--actor WHO] EVENT_ID")
		return errors.New("unknown webhooks subcommand")
	}
	fs := flag.NewFlagSet("svc webhooks replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	reason := fs.String("reason", "", "why (kept in the audit log)")
	actor := fs.String("actor", operator.DefaultActor(env), "who (kept in the audit log)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc webhooks replay [--reason TEXT] [--actor WHO] EVENT_ID\n\n"+
			"Enqueues the event again to every endpoint of its merchant and environment that is active and\n"+
			"subscribed to it now; svcd's workers deliver it (same event id, fresh signature and timestamp).")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fs.Usage()
		return errors.New("one EVENT_ID is required")
	}
	eventID, err := uuid.Parse(rest[0])
	if err != nil {
		return fmt.Errorf("EVENT_ID %q is not a UUID", rest[0])
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
	var n int
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		if n, err = rec.Redeliver(ctx, tx, eventID); err != nil {
			return err
		}
		return operator.Audit(ctx, tx, operator.Entry{Actor: *actor, Action: "webhooks.replay", Subject: "event:" + eventID.String(),
			Reason: *reason, Detail: map[string]int{"deliveries": n}})
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
