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
