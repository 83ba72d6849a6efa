package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/payments/providers/evm/signer"
	"svc/persistence/postgres/pgtest"
)

func TestCustodyKeystoreAddressAndAlerts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "custody.json")
	const pass = "a passphrase for the test"
	if err := signer.Create(file, pass, signer.Light); err != nil {
		t.Fatal(err)
	}
	ks, _ := signer.Open(file, pass)
	hot, _ := ks.Address(context.Background(), signer.KeyHot)
	env := map[string]string{"SVC_CUSTODY_PASSPHRASE": pass}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"custody", "keystore", "address", "--file", file}, func(k string) string { return env[k] }, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if !strings.Contains(out.String(), hot.Hex()) || strings.Contains(out.String()+errb.String(), pass) {
		t.Fatalf("keystore address printed %q", out.String())
	}
	env["SVC_CUSTODY_PASSPHRASE"] = "wrong passphrase here"
	if err := run(context.Background(), []string{"custody", "keystore", "address", "--file", file}, func(k string) string { return env[k] }, &out, &errb); err == nil {
		t.Fatal("a wrong passphrase opened the keystore")
	}

	pool, url := pgtest.New(t)
	env["DATABASE_URL"] = url
	out.Reset()
	if err := run(context.Background(), []string{"custody", "alerts"}, func(k string) string { return env[k] }, &out, &errb); err != nil ||
		!strings.Contains(out.String(), "no reorganised credits") {
		t.Fatalf("alerts on an empty database: %v %q", err, out.String())
	}
	now := time.Now().UTC()
	if _, err := pool.Exec(context.Background(), `insert into evm_transfers (id, chain, tx_hash, ordinal, log_index, block_number, block_hash,
		token, asset, from_address, to_address, reference, value, amount, status, seen_at, credited_at, dropped_at)
		values ($1, 'BASE', '0xabc', 0, 3, 10, '0xblock', '0xtoken', 'USDT', '0xfrom', '0xto', 'merchant:m', 5000000, 5000000,
			'REORGED_AFTER_CREDIT', $2, $2, $2)`, uuid.New(), now); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"custody", "alerts"}, func(k string) string { return env[k] }, &out, &errb); err != nil ||
		!strings.Contains(out.String(), "ALERT") || !strings.Contains(out.String(), "0xabc") || !strings.Contains(out.String(), "5.000000 USDT") {
		t.Fatalf("alerts: %v %q", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"custody", "balances"}, func(k string) string { return env[k] }, &out, &errb); err != nil ||
		!strings.Contains(out.String(), "merchant:m") {
		t.Fatalf("balances: %v %q", err, out.String())
	}
}
