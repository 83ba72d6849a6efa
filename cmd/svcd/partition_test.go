//go:build linux

package main

// Partition test (issue 29): the cluster in network namespaces (cluster/nemesis), one per
// role: PostgreSQL, the three-broker development Kafka (kafkadev), engine leader and
// standby, two gateways, and the clients (this test, re-executed inside its namespace).
// Under order load through both gateways, a nemesis cuts leader<->PostgreSQL,
// leader<->Kafka, gateway<->engines and standby<->Kafka with nftables rules, pauses the
// leader (SIGSTOP) for longer than its lease, and heals after each. A supervisor restarts an
// engine that exits (an engine of a pair exits once it can no longer serve) as the standby.
// The checker (partition_check_test.go) then reads the recorded history and the journal.
//
// Root only; it skips and says why otherwise. `make test-partitions` runs it (the faults
// once each, under 3 minutes); SVC_PARTITION_SOAK=10m (make soak-partitions) repeats them
// in random order for that long. SVC_PARTITION_KEEP=1 keeps the logs in
// /var/tmp/svc-partitions-<pid>.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/cluster/nemesis"
)

const partitionChildEnv = "SVC_PARTITION_CHILD"

// partitionRoles: role i is 198.18.i.2 (nemesis).
var partitionRoles = []string{"pg", "kafka", "engine-a", "engine-b", "gw-1", "gw-2", "client"}

// partitionPlan is what the parent hands the child it runs inside the client namespace.
type partitionPlan struct {
	Prefix  string
	NFT     string
	Roles   []string
	Bin     string // svcd, kafkadev
	PGBin   string // postgres, initdb
	Work    string // data and logs, reachable by the postgres user
	Soak    time.Duration
	TTL     time.Duration
	Seed    uint64
	Started time.Time
}

func TestPartitions(t *testing.T) {
	if v := os.Getenv(partitionChildEnv); v != "" {
		var plan partitionPlan
		if err := json.Unmarshal([]byte(v), &plan); err != nil {
			t.Fatal(err)
		}
		runPartitions(t, plan)
		return
	}
	if testing.Short() {
		t.Skip("partition test: namespaces, PostgreSQL, Kafka and four svcd; skipped with -short")
	}
	nft := findNFT()
	if err := nemesis.Available(nft); err != nil {
		t.Skipf("partition test skipped: %v", err)
	}
	pgBin := findPGBin()
	if pgBin == "" {
		t.Skip("partition test skipped: PostgreSQL server binaries (postgres, initdb) not found (.ci/pg installs them as root)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("partition test skipped: setpriv (util-linux) not found")
	}
	if gone := nemesis.CleanStale(); len(gone) > 0 {
		t.Logf("removed the namespaces of a killed run: %v", gone)
	}
	soak := time.Duration(0)
	if v := os.Getenv("SVC_PARTITION_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SVC_PARTITION_SOAK=%q: %v", v, err)
		}
		soak = d
	}
	bin := t.TempDir()
	buildBinaries(t, bin)
	if out, err := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "svc/cmd/kafkadev").CombinedOutput(); err != nil {
		t.Fatalf("go build kafkadev: %v\n%s", err, out)
	}
	// The data of a killed run (its namespaces went with CleanStale).
	if dirs, _ := filepath.Glob("/var/tmp/svc-partitions-[0-9]*"); len(dirs) > 0 {
		for _, d := range dirs {
			if _, err := os.Stat("/proc/" + strings.TrimPrefix(d, "/var/tmp/svc-partitions-")); err != nil {
				_ = os.RemoveAll(d)
			}
		}
	}
	work := fmt.Sprintf("/var/tmp/svc-partitions-%d", os.Getpid())
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("SVC_PARTITION_KEEP") == "" && !t.Failed() {
			_ = os.RemoveAll(work)
		} else {
			t.Logf("logs kept in %s", work)
		}
	})
	n, err := nemesis.New(nemesis.Prefix(), nft, partitionRoles)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close() // kills whatever still runs in the namespaces
	plan := partitionPlan{Prefix: nemesis.Prefix(), NFT: nft, Roles: partitionRoles, Bin: bin, PGBin: pgBin, Work: work,
		Soak: soak, TTL: 2 * time.Second, Seed: uint64(time.Now().UnixNano()), Started: time.Now()}
	b, _ := json.Marshal(plan)
	// The faults take about a minute (75 s with the build on a loaded 2-core machine); the
	// bound is generous so that `make test`, running every package at once, does not flake.
	budget := 4 * time.Minute
	if soak > 0 {
		budget = soak + 3*time.Minute
	}
	child := n.Command("client", os.Args[0], "-test.run=^TestPartitions$", "-test.v", "-test.count=1",
		"-test.timeout="+budget.String())
	child.Env = append(baseEnv(), partitionChildEnv+"="+string(b))
	for _, k := range []string{"SVC_PARTITION_ONLY", "SVC_PARTITION_KEEP"} {
		if v := os.Getenv(k); v != "" {
			child.Env = append(child.Env, k+"="+v)
		}
	}
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	t.Logf("namespaces %v; the run continues inside %s (budget %v)", n.Names(), n.NS("client"), budget)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the partition run failed (%v): see its output above", err)
		}
	case <-time.After(budget + 15*time.Second):
		_ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("the partition run did not end within %v", budget+15*time.Second)
	}
}

