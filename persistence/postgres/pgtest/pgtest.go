// Package pgtest gives each test its own fresh, fully migrated PostgreSQL database, cloned
// from a template that is migrated once per schema version, so tests are isolated and can run
// in parallel against a real server.
//
// The server is DATABASE_URL; when that is unset, the project's private cluster (.ci/pg) is
// started, so `go test ./...` works from a clean checkout as well as through `make test`.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/persistence/postgres"
)

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
)

// ServerURL returns the URL of the test server (DATABASE_URL or the private cluster).
func ServerURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		serverURL = os.Getenv("DATABASE_URL")
		if serverURL != "" {
			return
		}
		root, err := moduleRoot()
		if err != nil {
			serverErr = err
			return
		}
		out, err := exec.Command(filepath.Join(root, ".ci", "pg"), "url").Output()
		if err != nil {
			serverErr = fmt.Errorf("start the private PostgreSQL cluster (.ci/pg url): %w", err)
			return
		}
		serverURL = strings.TrimSpace(string(out))
	})
	if serverErr != nil {
		t.Fatalf("pgtest: %v (set DATABASE_URL or run `make test`)", serverErr)
	}
	return serverURL
}

// New creates a fresh migrated database for this test, dropped when the test ends, and
// returns a pool on it and its URL (for code that opens its own connections).
func New(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := ServerURL(t)
	tmpl, err := ensureTemplate(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: template: %v", err)
	}
	name := "svc_test_" + randomHex(6)
	admin, err := pgx.Connect(ctx, withDatabase(base, "postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, fmt.Sprintf(`create database %q template %q`, name, tmpl)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dbURL := withDatabase(base, name)
	pool, err := postgres.Open(ctx, dbURL, 20)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		if os.Getenv("PGTEST_KEEP") != "" {
			t.Logf("pgtest: kept database %s", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, withDatabase(base, "postgres"))
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf(`drop database if exists %q with (force)`, name))
	})
	return pool, dbURL
}

// ensureTemplate creates and migrates the template for the current migrations once; the
// name carries a hash of the migration files, so a schema change gets a new template.
func ensureTemplate(ctx context.Context, base string) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(postgres.Migrations(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(postgres.Migrations(), p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	name := "svc_tmpl_" + hex.EncodeToString(h.Sum(nil))[:12]

	admin, err := pgx.Connect(ctx, withDatabase(base, "postgres"))
	if err != nil {
		return "", err
	}
	defer admin.Close(ctx)
	// One migrator at a time across all test processes.
	if _, err := admin.Exec(ctx, `select pg_advisory_lock(7243001)`); err != nil {
		return "", err
	}
	defer admin.Exec(context.WithoutCancel(ctx), `select pg_advisory_unlock(7243001)`)

	var ready bool
	err = admin.QueryRow(ctx, `select exists(select 1 from pg_database where datname = $1 and datistemplate)`, name).Scan(&ready)
	if err != nil || ready {
		return name, err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`drop database if exists %q`, name)); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`create database %q`, name)); err != nil {
		return "", err
	}
	if err := postgres.Migrate(ctx, withDatabase(base, name)); err != nil {
		return "", err
	}
	// Marked as template only once fully migrated, so a crash midway is redone next time.
	if _, err := admin.Exec(ctx, fmt.Sprintf(`alter database %q is_template true`, name)); err != nil {
		return "", err
	}
	return name, nil
}

func withDatabase(raw, db string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + db
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}
