package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"svc/cmd/internal/cli"
)

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, func(string) string { return "" }, &out, &out); err != nil {
			t.Fatal(err)
		}
		if want := "svc " + cli.Version() + " (commit " + cli.Commit(); !strings.HasPrefix(out.String(), want) {
			t.Fatalf("%s printed %q, want %q...", arg, out.String(), want)
		}
	}
}

func TestDatabaseURLPasswordNeverPrinted(t *testing.T) {
	env := databaseEnv("postgres://svc:db-password-value@db.example/svc")
	for _, args := range [][]string{{"ledger", "verify", "-h"}, {"mail", "outbox", "--nope"}, {"migrate", "-h"}} {
		var out bytes.Buffer
		_ = run(context.Background(), args, env, &out, &out)
		if strings.Contains(out.String(), "db-password-value") {
			t.Errorf("svc %v printed the database password:\n%s", args, out.String())
		}
		if !strings.Contains(out.String(), "postgres://svc:REDACTED@db.example/svc") {
			t.Errorf("svc %v: want the URL shown redacted:\n%s", args, out.String())
		}
	}
}

// TestWatchWithoutSymbolIsAUsageError: `svc watch` with no SYMBOL prints its usage on stderr
// and fails (main exits 1); only -h exits 0.
func TestWatchWithoutSymbolIsAUsageError(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"watch"}, func(string) string { return "" }, &out, &errOut)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		t.Fatalf("svc watch: err = %v, want a usage error", err)
	}
	if !strings.Contains(errOut.String(), "usage: svc watch") || out.Len() != 0 {
		t.Fatalf("usage should go to stderr only; stdout %q stderr %q", out.String(), errOut.String())
	}
	if err := run(context.Background(), []string{"watch", "-h"}, func(string) string { return "" }, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("svc watch -h: err = %v, want flag.ErrHelp (exit 0)", err)
	}
}