func findNFT() string {
	if p, err := exec.LookPath("nft"); err == nil {
		return p
	}
	if out, err := exec.Command("../../.ci/nft", "path").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

func findPGBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Sort(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
				return dirs[i]
			}
		}
	}
	return ""
}

// pproc is one process of the cluster in its namespace, restarted by the supervisor when
// it exits (if supervised).
type pproc struct {
	name, role string
	bin        string
	args       []string
	env        []string
	n          *nemesis.Net
	logPath    string

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	startedAt time.Time
	starts    int
	lines     []string // the last lines of output
	waiting   int      // "engine standby: waiting" lines since the last start (one per environment)
	stopped   bool     // by the test: no restart
}

func (p *pproc) start(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := p.n.Command(p.role, p.bin, p.args...)
	cmd.Env = p.env
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	pw.Close()
	p.starts++
	fmt.Fprintf(f, "=== start %d at %s\n", p.starts, time.Now().Format(time.RFC3339Nano))
	p.cmd, p.exited, p.startedAt, p.waiting = cmd, make(chan struct{}), time.Now(), 0
	exited := p.exited
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(f, line)
			p.mu.Lock()
			p.lines = append(p.lines, line)
			if strings.Contains(line, "engine standby: waiting") {
				p.waiting++
			}
			if len(p.lines) > 300 {
				p.lines = p.lines[len(p.lines)-200:]
			}
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		fmt.Fprintf(f, "=== exited: %v\n", cmd.ProcessState)
		f.Close()
		pr.Close()
		close(exited)
	}()
}

func (p *pproc) alive() bool {
	p.mu.Lock()
	ch := p.exited
	p.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

func (p *pproc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *pproc) signal(sig syscall.Signal) {
	if pid := p.pid(); pid != 0 {
		_ = syscall.Kill(pid, sig)
	}
}

// stop SIGTERMs it (SIGKILL after 10 s) and waits; the supervisor leaves it down.
func (p *pproc) stop() {
	p.mu.Lock()
	p.stopped = true
	ch := p.exited
	p.mu.Unlock()
	if ch == nil {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGTERM)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		p.signal(syscall.SIGKILL)
		<-ch
	}
}

func (p *pproc) logged(substr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.lines, func(l string) bool { return strings.Contains(l, substr) })
}

func (p *pproc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines[max(0, len(p.lines)-n):], "\n")
}

// cluster is the running harness inside the client namespace.
type pcluster struct {
	t       *testing.T
	plan    partitionPlan
	n       *nemesis.Net
	pool    *pgxpool.Pool
	engines []*pproc // engine-a, engine-b
	gws     []*pproc
	hc      *http.Client
}

func (c *pcluster) url(role string, port int) string {
	return fmt.Sprintf("http://%s:%d", c.n.Addr(role), port)
}

func (c *pcluster) ready(role string, port int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url(role, port)+"/ready", nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leader is the engine that answers /ready (the lease holder), or nil.
func (c *pcluster) leader() *pproc {
	for _, e := range c.engines {
		if e.alive() && c.ready(e.role, 8090) {
			return e
		}
	}
	return nil
}

// standbyWaiting: p runs and waits for both environments' leases.
func (c *pcluster) standbyWaiting(p *pproc) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting >= 2
}

func (c *pcluster) other(e *pproc) *pproc {
	if e == c.engines[0] {
		return c.engines[1]
	}
	return c.engines[0]
}

