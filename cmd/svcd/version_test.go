package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"svc/cmd/internal/cli"
)

func TestVersionFlagPrintsVersionAndCommit(t *testing.T) {
	var out bytes.Buffer
	// No database and no other configuration: --version answers anyway.
	if err := run(context.Background(), []string{"--version"}, env(nil), &out, &out); err != nil {
		t.Fatal(err)
	}
	want := "svcd " + cli.Version() + " (commit " + cli.Commit()
	if !strings.HasPrefix(out.String(), want) {
		t.Fatalf("--version printed %q, want it to start with %q", out.String(), want)
	}
}
