package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"svc/cluster/enginerpc"
	"svc/engine"
	"svc/persistence/postgres/pgtest"
)

// TestDeposedEngineOfAPairExits (issue 29): an engine of a pair (--engine-standby) whose
// lease another engine took (as after a partition from PostgreSQL or a pause longer than
// the lease) closes its engine RPC at once, so the gateways move to the new leader, and
// exits with the cause, so its supervisor restarts it as the standby. Before, it stayed up
// holding its clients' connections and answering them ENGINE_UNAVAILABLE for ever.
func TestDeposedEngineOfAPairExits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an engine on kfake")
	}
	pool, dbURL := pgtest.New(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	rpcAddr := freeAddr(t)
	dir := t.TempDir()
	var out safeBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", freeAddr(t), "--database-url", dbURL, "--roles", "engine", "--engine-standby",
			"--engine-listen", "sandbox=" + rpcAddr + ",live=" + freeAddr(t), "--journal", "kafka",
			"--kafka-brokers", strings.Join(kc.ListenAddrs(), ","), "--kafka-dev", "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--engine-lease-ttl", "2s"},
			func(string) string { return "" }, &out, &out)
	}()
	c, err := enginerpc.Dial(rpcAddr, enginerpc.Options{ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(60 * time.Second)
	for c.Ping(context.Background()) != nil {
		select {
		case err := <-done:
			t.Fatalf("svcd stopped: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine not serving:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Another engine takes the sandbox lease.
	if _, err := pool.Exec(context.Background(), `update engine_leases set epoch = epoch + 1, holder = 'the new leader'
		where environment = 'sandbox'`); err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "engine lease lost") {
			t.Fatalf("svcd ended with %v, want the lost lease", err)
		}
		t.Logf("exited %v after the takeover: %v", time.Since(taken).Round(time.Millisecond), err)
	case <-time.After(15 * time.Second):
		t.Fatalf("the deposed engine still runs 15 s after another took its lease:\n%s", out.String())
	}
	if conn, err := net.DialTimeout("tcp", rpcAddr, time.Second); err == nil {
		conn.Close()
		t.Fatal("the deposed engine's RPC still accepts connections")
	}
	if err := c.Ping(context.Background()); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("ping after the exit: %v", err)
	}
}
