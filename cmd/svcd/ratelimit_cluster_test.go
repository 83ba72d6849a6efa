package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"svc/gateway/auth/authtest"
	"svc/persistence/postgres/pgtest"
)

// TestOneRateLimitAcrossTwoGateways (issue 29): a merchant limited to 40 requests a minute,
// sending through two gateways in turn, gets 40 answers in the minute, not 40 per gateway
// (each gateway's own bucket would have let 80 through). --rate-limit-shared=false keeps
// the per-node behaviour, which the second half shows.
func TestOneRateLimitAcrossTwoGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five svcd")
	}
	pool, dbURL := pgtest.New(t)
	dir := t.TempDir()
	listen := "sandbox=" + freeAddr(t) + ",live=" + freeAddr(t)
	startNode(t, "--database-url", dbURL, "--roles", "engine,projector,marketdata", "--engine-listen", listen,
		"--journal-dir", dir+"/journal", "--snapshot-dir", dir+"/snapshots", "--webhook-allow-insecure")
	var crossed bool // the requests spanned a minute boundary: two windows
	count := func(shared bool) (ok, limited int) {
		m := authtest.New(t, pool)
		if _, err := pool.Exec(context.Background(), `update merchants set rate_limit_per_minute = 40 where id = $1`, m.ID); err != nil {
			t.Fatal(err)
		}
		flag := "--rate-limit-shared=true"
		if !shared {
			flag = "--rate-limit-shared=false"
		}
		gws := []*clusterNode{
			startNode(t, "--database-url", dbURL, "--roles", "gateway", "--engine-addr", listen, "--migrate=false", flag),
			startNode(t, "--database-url", dbURL, "--roles", "gateway", "--engine-addr", listen, "--migrate=false", flag),
		}
		hc := &http.Client{Timeout: 10 * time.Second}
		begin := time.Now()
		defer func() { crossed = !begin.Truncate(time.Minute).Equal(time.Now().Truncate(time.Minute)) }()
		for i := range 100 {
			req, _ := http.NewRequest(http.MethodGet, gws[i%2].base+"/v1/auth/me", nil)
			req.Header.Set("X-Api-Key", m.SandboxKey)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
				if resp.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
			default:
				t.Fatalf("GET /v1/auth/me: %d", resp.StatusCode)
			}
		}
		for _, g := range gws {
			g.stop()
		}
		return ok, limited
	}
	// 100 requests take well under a minute; a minute boundary in the middle lets a second
	// window's worth through, which the check allows for.
	ok, limited := count(true)
	t.Logf("shared limit of 40/min through two gateways: %d answered, %d refused (429)", ok, limited)
	if crossed && ok <= 80 {
		t.Logf("the requests spanned a minute boundary: up to two windows' worth allowed")
	} else if ok < 36 || ok > 44 {
		t.Errorf("shared: %d answered of 100, want 40 within 10 %%", ok)
	}
	ok, limited = count(false)
	t.Logf("per-node limits of 40/min through two gateways: %d answered, %d refused", ok, limited)
	if ok < 76 {
		t.Errorf("per node: %d answered, want 80 (40 per gateway)", ok)
	}
}
