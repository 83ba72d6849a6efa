package main

// Failover test (issue 18, item 7): a leader svcd and an --engine-standby svcd on one
// database and one Kafka journal (kfake on 127.0.0.1); clients place and cancel orders on
// the leader, the leader is SIGKILLed mid-load, the clients move to the standby. Checked:
// the standby, which followed the journal while it waited (a hot standby), takes over from its
// copy of the engine (kill -> /ready 200 and kill -> first 201 are logged), every order
// the leader acknowledged is on the new leader in a state consistent with what its client
// saw, and once in the journal and the projection; balances are conserved and equal those
// of a from-scratch replay of the journal (the crash test's checks, crash_test.go).
// A second engine without --engine-standby is refused: TestOneEnginePerDatabase.
//
// SVC_FAILOVER_RUNS sets the number of failovers (default 1); the timings' median is logged.
// SVC_FAILOVER_TTL sets --engine-lease-ttl (default 2s; svcd's default is lease.DefaultTTL).
// SVC_FAILOVER_LOG=1 prints the standby's output up to its takeover.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kfake"

	"svc/gateway/auth/authtest"
	"svc/persistence/postgres/pgtest"
	"svc/testport"
)

func TestFailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("failover test: builds svcd, runs a leader and a standby, SIGKILLs the leader under load; skipped with -short")
	}
	runs := 1
	if s := os.Getenv("SVC_FAILOVER_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("SVC_FAILOVER_RUNS=%q: want a positive integer", s)
		}
		runs = v
	}
	bin := t.TempDir()
	buildBinaries(t, bin)
	var ready, first []time.Duration
	for i := 0; i < runs; i++ {
		t.Run(fmt.Sprintf("run %d", i+1), func(t *testing.T) {
			r, f := runFailover(t, filepath.Join(bin, "svcd"), uint64(time.Now().UnixNano()))
			ready, first = append(ready, r), append(first, f)
		})
	}
	if len(ready) > 0 {
		median := func(d []time.Duration) time.Duration {
			s := slices.Clone(d)
			slices.Sort(s)
			return s[len(s)/2]
		}
		t.Logf("%d failovers: kill -> /ready %v (median %v); kill -> first 201 %v (median %v)",
			len(ready), ready, median(ready), first, median(first))
	}
}

