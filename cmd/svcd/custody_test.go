package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCustodyConfigIsCheckedAtStart: a malformed custody configuration, a missing keystore or
// passphrase stop svcd at start with a message naming them; -h never shows the passphrase.
func TestCustodyConfigIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"chains": [{"chain": "BASE", "rpc_url": "http://127.0.0.1:1", "chain_id": 8453, "confirmations": 3,
		"tokens": [{"asset": "USDC", "contract": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6, "sweep_threshold": "100"}]}]}`)
	const pass = "the-custody-passphrase"
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" : accepted
	}{
		{"good", []string{"--custody-config", good, "--custody-keystore", "/k.json"}, map[string]string{"SVC_CUSTODY_PASSPHRASE": pass}, ""},
		{"no passphrase", []string{"--custody-config", good, "--custody-keystore", "/k.json"}, nil, "SVC_CUSTODY_PASSPHRASE"},
		{"no keystore", []string{"--custody-config", good}, map[string]string{"SVC_CUSTODY_PASSPHRASE": pass}, "-custody-keystore"},
		{"unknown field", []string{"--custody-config", write("f.json", `{"chains": [{"chain": "BASE", "rpc": "x"}]}`)}, nil, "unknown field"},
		{"not a contract", []string{"--custody-config", write("c.json", `{"chains": [{"chain": "BASE", "rpc_url": "http://x", "chain_id": 1,
			"confirmations": 1, "tokens": [{"asset": "USDT", "contract": "0x12", "decimals": 6}]}]}`)}, nil, "is not an address"},
		{"bad threshold", []string{"--custody-config", write("t.json", `{"chains": [{"chain": "BASE", "rpc_url": "http://x", "chain_id": 1,
			"confirmations": 1, "tokens": [{"asset": "USDT", "contract": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6,
			"sweep_threshold": "1.1234567"}]}]}`)}, nil, "sweep_threshold"},
		{"missing file", []string{"--custody-config", filepath.Join(dir, "none.json")}, nil, "custody config"},
	} {
		var stderr bytes.Buffer
		_, err := parseConfig(append([]string{"--database-url", "postgres://x/y"}, tc.args...), func(k string) string { return tc.env[k] }, &stderr)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	var help bytes.Buffer
	_, _ = parseConfig([]string{"-h"}, func(k string) string {
		if k == "SVC_CUSTODY_PASSPHRASE" {
			return pass
		}
		return ""
	}, &help)
	if !strings.Contains(help.String(), "custody-config") || strings.Contains(help.String(), pass) {
		t.Fatalf("-h: custody flags missing or the passphrase shown:\n%s", help.String())
	}
}
