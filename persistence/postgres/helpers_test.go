package postgres_test

import (
	"io/fs"

	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

type pgxTx = pgx.Tx

func postgresMigrationCount() (int, error) {
	entries, err := fs.ReadDir(postgres.Migrations(), ".")
	return len(entries), err
}
