package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaultsAndEnvironment(t *testing.T) {
	c, err := parseConfig(nil, env(map[string]string{"DATABASE_URL": "postgres://x/y"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.DatabaseURL != "postgres://x/y" || !c.Migrate || c.BodyLimit != 1<<20 {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parseConfig([]string{"-addr", ":9000"}, env(map[string]string{
		"SVC_DATABASE_URL": "postgres://a/b", "SVC_ADDR": ":7000", "SVC_SHUTDOWN_TIMEOUT": "3s", "SVC_MIGRATE": "false",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9000" || c.DatabaseURL != "postgres://a/b" || c.ShutdownTimeout != 3*time.Second || c.Migrate {
		t.Fatalf("flags must win over SVC_*, SVC_* over defaults: %+v", c)
	}
}

func TestConfigRejectsBadValuesClearly(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no database", nil, nil, "DATABASE_URL"},
		{"bad addr", []string{"-addr", "8080"}, map[string]string{"DATABASE_URL": "x"}, "-addr"},
		{"bad env int", nil, map[string]string{"DATABASE_URL": "x", "SVC_BODY_LIMIT": "big"}, "SVC_BODY_LIMIT"},
		{"bad log level", []string{"-log-level", "loud"}, map[string]string{"DATABASE_URL": "x"}, "-log-level"},
		{"bad base url", []string{"-public-base-url", "example.com"}, map[string]string{"DATABASE_URL": "x"}, "-public-base-url"},
		{"live maker without its limits", []string{"-live-market-maker"}, map[string]string{"DATABASE_URL": "x"}, "-live-market-maker-limits"},
		{"bad live maker limits", []string{"-live-market-maker", "-live-market-maker-limits", "BTC=1"}, map[string]string{"DATABASE_URL": "x"}, "-live-market-maker-limits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.args, env(tc.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}