// startStandby runs svcd with --engine-standby and returns once it logs that it waits for
// the lease. It does not print a demo key nor answer HTTP until it takes over.
func startStandby(t *testing.T, p *svcdProc, addr string) {
	t.Helper()
	p.runs++
	cmd := exec.Command(p.bin, append([]string{"--addr", addr}, p.args...)...)
	cmd.Env = p.env
	cmd.Stdout = &lineSink{p: p, run: p.runs, key: make(chan string, 1)}
	cmd.Stderr = &lineSink{p: p, run: p.runs, key: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start standby: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	p.mu.Lock()
	p.base = "http://" + addr
	p.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p.logMu.Lock()
		waiting := slices.ContainsFunc(p.log, func(l string) bool { return strings.Contains(l, "engine standby: waiting") })
		p.logMu.Unlock()
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			p.fail("standby did not wait for the lease within 60s")
		}
		select {
		case <-exited:
			p.fail("standby exited (%v)", cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runFailover does one failover and returns kill -> /ready and kill -> first 201.
func runFailover(t *testing.T, svcd string, seed uint64) (toReady, toFirst201 time.Duration) {
	pool, dbURL := pgtest.New(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	defer kc.Close()
	jc := crashJournal{kind: "kafka", brokers: kc.ListenAddrs(), topic: "failover"}
	ttl := "2s"
	if v := os.Getenv("SVC_FAILOVER_TTL"); v != "" {
		ttl = v
	}
	// No sandbox market maker: the clients' balances are conserved among themselves.
	common := []string{"--database-url", dbURL, "--access-log=false", "--log-format", "text", "--sandbox-market-maker=false",
		"--shutdown-timeout", "5s", "--engine-lease-ttl", ttl, "--snapshot-every", "250ms",
		"--journal", "kafka", "--kafka-brokers", strings.Join(jc.brokers, ","), "--kafka-topic", jc.topic, "--kafka-dev"}
	dirA, dirB := t.TempDir(), t.TempDir()
	leader := &svcdProc{t: t, bin: svcd, env: baseEnv(), args: append(slices.Clone(common), "--demo",
		"--snapshot-dir", filepath.Join(dirA, "snapshots"), "--journal-dir", filepath.Join(dirA, "journal"))}
	standby := &svcdProc{t: t, bin: svcd, env: baseEnv(), args: append(slices.Clone(common), "--engine-standby",
		"--snapshot-dir", filepath.Join(dirB, "snapshots"), "--journal-dir", filepath.Join(dirB, "journal"))}
	t.Cleanup(func() {
		for _, p := range []*svcdProc{leader, standby} {
			if p.cmd != nil {
				p.kill()
			}
			if t.Failed() {
				p.dumpLog()
			}
		}
	})

	var clients []*crashClient
	for i := 0; i < 3; i++ {
		m := authtest.New(t, pool)
		key := m.SandboxKey
		clients = append(clients, &crashClient{name: fmt.Sprintf("m%d", i), id: m.ID, key: func() string { return key }})
	}
	probeM := authtest.New(t, pool)
	probe := &crashClient{name: "probe", id: probeM.ID, key: func() string { return probeM.SandboxKey }, acked: map[string]*seenOrder{}}

	startup := leader.start()
	startStandby(t, standby, fmt.Sprintf("127.0.0.1:%d", testport.Free(t)))
	t.Logf("leader up in %s; standby waiting", startup.Round(time.Millisecond))

	// The clients talk to front: the leader, then the standby from the kill on.
	front := &svcdProc{}
	leaderBase, _ := leader.current()
	front.base = leaderBase
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	funded := fundClients(t, append(slices.Clone(clients), probe), hc, front)

	rng := rand.New(rand.NewPCG(seed, 0))
	ctx, stopClients := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, c := range clients {
		c.rng = rand.New(rand.NewPCG(seed, uint64(i+1)))
		wg.Add(1)
		go func() { defer wg.Done(); c.loop(ctx) }()
	}
	time.Sleep(time.Duration(1500+rng.IntN(1500)) * time.Millisecond)
	leader.kill()
	killed := time.Now()
	standbyBase, _ := standby.current()
	front.mu.Lock()
	front.base = standbyBase
	front.mu.Unlock()

	// kill -> first 201: the probe places a resting order every 50 ms on the standby.
	firstCh := make(chan time.Duration, 1)
	go func() {
		for time.Since(killed) < 60*time.Second {
			status, body, err := probe.do(http.MethodPost, "/v1/trading/orders", map[string]any{"symbol": "USDT-NGN", "side": "buy",
				"type": "limit", "price": "1000.00", "quantity": "1.00", "client_order_id": "probe-" + uuid.NewString()})
			if err == nil && status == http.StatusCreated {
				d := time.Since(killed)
				var o orderJSONView
				decodeBody(body, &o)
				probe.acked[o.ID] = &seenOrder{symbol: o.Symbol, status: o.Status, filled: o.FilledQuantity, qty: o.Quantity}
				firstCh <- d
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		firstCh <- -1
	}()
	for {
		resp, err := http.Get(standbyBase + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-standby.exited:
			standby.fail("standby exited after the leader's death (%v)", standby.cmd.ProcessState)
		default:
		}
		if time.Since(killed) > 60*time.Second {
			standby.fail("standby not ready 60s after the leader's death")
		}
		time.Sleep(20 * time.Millisecond)
	}
	toReady = time.Since(killed)
	toFirst201 = <-firstCh
	if toFirst201 < 0 {
		standby.fail("no order acknowledged by the standby within 60s of the leader's death")
	}
	t.Logf("leader killed; standby ready in %v, first 201 in %v",
		toReady.Round(time.Millisecond), toFirst201.Round(time.Millisecond))
	// The standby followed the journal while it waited: the new engine starts from its copy
	// and replays only what the leader wrote after the copy's last poll.
	standby.logMu.Lock()
	i := slices.IndexFunc(standby.log, func(l string) bool {
		return strings.Contains(l, "exchange recovered") && strings.Contains(l, "env=sandbox")
	})
	var recovered string
	if i >= 0 {
		recovered = standby.log[i]
	}
	standby.logMu.Unlock()
	if !strings.Contains(recovered, "from=standby") {
		t.Errorf("the standby did not take over from its hot copy: %q", recovered)
	}
	t.Logf("takeover: %s", recovered)
	if toReady > 5*time.Second {
		t.Logf("NOTE: takeover took more than the issue's 5 s on this machine (load %s)", loadAvg())
	}
	if os.Getenv("SVC_FAILOVER_LOG") != "" {
		standby.dumpLog() // where the takeover's time goes
	}
	time.Sleep(time.Second) // load on the new leader too
	stopClients()
	wg.Wait()

	var placed, cancelled, unknown, rejected int
	for _, c := range append(slices.Clone(clients), probe) {
		placed += len(c.acked)
		unknown += c.unknown
		rejected += c.rejected
		for _, o := range c.acked {
			if o.cancelAcked {
				cancelled++
			}
		}
		for _, e := range c.errs {
			t.Errorf("client %s: %s", c.name, e)
		}
	}
	t.Logf("%d orders acknowledged (201), %d cancels (200), %d requests without an answer, %d refused (422/429/503)",
		placed, cancelled, unknown, rejected)
	if placed < 20 {
		t.Fatalf("only %d orders acknowledged: the load did not run", placed)
	}
	all := append(slices.Clone(clients), probe)

	// 1. Every acknowledged order (the leader's and the new leader's), by id, on the new leader.
	final := map[string]orderJSONView{}
	for _, c := range all {
		for id, seen := range c.acked {
			status, body, err := c.do(http.MethodGet, "/v1/trading/orders/"+id, nil)
			if err != nil || status != http.StatusOK {
				t.Errorf("LOST: %s's order %s (201 with %s): GET %d %v %s", c.name, id, seen.status, status, err, body)
				continue
			}
			var got orderJSONView
			decodeData(t, body, &got)
			if msg := seen.consistent(got); msg != "" {
				t.Errorf("%s's order %s: %s", c.name, id, msg)
			}
			final[id] = got
		}
	}

	// 2. Balances conserved, none negative.
	apiBalances := checkBalances(t, all, funded, "after the failover")

	// 3. Projection, then the journal: each acknowledged order accepted once (none twice),
	// trades once, and a from-scratch replay gives the API's balances.
	position := waitProjectionStable(t, pool)
	standby.stop()
	checkProjection(t, pool, all, final)
	jn := openCrashJournal(t, jc, "")
	if last := jn.LastOffset(); position != last {
		t.Errorf("projection position %d, journal last offset %d", position, last)
	}
	checkJournal(t, jn, all, apiBalances, pool)
	jn.Close()
	return toReady, toFirst201
}

// loadAvg is the first line of /proc/loadavg, for the log.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
