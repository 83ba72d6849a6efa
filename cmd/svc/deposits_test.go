package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/gateway/auth/authtest"
	"svc/payments"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/ledger"
	"svc/payments/money"
	"svc/payments/onramps"
	"svc/payments/providers"
	"svc/payments/rates"
	"svc/persistence/postgres"
	"svc/persistence/postgres/pgtest"
)

// depositFixture makes live deposits the way svcd does and drives their steps by hand (no
// workers: the CLI only enqueues).
type depositFixture struct {
	pool *pgxpool.Pool
	ons  *onramps.Service
	deps *deposits.Service
	t    payments.Tenant
}

func newDepositFixture(t *testing.T, pool *pgxpool.Pool, merchant uuid.UUID) *depositFixture {
	t.Helper()
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Live gets the simulators too: a live deposit needs a bank partner for its onramp.
	envs := providers.Environments{Sandbox: providers.NewSandbox(providers.SandboxConfig{}), Live: providers.NewSandbox(providers.SandboxConfig{BankCode: "998"})}
	rs, err := rates.New(pool, rates.Config{References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(client)
	ons := onramps.New(pool, onramps.Config{Rates: rs, Providers: envs, Customers: onramps.Directory, Events: rec})
	return &depositFixture{pool: pool, ons: ons, t: payments.Tenant{MerchantID: merchant, Environment: "live"},
		deps: deposits.New(pool, deposits.Config{Onramps: ons, Rates: rs, Providers: envs, Events: rec, Jobs: client})}
}

// receive makes a live deposit of 16,000 NGN arrive and runs its steps until it stops.
func (f *depositFixture) receive(t *testing.T, flag bool) deposits.Deposit {
	t.Helper()
	ctx := context.Background()
	amount := money.New(money.NGN, 1_600_000)
	o, err := f.ons.Create(ctx, f.t, onramps.CreateInput{Type: onramps.Temporary, Amount: &amount})
	if err != nil {
		t.Fatal(err)
	}
	var d deposits.Deposit
	if err := postgres.InTx(ctx, f.pool, func(tx pgx.Tx) error {
		o, err := f.ons.GetTx(ctx, tx, f.t, o.ID, true)
		if err != nil {
			return err
		}
		d, err = f.deps.Receive(ctx, tx, o, amount, flag)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return f.run(t, d.ID)
}

// run advances the deposit until no step applies.
func (f *depositFixture) run(t *testing.T, id uuid.UUID) deposits.Deposit {
	t.Helper()
	ctx := context.Background()
	for {
		d, err := f.deps.Get(ctx, f.t, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != deposits.PendingFX && d.Status != deposits.PendingWithdrawal {
			return d
		}
		if err := f.deps.Advance(ctx, id, d.Status); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDepositsCommands(t *testing.T) {
	pool, url := pgtest.New(t)
	m := authtest.New(t, pool)
	f := newDepositFixture(t, pool, m.ID)
	env := func(k string) string {
		switch k {
		case "DATABASE_URL":
			return url
		case "USER":
			return "alice"
		}
		return ""
	}
	ctx := context.Background()
	sh := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(ctx, args, env, &out, &errOut); err != nil {
			t.Fatalf("svc %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	verifyLedger := func() {
		t.Helper()
		if out := sh("ledger", "verify"); !strings.Contains(out, "ledger OK") {
			t.Fatal(out)
		}
	}
	avail := ledger.Merchant(m.ID, ledger.Available)
	balance := func(a ledger.Account) money.Amount {
		t.Helper()
		b, err := ledger.GetBalance(ctx, pool, m.ID, "live", a, money.USDT)
		if err != nil {
			t.Fatal(err)
		}
		return b.Amount
	}

	t.Run("help", func(t *testing.T) {
		for _, args := range [][]string{
			{"deposits"}, {"deposits", "--help"}, {"deposits", "review", "-h"}, {"deposits", "reverse", "--help"},
			{"deposits", "clear", "-h"}, {"deposits", "reject", "-h"}, {"deposits", "show", "-h"},
			{"merchant", "--help"}, {"merchants", "-h"}, {"merchant", "list", "-h"}, {"merchant", "show", "-h"},
			{"merchant", "set-rate-limit", "-h"}, {"merchant", "suspend", "-h"}, {"merchant", "unsuspend", "-h"},
			{"ledger", "--help"}, {"ledger", "verify", "-h"}, {"webhooks", "--help"}, {"webhooks", "replay", "-h"},
		} {
			var out, errOut bytes.Buffer
			if err := run(ctx, args, env, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("svc %v: %v", args, err)
			}
			if !strings.Contains(errOut.String(), "usage: svc") {
				t.Fatalf("svc %v: no usage: %s", args, errOut.String())
			}
		}
		if out := sh("help"); !strings.Contains(out, "deposits") || !strings.Contains(out, "merchants") {
			t.Fatal(out)
		}
	})

	t.Run("reverse", func(t *testing.T) {
		d := f.receive(t, false)
		if d.Status != deposits.Settled {
			t.Fatal(d.Status)
		}
		id := d.ID.String()
		if err := run(ctx, []string{"deposits", "reverse", id}, env, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Fatal("reverse without --reason accepted")
		}
		out := sh("deposits", "reverse", id, "--reason", "chargeback from the sender's bank")
		if !strings.Contains(out, "SETTLED -> REVERSED") || !strings.Contains(out, "debited "+d.SettledAmount.String()) {
			t.Fatal(out)
		}
		if out := sh("deposits", "reverse", "--actor", "bob", id, "--reason", "again"); !strings.Contains(out, "REVERSED; nothing to change") {
			t.Fatal(out)
		}
		if b := balance(avail); !b.IsZero() {
			t.Fatalf("available %s", b)
		}
		if out := sh("deposits", "show", id); !strings.Contains(out, "REVERSED") || !strings.Contains(out, "chargeback") {
			t.Fatal(out)
		}
		rows, err := pool.Query(ctx, `select actor, reason, detail->>'changed' from audit_log where subject = $1 and action = 'deposit.reverse' order by created_at`, "deposit:"+id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var a, r, c string
			_ = rows.Scan(&a, &r, &c)
			got = append(got, a+"|"+r+"|"+c)
		}
		if len(got) != 2 || !strings.HasPrefix(got[0], "alice@") || !strings.HasSuffix(got[0], "|chargeback from the sender's bank|true") || got[1] != "bob|again|false" {
			t.Fatalf("audit %v", got)
		}
		verifyLedger()
	})

	t.Run("reverse with a shortfall", func(t *testing.T) {
		d := f.receive(t, false)
		// The merchant has spent everything.
		if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := ledger.Post(ctx, tx, ledger.Transaction{MerchantID: m.ID, Environment: "live", Reference: "test:spend", Kind: "test.spend",
				Postings: ledger.Move(avail, ledger.System(ledger.External), *d.SettledAmount)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		out := sh("deposits", "reverse", d.ID.String(), "--reason", "fraud")
		if !strings.Contains(out, "not covered, recorded on the merchant's receivable account") {
			t.Fatal(out)
		}
		if b := balance(ledger.Merchant(m.ID, ledger.Receivable)); b.Cmp(d.SettledAmount.Neg()) != 0 {
			t.Fatalf("receivable %s", b)
		}
		verifyLedger()
	})

	t.Run("review, clear, reject", func(t *testing.T) {
		a, b := f.receive(t, true), f.receive(t, true)
		if a.Status != deposits.Flagged || b.Status != deposits.Flagged {
			t.Fatal(a.Status, b.Status)
		}
		out := sh("deposits", "review", "--env", "live")
		if !strings.Contains(out, a.ID.String()) || !strings.Contains(out, b.ID.String()) || !strings.Contains(out, "2 deposit(s) FLAGGED") {
			t.Fatal(out)
		}
		if out := sh("deposits", "review", "--env", "sandbox"); strings.Contains(out, a.ID.String()) {
			t.Fatal(out)
		}
		if out := sh("deposits", "clear", a.ID.String(), "--reason", "false positive"); !strings.Contains(out, "FLAGGED -> PENDING_FX") {
			t.Fatal(out)
		}
		if out := sh("deposits", "clear", a.ID.String(), "--reason", "again"); !strings.Contains(out, "nothing to change") {
			t.Fatal(out)
		}
		var jobsQueued int
		_ = pool.QueryRow(ctx, `select count(*) from river_job where kind = 'deposit_step' and args->>'deposit_id' = $1 and args->>'from' = 'PENDING_FX'`, a.ID.String()).Scan(&jobsQueued)
		if jobsQueued != 2 { // the first conversion (which held it) and the one the clear enqueued
			t.Fatalf("%d conversion jobs", jobsQueued)
		}
		if d := f.run(t, a.ID); d.Status != deposits.Settled {
			t.Fatal(d.Status)
		}
		if out := sh("deposits", "reject", b.ID.String(), "--reason", "sanctions hit"); !strings.Contains(out, "FLAGGED -> FAILED") {
			t.Fatal(out)
		}
		if out := sh("deposits", "reject", b.ID.String(), "--reason", "again"); !strings.Contains(out, "FAILED; nothing to change") {
			t.Fatal(out)
		}
		var out2, errOut bytes.Buffer
		if err := run(ctx, []string{"deposits", "clear", b.ID.String(), "--reason", "x"}, env, &out2, &errOut); err == nil || !strings.Contains(err.Error(), "cannot be cleared") {
			t.Fatalf("clear of a FAILED deposit: %v", err)
		}
		if out := sh("deposits", "review"); !strings.Contains(out, "0 deposit(s) FLAGGED") {
			t.Fatal(out)
		}
		if err := run(ctx, []string{"deposits", "reverse", uuid.NewString(), "--reason", "x"}, env, &out2, &errOut); err == nil {
			t.Fatal("unknown deposit reversed")
		}
		var n int
		_ = pool.QueryRow(ctx, `select count(*) from audit_log where action like 'deposit.%'`).Scan(&n)
		if n != 3+2+2 { // 3 reversals above, 2 clears, 2 rejects; a refused action writes nothing
			t.Fatalf("audit rows %d", n)
		}
		verifyLedger()
	})
}
