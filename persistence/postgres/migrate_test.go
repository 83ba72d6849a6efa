package postgres_test

import (
	"context"
	"testing"

	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

func TestMigrateFromEmpty(t *testing.T) {
	pool, url := pgtest.New(t)
	ctx := context.Background()
	// pgtest databases come migrated from the template; empty this one and migrate again.
	if _, err := pool.Exec(ctx, `drop schema public cascade; create schema public`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, url); err != nil {
		t.Fatalf("migrate from empty: %v", err)
	}
	v, err := postgres.SchemaVersion(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	files, err := postgresMigrationCount()
	if err != nil {
		t.Fatal(err)
	}
	if int(v) != files {
		t.Fatalf("schema version %d, want %d (one per migration file)", v, files)
	}
	// A second run is a no-op.
	if err := postgres.Migrate(ctx, url); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `select count(*) from river_job`).Scan(&n); err != nil {
		t.Fatalf("job queue tables missing: %v", err)
	}
}

func TestInTxRollsBackOnError(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	_, _ = pool.Exec(ctx, `create table t (x int)`)
	wantErr := context.Canceled
	err := postgres.InTx(ctx, pool, func(tx pgxTx) error {
		if _, err := tx.Exec(ctx, `insert into t values (1)`); err != nil {
			return err
		}
		return wantErr
	})
	if err != wantErr {
		t.Fatalf("err = %v", err)
	}
	var n int
	_ = pool.QueryRow(ctx, `select count(*) from t`).Scan(&n)
	if n != 0 {
		t.Fatalf("rolled-back insert is visible: %d rows", n)
	}
}
