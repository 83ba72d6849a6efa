package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"svc/gateway"
	"svc/gateway/openapi/client"
)

// TestGeneratedClientCallsARealServer: the client generated from openapi.json talks to a
// real gateway over TCP on loopback and decodes its answer (/health shows the build's
// version and commit).
func TestGeneratedClientCallsARealServer(t *testing.T) {
	cfg := gateway.DefaultConfig()
	cfg.AccessLog = false
	cfg.Version, cfg.Commit = "v1.2.3-test", "0123456789ab"
	srv, err := gateway.New(cfg, gateway.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})

	c, err := client.NewClientWithResponses("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.GetHealthWithResponse(ctx) // GET /v1/health
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != 200 || res.JSON200 == nil || res.JSON200.Data == nil {
		t.Fatalf("GET /v1/health: %d %s", res.StatusCode(), res.Body)
	}
	d := res.JSON200.Data
	if !res.JSON200.Success || deref(d.Status) != "ok" || deref(d.Version) != "v1.2.3-test" || deref(d.Commit) != "0123456789ab" {
		t.Fatalf("GET /v1/health decoded as %+v from %s", *d, res.Body)
	}
	if rid := res.HTTPResponse.Header.Get("X-Request-Id"); rid == "" {
		t.Error("no X-Request-Id")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
