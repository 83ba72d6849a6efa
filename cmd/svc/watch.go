package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"svc/gateway/ws"
)

// runWatch is `svc watch SYMBOL`: the reference WebSocket client. It keeps a local book
// from the orderbook channel (snapshot, then diffs; a gap triggers a resync) and prints
// the top of book after every update.
func runWatch(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "ws://127.0.0.1:8080/v1/ws", "WebSocket URL of svcd")
	key := fs.String("api-key", env("SVC_API_KEY"), "API key (default $SVC_API_KEY; none: public data of --environment)")
	environment := fs.String("environment", "", "without a key: sandbox or live (the server's default is live); with a key the stream is the key's environment")
	levels := fs.Int("levels", 1, "levels per side to print")
	interval := fs.String("interval", "", "update interval: 100ms or 1000ms (none: the server's default, a diff per 20 ms)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svc watch [--url ws://HOST:PORT/v1/ws] [--api-key KEY | --environment sandbox|live] [--levels N] [--interval 100ms|1000ms] SYMBOL\n\nFollows SYMBOL's order book over the WebSocket stream and prints the top of book. The order book is public: no key is needed.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage() // on stderr; a missing SYMBOL is a usage error (exit 1), -h alone exits 0
		return fmt.Errorf("watch: want exactly one SYMBOL, got %d arguments", fs.NArg())
	}
	symbol := fs.Arg(0)
	channel := symbol // the orderbook channel's symbol part, with the interval's suffix
	switch *interval {
	case "":
	case "100ms", "1000ms":
		channel += "@" + *interval
	default:
		return fmt.Errorf("watch: --interval %q: 100ms or 1000ms", *interval)
	}
	// With a key the stream is the key's environment (the server picks the hub from the
	// key); the environment flag only chooses the public stream without one.
	which := *environment
	if *key != "" {
		keyEnv := keyEnvironment(*key)
		if which != "" && keyEnv != "" && which != keyEnv {
			return fmt.Errorf("watch: --environment %s, but the API key is a %s key: the stream follows the key", which, keyEnv)
		}
		which = keyEnv
	}
	if which == "" {
		which = "live" // the server's default for public streams
	}
	fmt.Fprintf(stdout, "watching %s on the %s exchange\n", symbol, which)
	u := *url
	if *key == "" && *environment != "" {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + "environment=" + *environment
	}
	c, err := ws.Dial(u, *key)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = c.Close()
	}()
	book := &ws.Book{}
	gaps := 0
	err = c.Watch(channel, book, func(b *ws.Book, m *ws.Message) bool {
		if b.Gaps != gaps {
			gaps = b.Gaps
			fmt.Fprintf(stdout, "gap detected: resynchronised (%d so far)\n", gaps)
		}
		bids, asks := b.Levels(true, *levels), b.Levels(false, *levels)
		fmt.Fprintf(stdout, "%s seq %d  bid %s  ask %s\n", symbol, b.Seq, side(bids), side(asks))
		return true
	}, nil)
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return errors.New("connection closed")
	}
	return err
}

// keyEnvironment is the environment an API key's prefix names ("" for another credential).
func keyEnvironment(key string) string {
	switch {
	case strings.HasPrefix(key, "svc_sk_test_"):
		return "sandbox"
	case strings.HasPrefix(key, "svc_sk_live_"):
		return "live"
	}
	return ""
}

func side(ls [][2]string) string {
	if len(ls) == 0 {
		return "-"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l[1] + "@" + l[0]
	}
	return strings.Join(parts, " ")
}
