package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestWatchFollowsTheKeysEnvironment: with an API key the stream is the key's environment
// (the server picks the hub from the key); an --environment that contradicts the key is
// refused before connecting, instead of showing one book while the user thinks of another.
func TestWatchFollowsTheKeysEnvironment(t *testing.T) {
	for key, want := range map[string]string{"svc_sk_test_abc": "sandbox", "svc_sk_live_abc": "live", "eyJhbGciOi": ""} {
		if got := keyEnvironment(key); got != want {
			t.Errorf("keyEnvironment(%q) = %q, want %q", key, got, want)
		}
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"watch", "--url", "ws://127.0.0.1:1/v1/ws", "--api-key", "svc_sk_test_abc", "--environment", "live", "USDT-NGN"},
		func(string) string { return "" }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "sandbox key") {
		t.Fatalf("a live --environment with a sandbox key: %v", err)
	}
	out.Reset()
	err = run(context.Background(), []string{"watch", "--url", "ws://127.0.0.1:1/v1/ws", "USDT-NGN"},
		func(k string) string { return map[string]string{"SVC_API_KEY": "svc_sk_test_abc"}[k] }, &out, &errOut)
	if !strings.Contains(out.String(), "on the sandbox exchange") || err == nil {
		t.Fatalf("SVC_API_KEY sandbox key: %q, %v", out.String(), err)
	}
	err = run(context.Background(), []string{"watch", "--url", "ws://127.0.0.1:1/v1/ws", "--interval", "250ms", "USDT-NGN"},
		func(string) string { return "" }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "100ms or 1000ms") {
		t.Fatalf("--interval 250ms: %v", err)
	}
}
