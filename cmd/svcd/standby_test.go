package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"svc/persistence/postgres/pgtest"
)

// TestStandbyTakesOver: a second svcd with --engine-standby waits for the engine lease
// instead of refusing, follows the Kafka topic meanwhile but serves nothing, and when the first
// one stops takes over with every acknowledged order.
func TestStandbyTakesOver(t *testing.T) {
	if testing.Short() {
		t.Skip("two servers and a kfake broker")
	}
	_, dbURL := pgtest.New(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kafka := []string{"--journal", "kafka", "--kafka-brokers", strings.Join(c.ListenAddrs(), ","), "--kafka-dev", "--demo"}
	baseA, outA, stopA := startSvcd(t, dbURL, kafka...)
	key := demoKeyLine.FindStringSubmatch(outA.String())
	if key == nil {
		t.Fatalf("no demo key:\n%s", outA.String())
	}
	call := func(base, method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("X-Api-Key", key[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := call(baseA, "POST", "/v1/trading/orders", `{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"10","price":"1500"}`)
	if code != 201 {
		t.Fatalf("order on the leader: %d %s", code, body)
	}
	var placed struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &placed); err != nil || placed.Data.ID == "" {
		t.Fatalf("order answer %s", body)
	}

	// The standby: same database and topic, its own address and folders.
	addrB := freeAddr(t)
	dir := t.TempDir()
	var outB safeBuffer
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	doneB := make(chan error, 1)
	go func() {
		doneB <- run(ctxB, append([]string{"--addr", addrB, "--database-url", dbURL, "--journal-dir", dir + "/journal",
			"--snapshot-dir", dir + "/snapshots", "--access-log=false", "--webhook-allow-insecure", "--engine-lease-ttl", "2s",
			"--engine-standby"}, kafka[:len(kafka)-1]...), func(string) string { return "" }, &outB, &outB)
	}()
	baseB := "http://" + addrB
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(outB.String(), "engine standby: waiting") {
		if time.Now().After(deadline) {
			t.Fatalf("standby did not wait:\n%s", outB.String())
		}
		select {
		case err := <-doneB:
			t.Fatalf("standby stopped: %v\n%s", err, outB.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if resp, err := http.Get(baseB + "/health"); err == nil {
		resp.Body.Close()
		t.Fatal("the standby serves while it waits")
	}

	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for {
		resp, err := http.Get(baseB + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Since(stopped) > 60*time.Second {
			t.Fatalf("standby did not take over:\n%s", outB.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("standby ready %v after the leader stopped (clean release, load-dependent)", time.Since(stopped).Round(time.Millisecond))
	if code, body := call(baseB, "GET", "/v1/trading/orders/"+placed.Data.ID, ""); code != 200 || !strings.Contains(body, `"OPEN"`) {
		t.Fatalf("the leader's order on the new engine: %d %s", code, body)
	}
	cancelB()
	if err := <-doneB; err != nil {
		t.Fatalf("standby run: %v", err)
	}
}
