package main

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	"svc/gateway/gatewaytest"
	"svc/identity"
	"svc/payments/providers/mail"
	"svc/persistence/postgres/pgtest"
)

func TestMerchantAndMailCommands(t *testing.T) {
	pool, url := pgtest.New(t)
	m := authtest.New(t, pool)
	env := databaseEnv(url)
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

// An operator sees and clears a merchant's IP whitelist (the way back in for a merchant
// locked out); both are audited, clear needs --why, and a running gateway lets the merchant
// in again at once.
func TestMerchantWhitelistShowAndClear(t *testing.T) {
	pool, url := pgtest.New(t)
	m := authtest.New(t, pool)
	gw := gatewaytest.New(t, pool)
	select {
	case <-gw.Identity.Cache().Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("auth cache listener not ready")
	}
	ctx := context.Background()
	if _, err := gw.Identity.SetWhitelist(ctx, m.ID, identity.Whitelist{Enabled: true, Required: true, IPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}); err != nil {
		t.Fatal(err)
	}
	gw.Must(t, 403, "GET", "/v1/auth/me", m.LiveKey, nil)

	env := databaseEnv(url)
	sh := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, args, env, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	out, err := sh("merchant", "whitelist", "show", "--why", "ticket 42", m.Email)
	if err != nil || !strings.Contains(out, "10.0.0.0/8") || !strings.Contains(out, "required:  true") {
		t.Fatalf("show: %v %s", err, out)
	}
	if _, err := sh("merchant", "whitelist", "clear", m.Email); err == nil || !strings.Contains(err.Error(), "--why") {
		t.Fatalf("clear without --why: %v", err)
	}
	gw.Must(t, 403, "GET", "/v1/auth/me", m.LiveKey, nil) // nothing changed
	if out, err := sh("merchant", "whitelist", "clear", "--why", "locked out, ticket 42", m.ID.String()); err != nil || !strings.Contains(out, "10.0.0.0/8") {
		t.Fatalf("clear: %v %s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for gw.Do(t, "GET", "/v1/auth/me", m.LiveKey, nil).Status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("merchant still locked out 5 s after the clear")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rows, err := pool.Query(ctx, `select action, reason, detail::text from audit_log where subject = $1 order by created_at`, "merchant:"+m.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	var audit []string
	for rows.Next() {
		var action, reason, detail string
		if err := rows.Scan(&action, &reason, &detail); err != nil {
			t.Fatal(err)
		}
		audit = append(audit, action+" | "+reason+" | "+detail)
	}
	if len(audit) != 2 || !strings.HasPrefix(audit[0], "merchant.whitelist.show | ticket 42") ||
		!strings.HasPrefix(audit[1], "merchant.whitelist.clear | locked out, ticket 42") || !strings.Contains(audit[1], "10.0.0.0/8") {
		t.Fatalf("audit rows:\n%s", strings.Join(audit, "\n"))
	}
}
