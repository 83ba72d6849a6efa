package postgres_test

import (
	"context"
	"testing"

	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// TestEscapeLike: an escaped search matches its own text literally in PostgreSQL's ILIKE,
// wildcards and backslashes included, and nothing that only a wildcard would match.
func TestEscapeLike(t *testing.T) {
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	for _, c := range []struct {
		text, search string
		want         bool
	}{
		{"Summer 50%_off sale", "50%_off", true},
		{"Summer 50 and more off sale", "50%_off", false},
		{"50x_off", "50%_off", false},
		{"a_b", "a_b", true},
		{"axb", "a_b", false},
		{`C:\dir`, `C:\dir`, true},
		{`C:dir`, `C:\dir`, false},
		{"Plain NAME", "name", true},
	} {
		var got bool
		if err := pool.QueryRow(ctx, `select $1::text ilike '%' || $2 || '%'`, c.text, postgres.EscapeLike(c.search)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q ilike %%%q%%: %v, want %v", c.text, c.search, got, c.want)
		}
	}
}
