package cli

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"postgres://u@h/db":                 "postgres://u@h/db",
		"postgres://u:p@h:5432/db?x=1":      "postgres://u:REDACTED@h:5432/db?x=1",
		"postgres://h/db?password=p":        "postgres://h/db?password=REDACTED",
		"host=h password='a b' dbname=d":    "host=h password=REDACTED dbname=d",
		"host=h PASSWORD = secret dbname=d": "host=h PASSWORD = REDACTED dbname=d",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretFlagNeverShowsItsValue(t *testing.T) {
	var s, d string = "the-secret", "postgres://u:the-password@h/db"
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	fs.Var(NewSecret(&s), "secret", "a secret")
	fs.Var(NewDSN(&d), "db", "a database")
	if err := fs.Parse([]string{"-nope"}); err == nil {
		t.Fatal("want an error for an unknown flag")
	}
	if strings.Contains(out.String(), "the-secret") || strings.Contains(out.String(), "the-password") {
		t.Fatalf("usage printed a secret:\n%s", out.String())
	}
	if err := fs.Parse([]string{"-secret", "new", "-db", "postgres://h/x"}); err != nil || s != "new" || d != "postgres://h/x" {
		t.Fatalf("Set: %v %q %q", err, s, d)
	}
	fs.SetOutput(io.Discard)
}

func TestVersionFallbacks(t *testing.T) {
	if Version() == "" || Commit() == "" {
		t.Fatal("empty version or commit")
	}
	if l := VersionLine("svcd"); !strings.HasPrefix(l, "svcd ") || !strings.Contains(l, "commit ") {
		t.Fatalf("VersionLine = %q", l)
	}
}