// supervise restarts an engine or gateway that exited (as systemd would), until ctx ends.
func (c *pcluster) supervise(ctx context.Context) {
	for ctx.Err() == nil {
		for _, p := range append(slices.Clone(c.engines), c.gws...) {
			p.mu.Lock()
			down := p.exited != nil && !p.stopped
			ch := p.exited
			p.mu.Unlock()
			if !down {
				continue
			}
			select {
			case <-ch:
				c.t.Logf("supervisor: %s exited; restarting it (start %d)", p.name, p.starts+1)
				p.start(c.t)
			default:
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func runPartitions(t *testing.T, plan partitionPlan) {
	n := nemesis.Attach(plan.Prefix, plan.NFT, plan.Roles)
	c := &pcluster{t: t, plan: plan, n: n, hc: &http.Client{Timeout: 8 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	var all []*pproc
	defer func() {
		for i := len(all) - 1; i >= 0; i-- {
			all[i].stop()
		}
		if t.Failed() {
			for _, p := range all {
				t.Logf("--- %s (%d starts), last lines:\n%s", p.name, p.starts, p.tail(40))
			}
		}
	}()
	started := time.Now()

	// PostgreSQL, from a template data folder made once per machine.
	pgAddr := n.Addr("pg")
	pgDir := filepath.Join(plan.Work, "pg")
	preparePG(t, plan.PGBin, pgDir)
	pg := &pproc{name: "postgres", role: "pg", bin: "setpriv", n: n, logPath: filepath.Join(plan.Work, "postgres.log"),
		args: []string{"--reuid=postgres", "--regid=postgres", "--init-groups", "--", filepath.Join(plan.PGBin, "postgres"),
			"-D", pgDir, "-k", pgDir, "-p", "5432", "-c", "listen_addresses=" + pgAddr, "-c", "fsync=off",
			"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=150", "-c", "shared_buffers=32MB"}}
	pg.start(t)
	all = append(all, pg)
	adminURL := fmt.Sprintf("postgres://postgres@%s:5432/postgres?sslmode=disable", pgAddr)
	dbURL := fmt.Sprintf("postgres://postgres@%s:5432/svc?sslmode=disable", pgAddr)
	waitFor(t, 60*time.Second, "PostgreSQL in its namespace", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return false
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, `create database svc`)
		return true
	})

	// Kafka: kafkadev's three brokers.
	kafka := &pproc{name: "kafkadev", role: "kafka", bin: filepath.Join(plan.Bin, "kafkadev"), n: n,
		logPath: filepath.Join(plan.Work, "kafkadev.log"), args: []string{"--host", n.Addr("kafka"), "--port", "9092", "--brokers", "3"}}
	kafka.start(t)
	all = append(all, kafka)
	ka := n.Addr("kafka")
	brokers := fmt.Sprintf("%s:9092,%s:9093,%s:9094", ka, ka, ka)
	waitFor(t, 30*time.Second, "kafkadev", func() bool { return kafka.logged(ka + ":9092") })

	env := append(baseEnv(), "SVC_JWT_SECRET="+strings.Repeat("partition-secret-", 3))
	common := []string{"--database-url", dbURL, "--journal", "kafka", "--kafka-brokers", brokers, "--kafka-topic", "partitions",
		"--log-format", "text", "--access-log=false", "--shutdown-timeout", "5s", "--webhook-allow-insecure",
		"--engine-lease-ttl", plan.TTL.String()}
	for _, role := range []string{"engine-a", "engine-b"} {
		a := n.Addr(role)
		dir := filepath.Join(plan.Work, role)
		e := &pproc{name: role, role: role, bin: filepath.Join(plan.Bin, "svcd"), n: n, env: env, logPath: dir + ".log",
			args: append(slices.Clone(common), "--roles=engine", "--engine-standby", "--addr", a+":8090",
				"--engine-listen", fmt.Sprintf("sandbox=%s:7101,live=%s:7102", a, a),
				"--snapshot-dir", filepath.Join(dir, "snapshots"), "--journal-dir", filepath.Join(dir, "journal"), "--snapshot-every", "2s")}
		c.engines = append(c.engines, e)
		all = append(all, e)
	}
	c.engines[0].start(t)
	waitFor(t, 90*time.Second, "engine-a ready", func() bool { return c.ready("engine-a", 8090) })
	c.engines[1].start(t)
	waitFor(t, 60*time.Second, "engine-b waiting as the standby", func() bool { return c.standbyWaiting(c.engines[1]) })
	ea, eb := n.Addr("engine-a"), n.Addr("engine-b")
	engineAddr := fmt.Sprintf("sandbox=%s:7101|%s:7101,live=%s:7102|%s:7102", ea, eb, ea, eb)
	for _, role := range []string{"gw-1", "gw-2"} {
		g := &pproc{name: role, role: role, bin: filepath.Join(plan.Bin, "svcd"), n: n, env: env,
			logPath: filepath.Join(plan.Work, role+".log"),
			args: append(slices.Clone(common), "--roles=gateway", "--addr", n.Addr(role)+":8080", "--engine-addr", engineAddr,
				"--snapshot-dir", filepath.Join(plan.Work, role, "snapshots"), "--journal-dir", filepath.Join(plan.Work, role, "journal"))}
		g.start(t)
		c.gws = append(c.gws, g)
		all = append(all, g)
	}
	for _, g := range c.gws {
		waitFor(t, 60*time.Second, g.name+" ready", func() bool { return c.ready(g.role, 8080) })
	}
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c.pool = pool
	t.Logf("cluster up in %v: PostgreSQL %s, kafkadev %s, engines %s (leader) and %s (standby), gateways %s and %s; lease TTL %v",
		time.Since(started).Round(time.Millisecond), pgAddr, brokers, ea, eb, n.Addr("gw-1"), n.Addr("gw-2"), plan.TTL)

	superCtx, stopSuper := context.WithCancel(context.Background())
	superDone := make(chan struct{})
	go func() { defer close(superDone); c.supervise(superCtx) }()

	h := newHistory(c, plan.Seed)
	h.fund(t)
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, cl := range h.clients {
		wg.Add(1)
		go func() { defer wg.Done(); cl.loop(loadCtx, h) }()
	}

	faults := partitionFaults(c)
	rng := rand.New(rand.NewPCG(plan.Seed, 7))
	var order []pfault
	if plan.Soak > 0 {
		choices := append(slices.Clone(faults), soakFaults(c)...)
		if only := os.Getenv("SVC_PARTITION_ONLY"); only != "" { // one kind of fault, to study it
			choices = slices.DeleteFunc(choices, func(f pfault) bool { return !strings.Contains(f.name, only) })
		}
		for until := time.Now().Add(plan.Soak); time.Now().Before(until); {
			f := choices[rng.IntN(len(choices))]
			c.runFault(h, f)
			order = append(order, f)
		}
	} else {
		for _, f := range faults {
			c.runFault(h, f)
			order = append(order, f)
		}
	}
	time.Sleep(time.Second) // load after the last heal too
	stopLoad()
	wg.Wait()
	stopSuper()
	<-superDone
	c.waitSteady(h)

	// The final state through the API, then everything stopped before the journal is read.
	apiBalances := h.balances(t)
	gatewaysAndEngines := append(slices.Clone(c.gws), c.engines...)
	for _, p := range gatewaysAndEngines {
		p.stop()
	}
	checkPartitionHistory(t, h, pool, brokers, "partitions-sandbox", apiBalances)
	t.Logf("partition run: %v in all (load %s)", time.Since(plan.Started).Round(time.Second), loadAvg())
}

// preparePG makes dir a copy of a template cluster (initdb once per machine and version).
func preparePG(t *testing.T, pgBin, dir string) {
	t.Helper()
	if err := exec.Command("id", "postgres").Run(); err != nil {
		if out, err := exec.Command("useradd", "--system", "--home-dir", "/var/lib/postgresql", "--shell", "/bin/bash", "postgres").CombinedOutput(); err != nil {
			t.Fatalf("useradd postgres: %v %s", err, out)
		}
	}
	tmpl := "/var/tmp/svc-partitions-pg-template-" + filepath.Base(filepath.Dir(pgBin))
	if _, err := os.Stat(filepath.Join(tmpl, "PG_VERSION")); err != nil {
		tmp := fmt.Sprintf("%s.%d", tmpl, os.Getpid())
		_ = os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chown", "postgres:", tmp).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		out, err := exec.Command("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
			filepath.Join(pgBin, "initdb"), "-D", tmp, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput()
		if err != nil {
			t.Fatalf("initdb: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, tmpl); err != nil && !os.IsExist(err) {
			_ = os.RemoveAll(tmp) // another run made it meanwhile
		}
	}
	if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the PostgreSQL template: %v %s", err, out)
	}
	_ = os.Remove(filepath.Join(dir, "postmaster.pid"))
	// Trust the harness's addresses only: they exist nowhere but in its namespaces.
	hba := "local all all trust\nhost all all 198.18.0.0/15 trust\n"
	if err := os.WriteFile(filepath.Join(dir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "postgres:", filepath.Join(dir, "pg_hba.conf")).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
