package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Migrations are numbered 001_name.sql, 002_..., with no gaps (tern refuses gaps and
// duplicates). A new migration takes the next free number.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

const versionTable = "schema_version"

// Migrations returns the embedded migration files (for hashing and inspection).
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder exists
	}
	return sub
}

// Migrate brings the database at url up to date: our schema first, then the job queue's.
// Both take an advisory lock, so concurrent callers wait for each other.
func Migrate(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect for migration: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m, err := migrate.NewMigrator(ctx, conn, versionTable)
	if err != nil {
		return fmt.Errorf("new migrator: %w", err)
	}
	if err := m.LoadMigrations(Migrations()); err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}

	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("pool for job-queue migration: %w", err)
	}
	defer pool.Close()
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("job-queue migrator: %w", err)
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("apply job-queue migrations: %w", err)
	}
	return nil
}

// SchemaVersion returns the number of our migrations applied to the database at url.
func SchemaVersion(ctx context.Context, q Querier) (int32, error) {
	var v int32
	err := q.QueryRow(ctx, "select version from "+versionTable).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
