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

// TestTreasuryAndVerifyCommands: a conversion posted against system:fx shows in `svc
// treasury` as an open position, and `svc ledger verify` reconciles it (in flight); a
// conversion whose intent is lost (deleted here) is a violation.
func TestTreasuryAndVerifyCommands(t *testing.T) {
	pool, url := pgtest.New(t)
	ctx := context.Background()
	env := databaseEnv(url)
	m := uuid.New()
	err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m, Environment: "sandbox", Reference: "deposit:1:convert",
			Postings: append(ledger.Move(ledger.System(ledger.External), ledger.System(ledger.FX), money.MustParse(money.NGN, "160000")),
				ledger.Move(ledger.System(ledger.FX), ledger.Merchant(m, ledger.Available), money.MustParse(money.USDT, "99.5"))...)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"treasury"}, env, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	if !strings.Contains(out.String(), "sandbox") || !strings.Contains(out.String(), "99.500000") {
		t.Fatalf("svc treasury:\n%s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"ledger", "verify"}, env, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "treasury sandbox USDT: system:fx -99.500000 = -(traded 0.000000 + in flight 99.500000)") {
		t.Fatalf("svc ledger verify:\n%s", out.String())
	}
	if _, err := pool.Exec(ctx, `delete from treasury_intents`); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"ledger", "verify"}, env, &out, &errOut); !errors.Is(err, errLedgerBroken) || !strings.Contains(out.String(), "VIOLATION treasury_fx") {
		t.Fatalf("a conversion without its intent: %v\n%s", err, out.String())
	}
}

// TestTreasuryFundCommand (issue 27): `svc treasury fund` records the operator's funding
// once per reference, refuses a reference reused for another amount and a bad account,
// and leaves the books verifying.
func TestTreasuryFundCommand(t *testing.T) {
	pool, url := pgtest.New(t)
	ctx := context.Background()
	env := databaseEnv(url)
	fund := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"treasury", "fund"}, args...), env, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	cases := []struct {
		name string
		args []string
		want string // in the output, or in the error
		ok   bool
	}{
		{"a funding", []string{"--env", "live", "--asset", "USDT", "--amount", "250", "--reference", "wire-9"}, "recorded: 250.000000 USDT to the live treasury", true},
		{"the same again", []string{"--env", "live", "--asset", "USDT", "--amount", "250", "--reference", "wire-9"}, "already recorded", true},
		{"the reference for another amount", []string{"--env", "live", "--asset", "USDT", "--amount", "251", "--reference", "wire-9"}, "another funding", false},
		{"the market maker", []string{"--env", "live", "--account", "market-maker", "--asset", "NGN", "--amount", "1000000", "--reference", "wire-10"}, "live market-maker", true},
		{"an unknown account", []string{"--env", "live", "--account", "merchant", "--asset", "NGN", "--amount", "1", "--reference", "x"}, "want treasury or market-maker", false},
		{"no reference", []string{"--env", "live", "--asset", "NGN", "--amount", "1"}, "reference", false},
		{"a bad asset", []string{"--env", "live", "--asset", "BTC", "--amount", "1", "--reference", "y"}, "--asset", false},
	}
	for _, c := range cases {
		out, err := fund(c.args...)
		msg := out
		if err != nil {
			msg += err.Error()
		}
		if (err == nil) != c.ok || !strings.Contains(msg, c.want) {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
	}
	var rows, txs int
	if err := pool.QueryRow(ctx, `select (select count(*) from treasury_funding), (select count(*) from ledger_transactions where kind = 'treasury.fund')`).Scan(&rows, &txs); err != nil || rows != 2 || txs != 2 {
		t.Fatalf("%d funding rows, %d ledger transactions (want 2 and 2): %v", rows, txs, err)
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"ledger", "verify"}, env, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
}
