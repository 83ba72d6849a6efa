// Package enginerpctest serves a real engine over cluster/enginerpc on loopback, behind a
// proxy the test can freeze, for the tests of what a caller does when a remote engine stops
// answering.
package enginerpctest

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"svc/cluster/enginerpc"
	"svc/engine"
	"svc/persistence/postgres/pgtest"
)

// Remote serves eng over enginerpc on 127.0.0.1 and dials it through a TCP proxy: Pause on
// the proxy freezes the network to the engine. The client's timeouts (20 s) are far past
// any request's, so only the caller's own deadline can answer in time. The client and the
// server stop at the test's cleanup, before the proxy and the engine (LIFO).
func Remote(t testing.TB, eng *engine.Engine) (*enginerpc.Client, *pgtest.Proxy) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rpc := enginerpc.NewServer(eng, enginerpc.ServerOptions{})
	go func() { _ = rpc.Serve(ln) }()
	// pgtest's proxy relays any TCP stream; it takes its upstream in a URL.
	fr, via := pgtest.NewProxy(t, "tcp://"+ln.Addr().String())
	viaURL, err := url.Parse(via)
	if err != nil {
		t.Fatal(err)
	}
	client, err := enginerpc.Dial(viaURL.Host, enginerpc.Options{SubmitTimeout: 20 * time.Second, ReadTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		rpc.Stop(ctx)
		cancel()
	})
	return client, fr
}
