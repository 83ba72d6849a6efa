package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"svc/gateway/auth/authtest"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

func TestMerchantAndMailCommands(t *testing.T) {
	pool, url := pgtest.New(t)
	m := authtest.New(t, pool)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return url
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
	if out := sh("merchant", "list"); !strings.Contains(out, m.Email) {
		t.Fatalf("list: %s", out)
	}
	sh("merchant", "set-rate-limit", "--reason", "trader", m.ID.String(), "500")
	if out := sh("merchant", "show", m.Email); !strings.Contains(out, "rate limit:      500 per minute") {
		t.Fatalf("show: %s", out)
	}
	sh("merchant", "suspend", "--reason", "test", m.Email)
	if out := sh("merchant", "show", m.ID.String()); !strings.Contains(out, "suspended:       true") {
		t.Fatalf("show: %s", out)
	}
	var n int
	_ = pool.QueryRow(ctx, `select count(*) from audit_log where subject = $1`, "merchant:"+m.ID.String()).Scan(&n)
	if n != 2 {
		t.Fatalf("audit rows %d", n)
	}
	if err := run(ctx, []string{"merchant", "set-rate-limit", m.Email, "zero"}, env, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("bad rate accepted")
	}
	_ = (&mail.Outbox{DB: pool}).Send(ctx, mail.Message{To: m.Email, Subject: "Verify your email", Text: "Your code is: 123456"})
	if out := sh("mail", "outbox", "--to", m.Email); !strings.Contains(out, "123456") {
		t.Fatalf("outbox: %s", out)
	}
}
