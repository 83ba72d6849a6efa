// Command kafkadev runs a Kafka-protocol broker for DEVELOPMENT ONLY: kfake
// (github.com/twmb/franz-go/pkg/kfake), an in-memory implementation of the Kafka wire
// protocol, as its own process on 127.0.0.1. `make cluster` uses it so the Kafka journal
// can be tried on one machine without a JVM.
//
// It is not Kafka: one process, no real replication, no security unless asked, and no
// guarantee that its behaviour matches a real broker's in every corner. Never point a
// production svcd at it (svcd needs --kafka-dev to create a one-replica topic here).
//
//	kafkadev [--host 127.0.0.1] [--port 9092] [--brokers 1] [--data-dir .data/kafkadev]
//
// It prints the bootstrap addresses (comma-separated) on one line of stdout once it
// listens, and runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kafkadev:", err)
		}
		os.Exit(2)
	}
}

const banner = `kafkadev: DEVELOPMENT ONLY. This is kfake, an in-process imitation of a Kafka broker, not Kafka:
kafkadev: no real replication, no production durability guarantees. Use a real Kafka cluster in production.`

// run starts the broker(s), writes the bootstrap addresses to stdout and waits for ctx.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kafkadev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "127.0.0.1", "address the brokers listen on and advertise (the partition harness gives each role a network namespace of its own)")
	port := fs.Int("port", 9092, "port of the first broker on --host (the others take the next ones); 0: any free port")
	brokers := fs.Int("brokers", 1, "number of brokers (svcd's journal needs --kafka-dev below 3)")
	dataDir := fs.String("data-dir", "", "keep the topics in this folder across restarts (fsync per produce); empty: memory only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *brokers < 1 || *port < 0 || *port > 65535-*brokers {
		return errors.New("--brokers must be at least 1 and --port a free port")
	}
	if net.ParseIP(*host) == nil {
		return fmt.Errorf("--host %q: want an IP address", *host)
	}
	opts := []kfake.Opt{kfake.NumBrokers(*brokers), kfake.DefaultNumPartitions(1)}
	if *host != "127.0.0.1" {
		// kfake listens on 127.0.0.1; the listener's address is what it advertises.
		opts = append(opts, kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(*host, p))
		}))
	}
	if *port != 0 {
		ports := make([]int, *brokers)
		for i := range ports {
			ports[i] = *port + i
		}
		opts = append(opts, kfake.Ports(ports...))
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir), kfake.SyncWrites())
	}
	fmt.Fprintln(stderr, banner)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("starting kfake: %w", err)
	}
	defer c.Close()
	fmt.Fprintln(stdout, strings.Join(c.ListenAddrs(), ","))
	fmt.Fprintf(stderr, "kafkadev: %d broker(s) on %s (DEVELOPMENT ONLY); stop with Ctrl-C or SIGTERM\n", *brokers, strings.Join(c.ListenAddrs(), ","))
	<-ctx.Done()
	fmt.Fprintln(stderr, "kafkadev: stopping")
	return nil
}
