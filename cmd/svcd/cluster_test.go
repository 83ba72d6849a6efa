package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"svc/persistence/postgres/pgtest"
)

// clusterNode is one svcd started in this test process with run(), as its own "node".
type clusterNode struct {
	base string
	out  *safeBuffer
	stop func()
}

func startNode(t *testing.T, args ...string) *clusterNode {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &safeBuffer{}
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = run(ctx, append([]string{"--addr", addr, "--access-log=false", "--log-level=warn",
			"--jwt-secret", "cluster-test-secret-cluster-test-secret-0123"}, args...), func(string) string { return "" }, out, out)
	}()
	p := &clusterNode{base: "http://" + addr, out: out}
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case <-done:
			if runErr != nil && !t.Failed() {
				t.Errorf("svcd %v: %v", args, runErr)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("svcd %v did not stop", args)
		}
	}
	t.Cleanup(p.stop)
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(p.base + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-done:
			t.Fatalf("svcd %v stopped: %v\n%s", args, runErr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("svcd %v not ready:\n%s", args, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// call sends a JSON request with the API key and decodes the envelope's data.
func (p *clusterNode) call(t *testing.T, method, path, key string, body any, wantStatus int) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.base+path, rd)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s%s: %d %s, want %d", method, p.base, path, resp.StatusCode, raw, wantStatus)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(env.Data, &m) // some lists are arrays: "raw" is the data as sent
	if m == nil {
		m = map[string]any{}
	}
	m["raw"] = string(env.Data)
	return m
}

// TestTradingThroughGatewaysWithoutTheEngine runs a small cluster in one test process: an
// engine node (engine, projector, market data, workers on a file journal, serving the
// engine RPC) and two gateways without the engine. An order placed through the first
// gateway is read back, found in the history and cancelled through the second; a dead
// engine makes the gateways answer 503 at once.
func TestTradingThroughGatewaysWithoutTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three svcd")
	}
	_, dbURL := pgtest.New(t)
	dir := t.TempDir()
	listen := "sandbox=" + freeAddr(t) + ",live=" + freeAddr(t)
	engineNode := startNode(t, "--database-url", dbURL, "--roles", "engine,projector,marketdata,workers",
		"--engine-listen", listen, "--journal-dir", dir+"/journal", "--snapshot-dir", dir+"/snapshots", "--webhook-allow-insecure")
	remote := listen // the gateways call the engine node
	gw1 := startNode(t, "--database-url", dbURL, "--roles", "gateway", "--engine-addr", remote, "--demo", "--migrate=false")
	gw2 := startNode(t, "--database-url", dbURL, "--roles", "gateway", "--engine-addr", remote, "--migrate=false")

	m := regexp.MustCompile(`API key:\s+(\S+)`).FindStringSubmatch(gw1.out.String())
	if m == nil {
		t.Fatalf("no demo key in the first gateway's output:\n%s", gw1.out.String())
	}
	key := m[1]

	placed := gw1.call(t, "POST", "/v1/trading/orders", key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit",
		"quantity": "10", "price": "1500", "client_order_id": "cluster-1"}, 201)
	id, _ := placed["id"].(string)
	if id == "" || placed["status"] != "OPEN" {
		t.Fatalf("placed: %v", placed)
	}
	got := gw2.call(t, "GET", "/v1/trading/orders/"+id, key, nil, 200)
	if got["id"] != id || got["status"] != "OPEN" {
		t.Fatalf("read back through the second gateway: %v", got)
	}
	if got := gw2.call(t, "GET", "/v1/trading/orders/by-client-id/cluster-1", key, nil, 200); got["id"] != id {
		t.Fatalf("by client id: %v", got)
	}
	list := gw2.call(t, "GET", "/v1/trading/orders?symbol=USDT-NGN", key, nil, 200)
	if !strings.Contains(list["raw"].(string), id) {
		t.Fatalf("the history through the second gateway lacks the order: %v", list)
	}
	bal := gw2.call(t, "GET", "/v1/trading/balances", key, nil, 200)
	if !strings.Contains(bal["raw"].(string), `"locked":"15000.00"`) {
		t.Fatalf("balances through the second gateway: %v", bal)
	}
	cancelled := gw2.call(t, "DELETE", "/v1/trading/orders/"+id, key, nil, 200)
	if cancelled["status"] != "CANCELLED" {
		t.Fatalf("cancel through the second gateway: %v", cancelled)
	}
	if got := gw1.call(t, "GET", "/v1/trading/orders/"+id, key, nil, 200); got["status"] != "CANCELLED" {
		t.Fatalf("the first gateway sees %v", got)
	}
	// The engine goes away: the gateways answer 503 ENGINE_UNAVAILABLE promptly.
	engineNode.stop()
	start := time.Now()
	req, _ := http.NewRequest("POST", gw1.base+"/v1/trading/orders", bytes.NewReader([]byte(`{"symbol":"USDT-NGN","side":"buy","type":"limit","quantity":"10","price":"1500"}`)))
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	r, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 503 || !bytes.Contains(body, []byte("ENGINE_UNAVAILABLE")) || r.Header.Get("Retry-After") == "" {
		t.Fatalf("with the engine gone: %d %s (Retry-After %q)", r.StatusCode, body, r.Header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("503 took %v", d)
	}
}

// TestConsumerNodesFollowTheKafkaJournal runs the split cluster of `make cluster` in one
// test process on kfake: an engine node (engine only), a projector node, a market-data node
// and a gateway. An order placed through the gateway shows in the history (written by the
// projector node) and in the market-data node's order book (fed from the journal).
func TestConsumerNodesFollowTheKafkaJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four svcd and a Kafka cluster")
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	_, dbURL := pgtest.New(t)
	dir := t.TempDir()
	listen := "sandbox=" + freeAddr(t) + ",live=" + freeAddr(t)
	kafka := []string{"--journal=kafka", "--kafka-brokers=" + strings.Join(kc.ListenAddrs(), ","), "--kafka-dev",
		"--kafka-topic=cluster-test", "--database-url", dbURL, "--snapshot-dir", dir + "/snapshots"}
	startNode(t, append(kafka, "--roles", "engine", "--engine-listen", listen)...)
	startNode(t, append(kafka, "--roles", "projector", "--migrate=false")...)
	md := startNode(t, append(kafka, "--roles", "marketdata", "--engine-addr", listen, "--migrate=false")...)
	gw := startNode(t, append(kafka, "--roles", "gateway", "--engine-addr", listen, "--demo", "--migrate=false")...)

	m := regexp.MustCompile(`API key:\s+(\S+)`).FindStringSubmatch(gw.out.String())
	if m == nil {
		t.Fatalf("no demo key in the gateway's output:\n%s", gw.out.String())
	}
	key := m[1]
	placed := gw.call(t, "POST", "/v1/trading/orders", key, map[string]any{"symbol": "USDT-NGN", "side": "buy", "type": "limit",
		"quantity": "10", "price": "1234.56"}, 201)
	id, _ := placed["id"].(string)
	list := gw.call(t, "GET", "/v1/trading/orders?symbol=USDT-NGN", key, nil, 200)
	if !strings.Contains(list["raw"].(string), id) {
		t.Fatalf("the projector node's history lacks the order: %v", list)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		book := md.call(t, "GET", "/v1/trading/market/orderbook?symbol=USDT-NGN", key, nil, 200)
		if strings.Contains(fmt.Sprint(book["bids"]), "1234.56") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the market-data node's book lacks the bid after 10 s: %v", book)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get(md.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
