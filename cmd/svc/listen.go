package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"svc/cmd/internal/devhooks"
)

// runListen is `svc listen --forward-to URL`: the merchant's events, from svcd's WebSocket
// events channel, POSTed to a local URL as signed webhook deliveries. Needs an API key only.
func runListen(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wsURL := fs.String("url", envOr(env, "SVC_WS_URL", "ws://127.0.0.1:8080/v1/ws"), "WebSocket URL of svcd (SVC_WS_URL)")
	key := fs.String("api-key", env("SVC_API_KEY"), "the merchant's API key (default $SVC_API_KEY); its environment's events are forwarded")
	forward := fs.String("forward-to", "", "local URL each event is POSTed to, e.g. http://localhost:4242/webhook (required)")
	evs := fs.String("events", "", "comma-separated event names to forward (default: every event)")
	secret := fs.String("secret", env("SVC_LISTEN_SECRET"), "signing secret to use (default: a new whsec_ one, printed at start)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc listen --forward-to http://localhost:PORT/PATH [--events a,b] [--api-key KEY] [--url ws://HOST:PORT/v1/ws]\n\n"+
			"Receives your events over svcd's WebSocket and POSTs each to the local URL as a webhook delivery, signed\n"+
			"(X-Svc-Signature) with the secret it prints, one line per delivery with your server's answer. No database\n"+
			"and no public URL needed. ^C stops it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *forward == "" || fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("listen: --forward-to is required and no arguments are taken")
	}
	var names []string
	for _, n := range strings.Split(*evs, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return devhooks.Listen(ctx, devhooks.ListenConfig{WSURL: *wsURL, APIKey: *key, ForwardTo: *forward, Events: names, Secret: *secret}, stdout)
}

// runTrigger is `svc trigger EVENT`: a sandbox event made to happen through the real flows.
func runTrigger(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc trigger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("api", envOr(env, "SVC_API_URL", "http://127.0.0.1:8080"), "HTTP address of svcd (SVC_API_URL)")
	key := fs.String("api-key", env("SVC_API_KEY"), "a sandbox API key (default $SVC_API_KEY)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc trigger [--api-key KEY] [--api http://HOST:PORT] EVENT\n\n"+
			"Makes a sandbox event happen through the public API and the sandbox simulation routes. EVENT is one of:\n"+
			devhooks.TriggerNames())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("trigger: want exactly one EVENT, got %d arguments", fs.NArg())
	}
	return devhooks.Trigger(ctx, devhooks.TriggerConfig{BaseURL: *base, APIKey: *key}, fs.Arg(0), stdout)
}

func envOr(env func(string) string, name, def string) string {
	if v := env(name); v != "" {
		return v
	}
	return def
}
