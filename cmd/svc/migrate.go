package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"svc/persistence/postgres"
)

func runMigrate(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc migrate [--database-url URL]\n\nApplies every embedded migration not yet applied (ours, then the job queue's).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := needDB(*db); err != nil {
		return err
	}
	if err := postgres.Migrate(ctx, *db); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	v, err := postgres.SchemaVersion(ctx, pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrated: schema version %d\n", v)
	return nil
}
