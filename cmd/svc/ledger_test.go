package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/payments/ledger"
	"svc/payments/money"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// databaseEnv is an environment for a command under test that holds only DATABASE_URL.
func databaseEnv(url string) func(string) string {
	return func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
}

func TestLedgerVerifyCommand(t *testing.T) {
	pool, url := pgtest.New(t)
	ctx := context.Background()
	env := databaseEnv(url)
	m, c := uuid.New(), uuid.New()
	for i, amt := range []string{"100", "250.50", "3"} {
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "dep-" + string(rune('a'+i)),
				Postings: ledger.Move(ledger.System(ledger.External), ledger.Customer(c, ledger.Available), money.MustParse(money.NGN, amt))})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"ledger", "verify"}, env, &out, &errOut); err != nil {
		t.Fatalf("verify on a sound ledger: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "ledger OK") || !strings.Contains(out.String(), "3 transactions, 6 entries") {
		t.Fatalf("output: %s", out.String())
	}

	// Corrupt one entry: verify must fail (non-zero exit) and name the breaks.
	if _, err := pool.Exec(ctx, `update ledger_entries set amount = amount * 2 where amount > 0 and seq = 2`); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(ctx, []string{"ledger", "verify"}, env, &out, &errOut)
	if !errors.Is(err, errLedgerBroken) {
		t.Fatalf("verify on a corrupted ledger: %v\n%s", err, out.String())
	}
	for _, want := range []string{"VIOLATION zero_sum", "VIOLATION balance_sum", "VIOLATION sequence"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(ctx, []string{"ledger", "bogus"}, env, &out, &errOut); err == nil {
		t.Fatal("unknown subcommand accepted")
	}
}
