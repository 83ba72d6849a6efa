package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"svc/gateway"
)

// A stop that arrives as svcd starts listening (a SIGTERM right at start, or a test that
// cancels as soon as it reads "svcd listening") ends serve: the listener is closed even when
// the serving goroutine had not registered it with the server yet. Before, Serve could start
// after Shutdown and serve for ever (seen as a 7-minute hang in CI).
func TestServeStopsWhenStoppedAtOnce(t *testing.T) {
	for i := range 50 {
		srv, err := gateway.New(gateway.DefaultConfig(), gateway.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := config{Addr: freeAddr(t), ShutdownTimeout: time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, srv, slog.New(slog.DiscardHandler)) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: serve did not return after its context ended", i)
		}
	}
}
